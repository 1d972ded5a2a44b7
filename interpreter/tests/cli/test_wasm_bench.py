"""`dlab wasm bench` on the kernels: the interpreter's stack placements beside the stack model's (a
small live run, seconds, of both, and what the report makes of them), every workload's native
checksum in every engine, the D-binop family and its knee, peers as processes and their pace, the
counting engine's profile, and the names and options the bench checks. No machine-specific number
is asserted."""
import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from dispatchlab_analysis import figures, tables
from dispatchlab_analysis.results import load_run, with_params
from dispatchlab_analysis.workloads import read_suites


@pytest.fixture(scope="module")
def variants_run(dlab_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", root], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([dlab_bin, "models", "--model", "stack", "--stack-copies", "17", "--statements", "64", "--placements",
                    "vec,sp,sp_wt,sp_wb,sp_spill", "--mode-placements", "none", "--samples", "3", "--warmup", "1", "--dispatches", "20000",
                    "--run-dir", run_dir], check=True, capture_output=True, text=True)
    bench = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--placements", "vec,sp,sp_wt,sp_wb,sp_spill", "--dispatch", "tail,goto",
                            "--workloads", "fib,crc32", "--samples", "3", "--name", "wasm_placements", "--run-dir", run_dir],
                           check=True, capture_output=True, text=True)
    return Path(run_dir), bench.stderr


@pytest.mark.compared
def test_every_built_engine_runs_with_equal_checksums_and_the_missing_one_is_named(variants_run):
    run_dir, stderr = variants_run
    run = load_run(run_dir)
    df = with_params(run.experiments["wasm_placements"].summary)
    engines = set(zip(df["dispatch"], df["placement"].fillna("")))  # the native build has no placement
    # A default build leaves out the goto engines beyond sp (slow to compile; -DDLAB_ALL_ENGINES=ON builds them): each
    # one left out is named as such.
    goto_built = {p for p in ("vec", "sp_wt", "sp_wb") if f"not run: goto x {p} is not built in this build" not in stderr}
    assert engines == {("tail", "vec"), ("tail", "sp"), ("tail", "sp_wt"), ("tail", "sp_wb"), ("tail", "sp_spill"), ("goto", "sp"),
                       ("native", "")} | {("goto", p) for p in goto_built}
    assert "not run: goto x sp_spill is not built" in stderr
    sidecar = run.experiments["wasm_placements"].sidecar
    assert any("goto x sp_spill" in why for why in sidecar["not_built"])
    for g in sidecar["groups"]:
        assert g["baseline"].endswith("/tail/vec")
        assert len(set(df[df["workload"] == g["workload"]]["checksum"])) == 1


def test_the_report_gives_every_engine_its_speed_against_native(variants_run):
    from dispatchlab_analysis import report
    run = load_run(variants_run[0])
    md = report.experiment_markdown(run.experiments["wasm_placements"])
    assert "vs native" in md
    row = next(line for line in md.splitlines() if line.startswith("| crc32/tail/sp |"))
    assert "| 1/" in row
    assert "| native |" in next(line for line in md.splitlines() if line.startswith("| crc32/native |"))


@pytest.mark.compared
def test_the_report_sets_each_placement_beside_the_models_prediction(variants_run, tmp_path):
    run = load_run(variants_run[0])
    md = tables.placements_markdown(run)
    assert "| placement | model | fib | crc32 |" in md
    assert "| sp |" in md and "| sp_spill |" in md and "| sp_wt |" in md and "| sp_wb |" in md
    assert "171 handlers, 64 statements" in md
    png = figures.placements_model_vs_interpreter(run, tmp_path)
    assert png is not None and png.exists()
    data = (tmp_path / "placements_model_vs_interpreter.csv").read_text()
    assert "sp_spill" in data and "crc32" in data


def test_bench_names_are_checked(dlab_bin):
    out = subprocess.run([dlab_bin, "wasm", "bench", "--name", "Bad-Name", "--no-save"], capture_output=True, text=True)
    assert out.returncode == 2 and "lower-case letters" in out.stderr
    out = subprocess.run([dlab_bin, "wasm", "bench", "--placements", "sp_spill", "--dispatch", "switch", "--no-save"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "switch x sp_spill is not built" in out.stderr


@pytest.mark.compared
def test_every_workload_computes_the_native_checksum_in_every_engine(dlab_bin):
    # The bench refuses to time an engine whose checksum differs from the first one's or from the
    # native build's; one round of every workload in every engine is enough to check all of them.
    out = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--samples", "1", "--warmup", "0", "--placements", "sp,vec,sp_wt,sp_wb,sp_spill",
                          "--dispatch", "switch,tail,tail_pn,goto", "--no-save"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-1000:]
    for w in read_suites()["kernels"].workloads:
        assert f"{w.name}/native" in out.stdout, w.name


def test_dbinop_family_is_timed_per_instruction_and_its_knee_is_fitted(dlab_bin, tmp_path):
    from dispatchlab_analysis import knee
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", tmp_path], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--dbinop", "5,13,21,29", "--dispatch", "tail", "--samples", "3",
                    "--name", "wasm_dbinop", "--run-dir", run_dir], check=True, capture_output=True, text=True)
    run = load_run(run_dir)
    exp = run.experiments["wasm_dbinop"]
    df = with_params(exp.summary)
    assert set(df["binop_pairs"]) == {5, 13, 21, 29}
    assert set(df["unit"]) >= {"ns/instruction"} or any(u.endswith("/instruction") for u in df["unit"])
    assert not (df["dispatch"] == "native").any()  # generated code has no native build
    metric = "cycles_tsc_estimate" if (df[df["metric"] == "cycles_tsc_estimate"]["n"] > 0).any() else "tsc_ticks"
    knees = knee.dbinop_knees(exp.samples, exp.summary, metric)
    assert len(knees) == 1 and knees[0]["dispatch"] == "tail" and knees[0]["summary"]
    assert figures.dbinop_cycles(run, tmp_path / "fig").exists()


def test_dbinop_refuses_bad_counts(dlab_bin):
    for bad, text in (("0", "1..200"), ("5,5", "listed twice"), ("x", "not a pair count")):
        out = subprocess.run([dlab_bin, "wasm", "bench", "--dbinop", bad, "--no-save"], capture_output=True, text=True)
        assert out.returncode == 2 and text in out.stderr, out.stderr


def test_peers_run_as_processes_with_their_start_up_said(dlab_bin, tmp_path):
    # dlab itself as a peer process (always there), and Node.js's V8 when this machine has node.
    import shutil
    from dispatchlab_analysis import report
    repo = Path(__file__).resolve().parents[3]
    peers = ["--peer", f"dlabproc={dlab_bin} wasm run {{module}} {{workload}} {{size}} {{calls}}"]
    if shutil.which("node"):
        peers += ["--peer", f"node=node --no-warnings {repo / 'tools' / 'wasi-run.mjs'} {{module}} {{workload}} {{size}} {{calls}}"]
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", tmp_path], check=True, capture_output=True, text=True).stdout.strip()
    out = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--dispatch", "tail", "--workloads", "crc32,statemach", "--samples", "2",
                          "--peer-calls", "2", *peers, "--run-dir", run_dir], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-1000:]
    assert "peer dlabproc: not run: the command build has no statemach" in out.stderr
    run = load_run(run_dir)
    df = with_params(run.experiments["wasm"].summary)
    peer_rows = df[df["dispatch"] == "peer"]
    assert set(peer_rows["peer"]) == ({"dlabproc", "node"} if shutil.which("node") else {"dlabproc"})
    assert (peer_rows["peer_startup_ns"].astype(float) > 0).all()
    # the peer's peak resident memory at start-up, as GNU time counts the program alone: dlab as a
    # process is far smaller than this bench process, whose forked copy would have counted its size
    if shutil.which("time") or Path("/usr/bin/time").exists():
        rss = peer_rows.set_index("peer")["peer_startup_max_rss_kb"].astype(float)
        assert (rss > 0).all(), rss
        assert rss.loc["dlabproc"].max() < 200 * 1024, rss
    assert set(peer_rows["metric"]) == {"tsc_ticks", "cycles_tsc_estimate"}  # no per-thread metric for another process
    md = report.experiment_markdown(run.experiments["wasm"])
    assert "crc32 (peers)" in md and "start-up" in md
    # the pace table lists the peers whose calls outlast their start-up's noise
    assert ("ms per call after its start-up" in md) == ("### Pace against the other engines" in md)


def test_a_peer_with_the_wrong_checksum_is_refused(dlab_bin, tmp_path):
    out = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--dispatch", "tail", "--workloads", "crc32", "--samples", "1",
                          "--peer", "liar=echo checksum 12345678", "--no-save"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 1 and "peer liar on crc32: checksum 12345678 where dlab computed" in out.stderr
    out = subprocess.run([dlab_bin, "wasm", "bench", "--peer", "nocommand", "--no-save"], capture_output=True, text=True)
    assert out.returncode == 2 and "is not NAME=COMMAND" in out.stderr


def test_profile_counts_ops_and_pairs_in_the_counting_engine(dlab_bin, tmp_path):
    module = Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels.wasm"
    out = subprocess.run([dlab_bin, "wasm", "profile", str(module), "--invoke", "crc32", "--json", str(tmp_path / "p.json"), "--", "1000"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    plain = subprocess.run([dlab_bin, "wasm", "run", str(module), "--invoke", "crc32", "--", "1000"], capture_output=True, text=True)
    assert out.stdout == plain.stdout  # the counting engine computes what every engine computes
    assert "cover 90%" in out.stderr
    p = json.loads((tmp_path / "p.json").read_text())
    assert p["dispatches"] == sum(o["count"] for o in p["ops"]) > 1000
    # every dispatch but the invocation's first pairs with the one before it
    assert sum(x["count"] for x in p["pairs"]) == p["dispatches"] - 1
    assert 1 <= p["pairs_covering"]["50%"] <= p["pairs_covering"]["90%"] <= p["pairs_covering"]["99%"] <= p["distinct_pairs"]


@pytest.mark.skipif(platform.machine() != "x86_64" or shutil.which("valgrind") is None,
                    reason="--predict traces amd64 binaries under valgrind")
def test_predict_simulates_the_engines_per_dispatch(dlab_bin, tmp_path):
    """`wasm bench --predict` (issue 46, item 3): fib at its quick size in switch and tail, traced in
    each engine's code. A dispatch is an indirect jump run there: as many as the counting engine's
    dispatches (the entry's jump into the first handler aside) and the same in both engines. The
    last-target table misses every dispatch of the switch's one jump (fib's loop never repeats an op)
    and almost none of tail's per-handler jumps; every metric is simulated, per dispatch."""
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", tmp_path], check=True, capture_output=True, text=True).stdout.strip()
    out = subprocess.run([dlab_bin, "wasm", "bench", "--predict", "btb_512x1,store_sets", "--workloads", "fib", "--dispatch", "switch,tail",
                          "--bounds", "check", "--predict-load-addresses", "2", "--run-dir", run_dir], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    s = with_params(load_run(run_dir).experiments["wasm_simulated"].summary)
    ideal = s[s["metric"].str.startswith("ideal_cycles")]
    s = s[~s["metric"].str.startswith("ideal_cycles")]
    assert set(s["metric"]) == {"simulated_indirect_mispredicts[btb_512x1]", "simulated_memory_order_flushes[store_sets]"}
    assert (s["backend"] == "simulation").all() and (s["estimated"] == 1).all() and (s["unit"].str.endswith("/dispatch")).all()
    # The ideal bound (--ideal-mcpu native, the default): tail's handlers are functions of their own,
    # llvm-mca's bound from their paths; the switch loop has none, and says why.
    assert {m.split("[")[0] for m in ideal["metric"]} == {"ideal_cycles", "ideal_cycles_ordered", "ideal_cycles_resources"}
    assert (ideal["backend"] == "llvm-mca").all() and (ideal["estimated"] == 1).all()
    on_switch = ideal[ideal["dispatch"] == "switch"]
    assert (on_switch["n"] == 0).all() and on_switch["unavailable_reason"].str.contains("one loop function").all()
    if shutil.which("llvm-mca-19"):
        bound = ideal[ideal["dispatch"] == "tail"].set_index("metric")["median"]
        lower, middle, upper = (bound[[m for m in bound.index if m.startswith(p + "[")][0]]
                                for p in ("ideal_cycles_resources", "ideal_cycles", "ideal_cycles_ordered"))
        assert 0 < lower <= middle <= upper < 100, bound
        assert float(with_params(ideal[ideal["dispatch"] == "tail"])["ideal_path_share"].iloc[0]) > 0.5
    module = Path(dlab_bin).parent / "interpreter" / "workloads" / "kernels.wasm"
    size = s["size"].iloc[0]
    profile = subprocess.run([dlab_bin, "wasm", "profile", str(module), "--invoke", "fib", "--json", str(tmp_path / "p.json"), "--", size],
                             capture_output=True, text=True, timeout=120)
    assert profile.returncode == 0, profile.stderr
    counted = json.loads((tmp_path / "p.json").read_text())["dispatches"]
    traced = {int(d) for d in s["dispatches"]}
    assert len(traced) == 1 and counted <= traced.pop() <= counted + 4, (traced, counted)
    btb = s[s["metric"] == "simulated_indirect_mispredicts[btb_512x1]"].set_index("dispatch")["median"]
    # The switch loop's one shared jump misses nearly always in a last-target table; tail's jumps,
    # one per handler, far less. Not nothing: the table is untagged and indexed by the jump's low 9
    # address bits, so two of fib's hot handlers whose jumps sit 512 bytes apart share an entry,
    # and which do moves with the code's layout (0.00003 per dispatch before a change to the call
    # handler at 4b71db8, 0.085 after it). Only one shared jump would bring tail near the switch.
    assert btb["switch"] > 0.99 and btb["tail"] < 0.25
    # Two load addresses, a sample each; the last-target table, indexed by the address's low bits,
    # is the same at both (whole pages apart), and the memory rows are simulated once.
    assert (s["n"] == 2).all() and set(s["load_addresses"]) == {"2"}
    assert (s["ci95_lo"] == s["ci95_hi"]).all(), s[["case", "metric", "ci95_lo", "ci95_hi"]]
    assert "SIMULATED by store_sets" in s[s["metric"] == "simulated_memory_order_flushes[store_sets]"].iloc[0]["native_event"]
    # The report's section says what was traced and keeps each quantity in its own simulated table.
    from dispatchlab_analysis import report
    text = report.render(report.load_run(run_dir))
    section = text[text.index("## Experiment `wasm_simulated`"):]
    assert "SIMULATED, not counted" in section and "a dispatch is an indirect jump run in that code" in section
    assert "Simulated indirect-branch mispredicts (the dispatch) per 1,000 dispatches" in section
    assert "| fib/switch |" in section and "| btb_512x1 |" in section, section[:2000]


def test_placement_is_the_option_name_and_variant_refused_with_it(dlab_bin, tmp_path):
    module = tmp_path / "m.wasm"
    module.write_bytes(b"\0asm\1\0\0\0")
    out = subprocess.run([dlab_bin, "wasm", "bench", "--placements", "sp_spill", "--dispatch", "switch", "--no-save"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "switch x sp_spill is not built" in out.stderr, out.stderr
    out = subprocess.run([dlab_bin, "wasm", "run", "--placement", "nowhere", str(module)], capture_output=True, text=True)
    assert out.returncode == 2 and "nowhere" in out.stderr, out.stderr
    # the old names were read for one release; now each is refused with the name to use
    # (harness/cli/renamed_option.cc), with a value or bare, and nothing runs
    for command, old, new in ((["wasm", "bench"], "--variants", "--placements"), (["wasm", "run"], "--variant", "--placement"),
                              (["wasm", "spec"], "--variant", "--placement"), (["models"], "--variants", "--placements"),
                              (["models"], "--mode-variants", "--mode-placements"), (["probes"], "--variants", "--placements")):
        for given in ([old, "sp"], [old + "=sp"], [old]):
            out = subprocess.run([dlab_bin, *command, *given, "--help-never-reached"], capture_output=True, text=True)
            assert out.returncode == 2 and f"was renamed {new}" in out.stderr, (command, given, out.stderr)
    for command in (["wasm", "bench"], ["wasm", "run"], ["wasm", "spec"], ["models"], ["probes"]):
        help_text = subprocess.run([dlab_bin, *command, "--help"], capture_output=True, text=True).stdout
        # no old flag, and "variant" never for a placement (wasm3's operand-location variants stay)
        assert "--variant" not in help_text and "stack-state variant" not in help_text, (command, help_text)
        assert "stack variant" not in help_text and "variant groups" not in help_text, (command, help_text)
    assert "--placements" in subprocess.run([dlab_bin, "models", "--help"], capture_output=True, text=True).stdout


def test_a_bench_into_a_log_says_each_round(dlab_bin):
    # stderr is a pipe here, as in a recipe's log: a line per round of every case, none rewritten
    out = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--workloads", "fib", "--dispatch", "tail", "--samples", "2",
                          "--max-samples", "0", "--warmup", "0", "--no-native", "--no-save"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-800:]
    assert "[wasm bench] 1/1 fib: round 1 done (at most 2)" in out.stderr
    assert "[wasm bench] 1/1 fib: round 2 done (at most 2)" in out.stderr
    assert "\r" not in out.stderr


def test_all_is_every_value_of_an_axis_list(dlab_bin):
    # every placement in tail dispatch: each one is an engine of a default build
    out = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--workloads", "fib", "--dispatch", "tail", "--placements", "all",
                          "--samples", "1", "--max-samples", "0", "--warmup", "0", "--no-native", "--no-save"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-800:]
    # each one runs, or (an engine only -DDLAB_COMPARED_ENGINES=ON builds) is said not run
    ran = [p for p in ("sp", "vec", "sp_spill", "sp_wt", "sp_wb") if f"fib/tail/{p} " in out.stdout]
    assert "sp" in ran, out.stdout[-1500:]
    assert out.stderr.count("[wasm bench] not run:") == 5 - len(ran), out.stderr[-1500:]


def test_all_in_a_list_is_every_value_not_named_before_it(dlab_bin):
    # "vec,all": the baseline first, then the other placements (tools/experiments.toml says so)
    out = subprocess.run([dlab_bin, "wasm", "bench", "--quick", "--workloads", "fib", "--dispatch", "tail", "--placements", "vec,all",
                          "--samples", "1", "--max-samples", "0", "--warmup", "0", "--no-native", "--no-save"],
                         capture_output=True, text=True, timeout=300)
    for bad, said in (("all,vec", "comes after all"), ("vec,all,all", "all is listed twice")):
        refused = subprocess.run([dlab_bin, "wasm", "bench", "--placements", bad, "--no-save"], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and said in refused.stderr, (bad, refused.stderr)
    assert out.returncode == 0, out.stderr[-800:]
    rows = [line.split()[0] for line in out.stdout.splitlines() if line.startswith("fib/tail/")]
    if "fib/tail/vec" not in rows:
        pytest.skip("vec in tail is an engine only -DDLAB_COMPARED_ENGINES=ON builds (just test-compared)")
    assert rows[0] == "fib/tail/vec" and sorted(set(rows)) == sorted(f"fib/tail/{p}" for p in ("sp", "vec", "sp_spill", "sp_wt", "sp_wb"))
