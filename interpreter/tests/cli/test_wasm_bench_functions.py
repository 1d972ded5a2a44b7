"""`dlab wasm bench --valgrind --valgrind-functions`: cachegrind's counts split by function into
<name>_valgrind.functions.csv, dlab's handlers with their family, and the analysis that groups
them by family beside a peer's (analysis/dispatchlab_analysis/where.py). Counts, never times:
nothing here depends on this CPU."""
import subprocess

import pandas as pd
import pytest

from dispatchlab_analysis import where
from dlab_cli import run_dlab

FAMILIES = {"control", "stack_locals_globals", "gc", "tables", "memory", "numeric", "simd", "superinstructions"}


def test_the_counts_split_by_function_name_each_handlers_family(dlab_bin, tmp_path):
    if subprocess.run(["valgrind", "--version"], capture_output=True).returncode != 0:
        pytest.skip("valgrind is not installed (./tools/bootstrap installs it)")
    peer = tmp_path / "peer.sh"  # a stand-in peer: its counts are the shell's (plumbing, not a peer's speed)
    peer.write_text("#!/bin/sh\ni=0\nwhile [ $i -lt $(( $4 * 1000 )) ]; do i=$((i + 1)); done\n")
    peer.chmod(0o755)
    results = tmp_path / "res"
    r = run_dlab(dlab_bin, ["wasm", "bench", "--valgrind", "--valgrind-functions", "--workloads", "fib", "--dispatch", "tail_pn",
                            "--peer", f"fake={peer} {{module}} {{workload}} {{size}} {{calls}}", "--results", str(results)])
    assert r.returncode == 0, r.stderr
    [functions_csv] = results.glob("*/*/wasm_valgrind.functions.csv")
    f = pd.read_csv(functions_csv, keep_default_na=False)
    handlers = f[f["family"] != ""]
    assert len(handlers) > 0, f.head().to_string()
    assert set(handlers["family"]) <= FAMILIES
    assert handlers["function"].str.contains("::h_").all()
    assert "control" in set(handlers["family"])  # fib calls and returns
    # Each row carries its case's params and the provenance every measured row carries.
    assert (handlers["params"].str.contains("workload=fib")).all()
    assert (f["protocol"] == "cachegrind-2n-minus-n").all() and (f["git_commit"] != "").all() and (f["cxx_flags"] != "").all()
    # The handlers' instructions are per call, and they are most of dlab's fib call.
    dlab_rows = f[f["case"] != "fib/fake"]
    assert handlers["instructions"].sum() > 0.5 * dlab_rows["instructions"].sum()

    out = tmp_path / "where.md"
    assert where.main([str(functions_csv.parent), "--out", str(out)]) == 0
    text = out.read_text()
    assert "#### fib (dlab `tail_pn`)" in text and "fake instr/call" in text and "| **all** |" in text
    assert "Where dlab `tail_pn` executes more than `fake`" in where.report_section(functions_csv.parent, "wasm_valgrind")


def test_functions_are_refused_where_they_would_be_lost(dlab_bin, tmp_path):
    for extra, says in ((["--no-save"], "not with --no-save"), ([], "applies only with --valgrind"),
                        (["--valgrind-reuse", str(tmp_path)], "not with --valgrind-reuse")):
        args = ["wasm", "bench", "--valgrind-functions", "--workloads", "fib"] + extra
        if extra:
            args.insert(2, "--valgrind")
        r = run_dlab(dlab_bin, args)
        assert r.returncode == 2 and says in r.stderr, r.stderr
