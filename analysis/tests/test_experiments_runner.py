"""The experiments runner (python -m dispatchlab_analysis.experiments): its plan, its progress lines,
its conditions and how it stops at a failing step. A fake dlab script stands in for the real one,
so nothing here measures or depends on this machine's CPU, counters or speed."""
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dispatchlab_analysis import experiments
from dispatchlab_analysis.experiments import duration, load_registry, plan, print_plan

REPO = Path(__file__).resolve().parents[2]

REGISTRY = textwrap.dedent("""\
    [measured]
    cpu = "a test CPU"
    commit = "abc1234"

    [[step]]
    name = "first"
    what = "the first step"
    [step.rfc]
    argv = ["{dlab}", "first", "--run-dir", "{run}"]
    seconds = 10
    [[step.rfc.extra]]
    if_on_path = "some-peer-program"
    argv = ["--peer", "p=some-peer-program {module} {workload}"]
    unless = "no peer here"

    [[step]]
    name = "listing"
    experiment = false
    writes = "listing.md"
    what = "a listing on standard output"
    [step.rfc]
    argv = ["{dlab}", "listing"]
    stdout = "{run}/listing.md"
    seconds = 80

    [[step]]
    name = "corpus_only"
    what = "only when the corpus is built"
    if_exists = "{build_dir}/corpus.wasm"
    unless = "the corpus is not built"
    [step.rfc]
    argv = ["{dlab}", "corpus", "--run-dir", "{run}"]
    seconds = 5

    [[step]]
    name = "last"
    what = "the last step"
    [step.rfc]
    argv = ["{dlab}", "last", "--run-dir", "{run}"]
    seconds = 150
    [step.models]
    argv = ["{dlab}", "last", "--full", "--run-dir", "{run}"]
    seconds = 3600
    """)

# Logs its arguments; `listing` prints; FAIL_AT=<subcommand> exits 3 there; KILL_AT kills itself.
FAKE_DLAB = textwrap.dedent("""\
    #!/bin/sh
    echo "$*" >> "$DLAB_FAKE_LOG"
    echo "$DLAB_RECIPE $DLAB_RECIPE_STEP" >> "$DLAB_FAKE_LOG.env"
    [ "$1" = listing ] && echo "# listing"
    [ "$1" = "${FAIL_AT:-}" ] && { echo "fake dlab: $1 failed" >&2; exit 3; }
    [ "$1" = "${KILL_AT:-}" ] && kill -KILL $$
    exit 0
    """)


@pytest.fixture
def setup(tmp_path, monkeypatch):
    reg_file = tmp_path / "experiments.toml"
    reg_file.write_text(REGISTRY)
    dlab = tmp_path / "dlab"
    dlab.write_text(FAKE_DLAB)
    dlab.chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    build = tmp_path / "build"
    build.mkdir()
    log = tmp_path / "calls.log"
    monkeypatch.setenv("DLAB_FAKE_LOG", str(log))
    return reg_file, dlab, run, build, log


def main(args, capsys):
    rc = experiments.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_duration_reads_as_seconds_minutes_hours():
    assert [duration(s) for s in (0, 12.4, 59.6, 60, 250, 3600, 3725)] == \
        ["0 s", "12 s", "1 min", "1 min", "4 min 10 s", "1 h", "1 h 2 min"]


def test_plan_prints_each_step_its_expected_time_and_the_total_before_running(setup, capsys):
    reg_file, dlab, run, build, log = setup
    rc, out, _ = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file, "--dry-run"], capsys)
    assert rc == 0 and not log.exists(), "a dry run runs nothing"
    lines = out.splitlines()
    assert lines[0].startswith("== plan of `just rfc`: 3 steps, about 4 min") and "a test CPU" in lines[0]
    assert "   1. first: dlab first --run-dir $run  [10 s]" in lines
    assert "        (no peer here)" in lines
    assert "   2. listing: dlab listing > $run/listing.md  [1 min 20 s]" in lines
    assert "   -  corpus_only: left out (the corpus is not built)" in lines
    assert "   3. last: dlab last --run-dir $run  [2 min 30 s]" in lines
    assert lines[-1].strip() == "total 4 min"


def test_runner_runs_every_step_in_order_from_argv_with_progress_lines(setup, capsys):
    reg_file, dlab, run, build, log = setup
    rc, out, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 0, err
    assert log.read_text().splitlines() == [f"first --run-dir {run}", "listing", f"last --run-dir {run}"]
    assert (run / "listing.md").read_text() == "# listing\n"
    progress = [line for line in out.splitlines() if line.startswith("== [")]
    assert progress == [
        "== [1/3] first: dlab first --run-dir $run (expected 10 s; 4 min left)",
        "== [2/3] listing: dlab listing > $run/listing.md (expected 1 min 20 s; 3 min 50 s left)",
        "== [3/3] last: dlab last --run-dir $run (expected 2 min 30 s; 2 min 30 s left)",
    ]
    assert "== corpus_only: left out (the corpus is not built)" in out
    assert out.index("== plan of") < out.index("== [1/3]") < out.index("== corpus_only") < out.index("== [3/3]")
    assert out.splitlines()[-1].startswith("== 3 steps done in ")


def test_each_step_runs_with_its_recipe_and_step_name_in_its_environment(setup, capsys):
    # dlab writes them into every sidecar (command_record.h): the files say what made them
    reg_file, dlab, run, build, log = setup
    rc, _, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 0, err
    assert Path(f"{log}.env").read_text().splitlines() == ["rfc first", "rfc listing", "rfc last"]


def test_runner_takes_the_recipes_own_argv(setup, capsys):
    reg_file, dlab, run, build, log = setup
    rc, out, _ = main(["models", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 0
    assert log.read_text().splitlines() == [f"last --full --run-dir {run}"]
    assert "== [1/1] last: dlab last --full --run-dir $run (expected 1 h; 1 h left)" in out
    assert out.startswith("== plan of `just models`: 1 step, about 1 h")


def test_runner_stops_at_a_failing_step_and_names_it(setup, capsys, monkeypatch):
    reg_file, dlab, run, build, log = setup
    monkeypatch.setenv("FAIL_AT", "listing")
    rc, out, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 3, "the failing step's exit status"
    assert log.read_text().splitlines() == [f"first --run-dir {run}", "listing"], "nothing after the failing step runs"
    assert "experiments: error: step 2/3 `listing` (dlab listing > $run/listing.md) failed with exit status 3" in err
    assert "did not run" in err and "[3/3]" not in out


def test_runner_reports_a_step_killed_by_a_signal(setup, capsys, monkeypatch):
    reg_file, dlab, run, build, log = setup
    monkeypatch.setenv("KILL_AT", "first")
    rc, _, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 128 + 9
    assert "step 1/3 `first`" in err and "killed by SIGKILL" in err


def test_runner_reports_a_dlab_that_cannot_start(setup, capsys):
    reg_file, dlab, run, build, log = setup
    rc, _, err = main(["rfc", run, "--dlab", dlab.parent / "no-such-dlab", "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 127 and "step 1/3 `first`" in err and "could not start" in err


def test_a_missing_folder_for_a_steps_output_is_said_as_such(setup, capsys):
    reg_file, dlab, run, build, log = setup
    rc, _, err = main(["rfc", run / "gone", "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 1 and "step 2/3 `listing`" in err and "cannot write its output file" in err and "could not start" not in err


def test_a_times_json_in_a_missing_folder_is_refused_before_any_step_runs(setup, capsys):
    reg_file, dlab, run, build, log = setup
    rc, _, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file,
                       "--times-json", run / "no-such-folder" / "t.json"], capsys)
    assert rc == 2 and "--times-json" in err and "no folder" in err
    assert not log.exists(), "no step ran"


def test_a_recipe_with_no_step_is_an_error_not_a_success(setup, capsys, tmp_path):
    reg_file, dlab, run, build, log = setup
    only_rfc = tmp_path / "only_rfc.toml"
    only_rfc.write_text('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n')
    rc, _, err = main(["models", run, "--dlab", dlab, "--build-dir", build, "--registry", only_rfc], capsys)
    assert rc == 2 and "no step belongs to the recipe models" in err


def test_ctrl_c_stops_the_runner_without_a_traceback(setup, capsys, monkeypatch):
    reg_file, dlab, run, build, log = setup
    def interrupted(steps, out=None, clock=None, recipe=""):
        raise KeyboardInterrupt
    monkeypatch.setattr(experiments, "run_steps", interrupted)
    rc, _, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", reg_file], capsys)
    assert rc == 130 and "interrupted" in err and "Traceback" not in err


def test_a_registry_that_is_not_utf8_is_refused_naming_it(setup, capsys, tmp_path):
    reg_file, dlab, run, build, log = setup
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[[step]]\nname = "\xff"\n')
    rc, _, err = main(["rfc", run, "--dlab", dlab, "--build-dir", build, "--registry", bad], capsys)
    assert rc == 2 and f"{bad}: not UTF-8" in err and "Traceback" not in err


def test_conditions_add_the_peer_when_on_path_and_the_step_when_its_file_exists(setup):
    reg_file, dlab, run, build, _ = setup
    reg = load_registry(reg_file)
    steps = plan(reg, "rfc", "DLAB", "RUN", "B", which=lambda p: "/usr/bin/" + p, exists=lambda f: f == "B/corpus.wasm")
    assert [p.step.name for p in steps if p.left_out is None] == ["first", "listing", "corpus_only", "last"]
    # Only {dlab}, {run} and {build_dir} are replaced: the peer's own {module} {workload} stay for dlab.
    assert steps[0].argv == ["DLAB", "first", "--run-dir", "RUN", "--peer", "p=some-peer-program {module} {workload}"]
    assert steps[0].notes == []
    assert steps[1].stdout == "RUN/listing.md"
    out = io.StringIO()
    print_plan(steps, "rfc", "RUN", reg, out)
    assert "4 steps, about 4 min 5 s" in out.getvalue()


def test_plan_of_the_real_registry_keeps_the_justfile_conditions(tmp_path):
    reg = load_registry()
    absent = plan(reg, "rfc", "D", "R", "B", which=lambda p: None, exists=lambda f: False)
    present = plan(reg, "rfc", "D", "R", "B", which=lambda p: "/x/" + p, exists=lambda f: True)
    left_out = [p.step.name for p in absent if p.left_out]
    assert left_out and all("corpus" in n for n in left_out)
    assert not any(p.left_out for p in present)
    wasm_absent = next(p for p in absent if p.step.name == "wasm")
    wasm_present = next(p for p in present if p.step.name == "wasm")
    assert "--peer" not in wasm_absent.argv and wasm_absent.notes
    assert wasm_present.argv[-4] == "--peer" and wasm_present.argv[-3].startswith("node=node ")
    assert wasm_present.argv[-2] == "--peer" and wasm_present.argv[-1].startswith("wasm3=build/peers/wasm3/wasm3 ")
    assert len(wasm_absent.notes) == 2 and "just peers" in wasm_absent.notes[1]
    assert all(a == "D" for p in present for a in p.argv[:1])
    assert not any("{dlab}" in a or "{run}" in a or "{build_dir}" in a for p in present for a in p.argv)


def test_the_real_rfc_steps_run_against_a_fake_dlab(setup, tmp_path):
    """Every step of the real registry's rfc, through the command line, with a dlab that only logs."""
    _, dlab, run, build, log = setup
    env = dict(os.environ, PYTHONPATH=str(REPO / "analysis"))
    r = subprocess.run([sys.executable, "-m", "dispatchlab_analysis.experiments", "rfc", str(run), "--dlab", str(dlab),
                        "--build-dir", str(build)], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    ran = [p for p in plan(load_registry(), "rfc", str(dlab), str(run), str(build)) if p.left_out is None]
    assert len(log.read_text().splitlines()) == len(ran)
    assert f"== {len(ran)} steps done in " in r.stdout
    assert (run / "handler_signatures.md").exists()


def test_scratch_is_one_folder_per_recipe_run_shared_by_its_steps_and_removed_after(tmp_path, monkeypatch, capsys):
    """{scratch}: what the cachegrind benches of one recipe run share (cases counted once)."""
    reg_file = tmp_path / "experiments.toml"
    reg_file.write_text(textwrap.dedent("""\
        [measured]
        cpu = "a test CPU"
        [[step]]
        name = "one"
        what = "first"
        [step.rfc]
        argv = ["{dlab}", "one", "--reuse", "{scratch}", "--run-dir", "{run}"]
        seconds = 1
        [[step]]
        name = "two"
        what = "second"
        [step.rfc]
        argv = ["{dlab}", "two", "--reuse", "{scratch}", "--run-dir", "{run}"]
        seconds = 1
        """))
    dlab = tmp_path / "dlab"
    dlab.write_text("#!/bin/sh\necho \"$3 $(test -d \"$3\" && echo exists)\" >> \"$DLAB_FAKE_LOG\"\n")
    dlab.chmod(0o755)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("DLAB_FAKE_LOG", str(log))
    rc, out, _ = main(["rfc", tmp_path, "--dlab", dlab, "--registry", reg_file], capsys)
    assert rc == 0
    first, second = log.read_text().splitlines()
    assert first == second and first.endswith(" exists"), "both steps get the same existing folder"
    assert not Path(first.split()[0]).exists(), "removed at the end of the recipe run"
    assert "dlab one --reuse $scratch --run-dir $run" in out
