import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from dispatchlab_analysis import report, schema_doc


def test_report_has_fingerprint_protocol_counters_and_gaps(fixture_run):
    out = report.write_report(fixture_run)
    text = out.read_text()
    assert "## Machine" in text and "icx" in text
    assert "## Counter availability" in text
    assert "## Experiment `calibrate`" in text
    assert '"name": "interleaved-rounds-v1"' in text
    assert "Unavailable metrics" in text and "no hardware PMU" in text
    with pytest.raises(FileExistsError):  # never overwritten
        report.write_report(fixture_run)


def test_report_cli_reports_errors_without_a_traceback(tmp_path, capsys):
    assert report.main([str(tmp_path / "missing")]) == 1
    assert "report: error:" in capsys.readouterr().err


def test_schema_block_replacement():
    doc = f"intro\n{schema_doc.BEGIN}old\n{schema_doc.END}\nrest\n"
    assert schema_doc.replace_block(doc, "new\n") == f"intro\n{schema_doc.BEGIN}new\n{schema_doc.END}\nrest\n"
    with pytest.raises(ValueError):
        schema_doc.replace_block("no markers", "x")


def run(cmd):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)


def test_end_to_end_run_from_the_real_binary(dlab_bin, tmp_path):
    """What `just rfc` does, at a small size: the files exist, parse, and hold no made-up values."""
    run_dir = run([dlab_bin, "new-run", "--results", tmp_path]).stdout.strip()
    run([dlab_bin, "counters", "--run-dir", run_dir])
    run([dlab_bin, "calibrate", "--run-dir", run_dir, "--samples", "3", "--warmup", "1", "--iterations", "20000"])
    out = report.write_report(run_dir)
    from dispatchlab_analysis.results import load_run
    r = load_run(run_dir)
    counters = r.counters
    s = r.experiments["calibrate"].summary
    for row in s.itertuples():
        # Either a measured value with its spread, or empty with a reason: never both, never neither.
        if row.n == 0:
            assert row.unavailable_reason, row.metric
        else:
            assert not row.unavailable_reason and row.ci95_lo <= row.median <= row.ci95_hi, row.metric
    available = set(counters[counters.available].metric)
    assert {"task_clock", "tsc_ticks"} <= available
    # The cycle estimate is there exactly when that process's calibration passed its cross-check
    # (a busy machine can make the chains disagree; then it is absent, with the reason).
    tsc = json.loads((Path(run_dir) / "counters.json").read_text())["machine"]["tsc"]
    assert ("cycles_tsc_estimate" in available) == (tsc["core_cycles_per_tick_estimate"] is not None), tsc["estimate_refused"]
    assert out.exists()
    # The mispredict penalty: a number with its interval in cycles, or no number and why (never a default).
    penalty = json.loads((Path(run_dir) / "calibrate.json").read_text())["mispredict_penalty"]
    assert penalty["assumed_mispredicts_per_call"] == 15 / 16
    if "cycles_per_mispredict" in penalty:
        assert penalty["metric"] in ("cycles", "cycles_tsc_estimate")
        assert penalty["ci95_lo"] <= penalty["cycles_per_mispredict"] <= penalty["ci95_hi"]
    else:
        assert penalty["unavailable_reason"]
    assert "**Mispredict penalty**" in out.read_text()
    assert set(s["case"]) >= {"indirect_pattern", "indirect_random"}


def test_dlab_counters_json_names_a_reason_for_every_unavailable_metric(dlab_bin):
    data = json.loads(run([dlab_bin, "counters", "--json"]).stdout)
    rows = data["counters"]
    assert {r["metric"] for r in rows} >= {"cycles", "instructions", "memory_order_flushes", "task_clock", "tsc_ticks"}
    for r in rows:
        assert r["available"] or r["reason"], r
    by_metric = {}
    for r in rows:
        by_metric.setdefault(r["metric"], []).append(r)
    assert any(r["available"] for r in by_metric["task_clock"])
    assert any(r["available"] for r in by_metric["tsc_ticks"])
    # Without a kernel PMU every hardware metric says so first, whatever this CPU is and whatever
    # its catalog source maps (a source with no flush event included).
    selected = {m["metric"]: m for m in data["metrics"]}
    if data["no_pmu"]:
        assert data["no_pmu"].startswith("no hardware PMU")
        for metric in ("cycles", "instructions", "branch_mispredicts", "memory_order_flushes", "store_forward_blocks",
                       "pipeline_resyncs", "backend_bound", "frontend_bound"):
            assert not selected[metric]["available"], metric
            assert "no hardware PMU" in selected[metric]["reason"], selected[metric]
    # The cycle estimate is available, or unavailable with the reason (each process calibrates on its
    # own, and a busy machine can make its chains disagree: then there is no estimate).
    est = selected["cycles_tsc_estimate"]
    assert est["available"] or "calibration" in est["reason"], est
    machine = json.loads(run([dlab_bin, "machine", "--json"]).stdout)
    tsc = machine["tsc"]
    assert (tsc["core_cycles_per_tick_estimate"] is None) == bool(tsc["estimate_refused"])
    assert len(tsc["cross_check"]["chains"]) == 2


def test_dlab_models_drives_google_benchmark_over_the_grid(dlab_bin, tmp_path):
    run_dir = run([dlab_bin, "new-run", "--results", tmp_path]).stdout.strip()
    run([dlab_bin, "models", "--gbench", "--model", "stack", "--stack-copies", "1", "--statements", "64", "--mode-placements", "none",
         "--placements", "vec,sp", "--samples", "2",
         "--run-dir", run_dir])
    out = json.loads((Path(run_dir) / "models.gbench.json").read_text())
    names = {b["run_name"] for b in out["benchmarks"]}
    assert names == {"stack/vec/tail/x1/s64", "stack/sp/tail/x1/s64"}
    # harness metrics arrive as user counters per dispatch
    assert any("tsc_ticks/dispatch" in b for b in out["benchmarks"])


def test_report_lists_experiments_in_the_registrys_run_order_each_with_its_line(fixture_run):
    """The registry (tools/experiments.toml) orders the report's experiments as the recipes run them,
    an experiment of one's own (not in it) after them; each known one has the registry's line."""
    for name in ("aaa_mine", "wasm_dbinop"):
        for suffix in (".summary.csv", ".samples.csv", ".json"):
            shutil.copy(fixture_run / f"calibrate{suffix}", fixture_run / f"{name}{suffix}")
    text = report.render(report.load_run(fixture_run))
    heads = [text.index(f"## Experiment `{n}`") for n in ("calibrate", "wasm_dbinop", "aaa_mine")]
    assert heads == sorted(heads)
    assert "The harness self-check under the run protocol" in text
    after_mine = text[heads[2]:].split("\n", 2)[2]
    assert after_mine.startswith("Protocol "), "no registry line for an experiment the registry does not list"


def test_the_pace_table_divides_the_peers_time_by_dlabs_and_takes_the_geometric_mean():
    from dispatchlab_analysis.report import peer_pace_markdown
    md = peer_pace_markdown([("fib", "wasm3", 2.0, 3.0, 19.3, 1.9), ("crc32", "wasm3", 1.0, 4.0), ("fib", "node", 2.0, 1.0),
                             ("lz4", "node", 1.0, 1.0)])
    # the kernels are the superinstructions' selection set (profiled); the corpus's lz4 is held out
    assert "| fib | selection | wasm3 | 2 | 3 | 1.50 | 19.3 | 1.9 |" in md  # start-up and its peak memory
    assert "| crc32 | selection | wasm3 | 1 | 4 | 4.00 |  |  |" in md  # a run before they were recorded
    assert "| lz4 | held out | node | 1 | 1 | 1.00 |" in md
    assert "| geometric mean (2) |  | wasm3 |  |  | 2.45 |" in md  # sqrt(1.5 * 4)
    assert "| geometric mean (2) |  | node |  |  | 0.71 |" in md  # sqrt(0.5 * 1)


def test_report_shows_simulated_counts_apart_and_the_rfc_table_gets_their_column(tmp_path):
    """models_simulated (a real `dlab models --predict` run in the fixture) gets a table per quantity,
    each labelled simulated, and the RFC table a column of simulated flushes per placement."""
    shutil.copytree(Path(__file__).parent / "fixtures" / "run-models", tmp_path / "run")
    run_ = report.load_run(tmp_path / "run")
    text = report.render(run_)
    section = text[text.index("## Experiment `models_simulated`"):]
    assert "SIMULATED, not counted" in section
    assert "Simulated memory-order flushes per 1,000 dispatches" in section
    assert "Simulated indirect-branch mispredicts (the dispatch)" in section
    assert "Simulated conditional-branch mispredicts" in section
    assert "| always_speculate | store_sets |" in section  # a column per predictor
    analysis = report.analysis_markdown(run_)
    assert "simulated flushes/1k: always_speculate (1 copies, 2000 statements)" in analysis
    # stack/vec's loads meet an unresolved older store 2,295.30 times per 1,000 dispatches in the fixture.
    assert "2295.30" in analysis


@pytest.mark.skipif(platform.machine() != "x86_64" or shutil.which("valgrind") is None,
                    reason="dlab models --predict traces amd64 binaries under valgrind")
def test_dlab_models_predict_writes_simulated_metrics_only(dlab_bin, tmp_path):
    """One K-copy case under lackey, end to end: every metric named simulated, backend simulation,
    marked estimated, per dispatch; the bound of every push meeting its older store is there."""
    run_dir = run([dlab_bin, "new-run", "--results", tmp_path]).stdout.strip()
    run([dlab_bin, "models", "--predict", "always_speculate,store_sets,btb_512x1", "--model", "kcopy", "--kinds", "u", "--copies", "1",
         "--predict-dispatches", "1", "--predict-load-addresses", "2", "--run-dir", run_dir])
    from dispatchlab_analysis.results import load_run
    s = load_run(run_dir).experiments["models_simulated"].summary
    ideal = s[s["metric"].str.startswith("ideal_cycles[llvm-mca-19 ")]
    ordered = s[s["metric"].str.startswith("ideal_cycles_ordered[llvm-mca-19 ")]
    resources = s[s["metric"].str.startswith("ideal_cycles_resources[llvm-mca-19 ")]
    assert set(s["metric"]) - set(ideal["metric"]) - set(ordered["metric"]) - set(resources["metric"]) == {
        "simulated_memory_order_flushes[always_speculate]", "simulated_memory_order_flushes[store_sets]",
        "simulated_indirect_mispredicts[btb_512x1]"}
    simulated = s[~s.index.isin(ideal.index) & ~s.index.isin(ordered.index) & ~s.index.isin(resources.index)]
    assert (simulated["backend"] == "simulation").all() and (s["estimated"] == 1).all() and (s["unit"].str.endswith("/dispatch")).all()
    # The ideal bound: llvm-mca's cycles for the one-copy handler (about 25 instructions with its
    # dispatch): a few cycles, or empty with the reason where llvm-mca-19 is missing.
    assert len(ideal) == 1 and ideal.iloc[0]["backend"] == "llvm-mca"
    if shutil.which("llvm-mca-19"):
        assert 1 < ideal.iloc[0]["median"] < 20, ideal.iloc[0]
        # Loads ordered after older stores: the one-copy handler's update of the top in memory is a
        # chain through its own slot, so the ordered bound is above the free one.
        assert len(ordered) == 1 and ordered.iloc[0]["median"] > ideal.iloc[0]["median"] + 1, ordered.iloc[0]
        # The busiest resource alone, dependences ignored: below the bound.
        assert len(resources) == 1 and 0 < resources.iloc[0]["median"] <= ideal.iloc[0]["median"], resources.iloc[0]
    else:
        assert ideal.iloc[0]["n"] == 0 and ideal.iloc[0]["unavailable_reason"]
    # Two load addresses: a sample each (the branch rows run at both; the memory rows and the
    # bounds are the same in each).
    assert (simulated["n"] == 2).all(), simulated[["metric", "n"]]
    bound = s[s["metric"] == "simulated_memory_order_flushes[always_speculate]"].iloc[0]
    assert bound["median"] == pytest.approx(4097 / 4098, abs=1e-6)  # all but the start value's dispatch
    assert "SIMULATED by store_sets" in s[s["metric"] == "simulated_memory_order_flushes[store_sets]"].iloc[0]["native_event"]


def test_the_simulated_flushes_get_their_knees_per_predictor(dlab_bin, tmp_path):
    """`dlab knee` on a committed --predict run's K-copy series (copies 1 to 64, cyclic, tail): the
    own-slot control steps down after one copy (a single handler meets its own slot), the bound is
    flat, and store sets rise with K, no step."""
    shutil.copytree(Path(__file__).parent / "fixtures" / "run-simulated", tmp_path / "run")
    parts = []
    table = report.simulated_knees_markdown(report.load_run(tmp_path / "run"), parts)
    assert parts == []
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): line for line in table.splitlines()[2:]}
    assert "steps down between 1 and 8" in rows[("always_speculate", "kcopy_o")]
    assert "flat at 0.9998" in rows[("always_speculate", "kcopy_u")]
    assert "flat at 0" in rows[("never_speculate", "kcopy_u")]
    assert "steps up between 1 and 64" in rows[("store_sets", "kcopy_u")]
