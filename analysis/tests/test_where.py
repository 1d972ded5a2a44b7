"""The family split of cachegrind's per-function counts (dispatchlab_analysis.where), on frames
made here: wasm3's operations by name, dlab's handlers by the family dlab wrote, and the table."""
import pandas as pd
import pytest

from dispatchlab_analysis import where


@pytest.mark.parametrize("function,family", [
    ("op_i32_Add_rs", "numeric"),
    ("op_u32_Divide_sr", "numeric"),
    ("op_f64_Convert_i32_r", "numeric"),
    ("op_i32_Load_i32_r", "memory"),
    ("op_i64_Store_i8_rs", "memory"),
    ("op_MemCopy", "memory"),
    ("op_BranchIf_r", "control"),
    ("op_Call", "control"),
    ("op_CallIndirect", "control"),
    ("op_Entry", "control"),
    ("op_Compile", "control"),
    ("op_SetSlot_i32", "stack_locals_globals"),
    ("op_PreserveCopySlot_64", "stack_locals_globals"),
    ("op_Const32", "stack_locals_globals"),
    ("op_Select_i32_rss", "stack_locals_globals"),
    ("op_TableGet", "tables"),
    ("m3_Call", "other"),
    ("memcpy", "other"),
    ("???", "other"),
])
def test_wasm3s_operations_get_the_family_of_their_main_operation(function, family):
    assert where.wasm3_family(function) == family


def frames():
    summary = pd.DataFrame({
        "case": ["crc32/tail_pn", "crc32/tail", "crc32/wasm3"],
        "params": ["dispatch=tail_pn;workload=crc32", "dispatch=tail;workload=crc32", "peer=wasm3;workload=crc32"],
    })
    functions = pd.DataFrame({
        "case": ["crc32/tail_pn"] * 3 + ["crc32/wasm3"] * 3 + ["crc32/tail"],
        "function": ["dlab::wasm::(anonymous namespace)::h_i32_xor(...)", "dlab::wasm::(anonymous namespace)::h_br_if(...)",
                     "memmove", "op_i32_Xor_rs", "op_BranchIf_r", "op_Entry", "dlab::wasm::(anonymous namespace)::h_i32_xor(...)"],
        "family": ["numeric", "control", "", "", "", "", "numeric"],
        "instructions": [60.0, 30.0, 10.0, 40.0, 40.0, 20.0, 500.0],
        "loads": [1.0] * 7, "stores": [6.0, 3.0, 1.0, 2.0, 2.0, 1.0, 9.0], "branches": [1.0] * 7, "mispredicts": [0.0] * 7,
    })
    return functions, summary


def test_each_engines_functions_are_summed_per_family_and_dlabs_engines_stay_apart():
    t = where.by_family(*frames()).set_index(["engine", "family"])["instructions"]
    assert t[("tail_pn", "numeric")] == 60 and t[("tail_pn", "control")] == 30 and t[("tail_pn", "other")] == 10
    assert t[("tail", "numeric")] == 500  # another engine of the same workload: not added to tail_pn's
    assert t[("wasm3", "numeric")] == 40 and t[("wasm3", "control")] == 60
    assert where.run_engines(frames()[1]) == ["tail_pn", "tail"] and where.run_peers(frames()[1]) == ["wasm3"]


def test_the_table_gives_ratios_and_each_familys_share_of_the_difference():
    text = where.family_markdown(where.by_family(*frames()), "wasm3", "tail_pn")
    assert "#### crc32 (dlab `tail_pn`)" in text
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| family")}
    assert rows["numeric"][:3] == ["60", "40", "1.5"]
    assert rows["numeric"][-1] == "+20.0%"  # (60 - 40) / 100
    assert rows["control"][-1] == "-30.0%"
    assert rows["**all**"][:3] == ["100", "100", "1"]


def test_a_row_of_a_case_the_summary_lacks_is_refused():
    functions, summary = frames()
    with pytest.raises(where.ResultFormatError):
        where.by_family(functions, summary.iloc[:1])


def test_the_command_asks_which_engine_when_the_run_has_several(tmp_path, capsys):
    functions, summary = frames()
    import json
    # A run directory of the schema's shape: the functions and summary tables with their sidecar.
    schema = {"functions": {"columns": [{"name": c} for c in functions.columns]},
              "summary": {"columns": [{"name": c} for c in summary.columns]}}
    (tmp_path / "x_valgrind.json").write_text(json.dumps({"schema": schema}))
    functions.to_csv(tmp_path / "x_valgrind.functions.csv", index=False)
    summary.to_csv(tmp_path / "x_valgrind.summary.csv", index=False)
    assert where.main([str(tmp_path), "--experiment", "x_valgrind"]) == 1
    assert "--engine must name one of the run's engines" in capsys.readouterr().err
    out = tmp_path / "t.md"
    assert where.main([str(tmp_path), "--experiment", "x_valgrind", "--engine", "tail", "--out", str(out)]) == 0
    assert "(dlab `tail`)" in out.read_text()
    assert "Where dlab `tail_pn` executes more than `wasm3`" in where.report_section(tmp_path, "x_valgrind")
    assert where.main([str(tmp_path), "--experiment", "x_valgrind", "--engine", "tail", "--out", str(out)]) == 1  # exists
    dangling = tmp_path / "link.md"
    dangling.symlink_to(tmp_path / "nowhere.md")
    assert where.main([str(tmp_path), "--experiment", "x_valgrind", "--engine", "tail", "--out", str(dangling)]) == 1
    assert not (tmp_path / "nowhere.md").exists()  # not written through the link
    assert where.main([str(tmp_path), "--experiment", "x_valgrind", "--engine", "tail", "--out", "/dev/null"]) == 1
