"""`dlab wasm engines`: every row of engines.def with whether this build has it, and an engine a
build leaves out (engines.def's BUILD column) refused by name, with how to build it."""
from dlab_cli import kernels, run


def engine_rows(dlab_bin):
    out = run(dlab_bin, "wasm", "engines")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:6] == ["engine", "dispatch", "placement", "budget", "bounds", "in"]
    return {line.split()[0]: line for line in lines[1:]}


def built(row):
    return row.split()[5] == "built"


def test_every_engine_row_is_listed_with_whether_this_build_has_it(dlab_bin):
    rows = engine_rows(dlab_bin)
    assert {"switch", "tail", "tail_pn", "goto", "tail_vec", "tail_fuel_machine", "switch_fuel", "goto_vec"} <= set(rows)
    assert rows["tail_wt"].split()[1:5] == ["tail", "sp_wt", "none", "check"]
    # every build has switch, tail and tail_pn in sp and the run's features (tail_pn: where preserve_none exists)
    for engine in ("switch", "tail", "tail_fuel", "tail_deadline", "tail_guard"):
        assert built(rows[engine]), rows[engine]
    for engine in ("goto", "tail_vec", "tail_spill", "tail_pn_wb", "tail_fuel_machine", "switch_fuel", "switch_deadline"):
        assert built(rows[engine]) or "-DDLAB_COMPARED_ENGINES=ON" in rows[engine], rows[engine]
    assert built(rows["goto_vec"]) or "-DDLAB_ALL_ENGINES=ON" in rows["goto_vec"], rows["goto_vec"]


def test_an_engine_the_build_leaves_out_is_refused_saying_how_to_build_it(dlab_bin):
    if built(engine_rows(dlab_bin)["tail_fuel_machine"]):
        out = run(dlab_bin, "wasm", "run", "--fuel", "1000000", "--budget", "fuel_machine", "--invoke", "fib", kernels(dlab_bin), "10")
        assert out.returncode == 0 and out.stdout.strip() == "55", out.stderr
        return
    out = run(dlab_bin, "wasm", "run", "--fuel", "1000000", "--budget", "fuel_machine", "--invoke", "fib", kernels(dlab_bin), "10")
    assert out.returncode == 2, out.stderr
    assert "_fuel_machine is not built in this build" in out.stderr and "-DDLAB_COMPARED_ENGINES=ON" in out.stderr
    assert "just test-compared" in out.stderr


def test_goto_is_refused_naming_dispatch_or_run_as_this_build_has_it_and_all_says_what_it_left_out(dlab_bin, tmp_path):
    # goto is an engine only the measurements compare (engines.def: COMPARED).
    goto_built = built(engine_rows(dlab_bin)["goto"])
    out = run(dlab_bin, "wasm", "run", "--dispatch", "goto", "--invoke", "fib", kernels(dlab_bin), "10")
    if goto_built:
        assert out.returncode == 0 and out.stdout.strip() == "55", out.stderr
    else:
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("--dispatch: goto is not built") and "-DDLAB_COMPARED_ENGINES=ON" in out.stderr, out.stderr
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "one.wast").write_text('(module (func (export "f") (result i32) (i32.const 1)))\n'
                                     '(assert_return (invoke "f") (i32.const 1))\n')
    spec = run(dlab_bin, "wasm", "spec", "--dispatch", "all", "--suite", str(suite))
    assert spec.returncode == 0, spec.stderr
    said_not_run = "== not run: goto is not built in this build" in spec.stdout
    assert said_not_run != goto_built, spec.stdout
    assert ("== goto dispatch, sp placement" in spec.stdout) == goto_built, spec.stdout
