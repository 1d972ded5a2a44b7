"""WebAssembly 3.0 GC at the command line: `dlab wasm run --heap-limit / --gc-stats` on the 3.0
workloads (built with the project, features30.wat), and `dlab wasm bench --suite 3.0`, whose rows say
what the collector did per call and whose report has the collector's table. Shapes and facts only:
nothing depends on this machine's speed. (The collector's semantics in every engine are
interpreter/tests/gc_test.cc's.)"""
import csv
from pathlib import Path

from dispatchlab_analysis.report import render
from dispatchlab_analysis.results import load_run, parse_params
from dlab_cli import run


def features30(dlab_bin) -> str:
    return str(Path(dlab_bin).parent / "interpreter" / "workloads" / "features30.wasm")


def test_binary_trees_under_a_heap_limit_collect_and_too_small_a_limit_is_out_of_memory(dlab_bin):
    ok = run(dlab_bin, "wasm", "run", "--heap-limit", "4000000", "--gc-stats", "--invoke", "gc_trees", features30(dlab_bin), "14")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "3222190"  # the sum of checks (nodes allocated): binaryen's interpreter says so too
    assert "dlab: gc:" in ok.stderr and "collections" in ok.stderr
    collections = int(ok.stderr.split("dlab: gc:")[1].split()[0])
    assert collections > 10
    # A depth-14 tree that lives through the run needs about 1 MB: 100 KB cannot hold it.
    oom = run(dlab_bin, "wasm", "run", "--heap-limit", "100000", "--invoke", "gc_trees", features30(dlab_bin), "14")
    assert oom.returncode == 1 and "trap: out of memory" in oom.stderr, oom.stderr
    bad = run(dlab_bin, "wasm", "run", "--heap-limit", "100", "--invoke", "gc_trees", features30(dlab_bin), "14")
    assert bad.returncode == 2 and "below 64 KiB" in bad.stderr, bad.stderr
    for text in ("abc", "1e9", "-5", "64k"):
        bad = run(dlab_bin, "wasm", "run", "--heap-limit", text, "--invoke", "gc_trees", features30(dlab_bin), "14")
        assert bad.returncode == 2 and "is not a number of bytes" in bad.stderr, (text, bad.stderr)
    bad = run(dlab_bin, "wasm", "run", "--heap-limit", str(2**40 + 1), "--invoke", "gc_trees", features30(dlab_bin), "14")
    assert bad.returncode == 2 and "above 1 TiB" in bad.stderr, bad.stderr


def test_the_3_0_suite_checks_every_engine_against_native_and_reports_the_collector(dlab_bin, tmp_path):
    run_dir = run(dlab_bin, "new-run", "--results", str(tmp_path)).stdout.strip()
    out = run(dlab_bin, "wasm", "bench", "--suite", "3.0", "--quick", "--samples", "2", "--warmup", "0", "--dispatch", "tail,switch",
              "--workloads", "gc_trees,exn_parser", "--heap-limit", "1000000", "--name", "wasm30", "--run-dir", run_dir)
    assert out.returncode == 0, out.stderr
    with open(f"{run_dir}/wasm30.summary.csv") as f:
        rows = list(csv.DictReader(f))
    cases = {r["case"] for r in rows}
    assert {"gc_trees/tail", "gc_trees/switch", "gc_trees/native", "exn_parser/tail"} <= cases
    trees = next(r for r in rows if r["case"] == "gc_trees/tail")
    params = parse_params(trees["params"])
    assert float(params["gc_collections_per_call"]) > 0
    assert float(params["gc_bytes_per_call"]) == 824800  # depth 8: 25,775 nodes of 32 bytes per call
    assert params["heap_limit"] == "1000000"
    text = render(load_run(run_dir))
    assert "collections / call" in text and "vs native" in text


def test_the_3_0_suite_refuses_peers(dlab_bin):
    out = run(dlab_bin, "wasm", "bench", "--suite", "3.0", "--peer", "x=/bin/true", "--no-save")
    assert out.returncode == 2 and "not with --suite 3.0" in out.stderr, out.stderr
