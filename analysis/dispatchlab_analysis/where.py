"""Where dlab executes more than a peer (wasm3), by instruction family.

Reads the functions table of a cachegrind run made with `dlab wasm bench --valgrind
--valgrind-functions --peer ...` (each case's 2N - N counts per function, per call) and groups each
engine's functions by family: dlab's handlers by the handlers/ file their entry is in (the
`family` column dlab wrote), wasm3's operations (op_* functions) by the patterns below, and every
other function (the runtime, libc, host calls, the interpreters' call set-up) as `other`.

The families are the files of interpreter/src/engines/handlers/, so they follow how dlab's
handlers are written, not a neutral taxonomy: a fused compare-and-branch (CMPOP's `_br_if` forms)
is `numeric`, the register IR's branches and returns (`br_if_r`, `br_table_r`, `return_r1`) are
`control` as wasm3's are, its `copy_r` is `stack_locals_globals` as wasm3's CopySlot, a
superinstruction is `superinstructions`; wasm3's fused ops (op_i32_Add_rs, its BranchIf) are put
where their main operation is. Counts are cachegrind's (simulated branches), never times.

    python -m dispatchlab_analysis.where RUN_DIR [--experiment wasm_valgrind] [--peer P] [--engine E]
                                         [--out FILE] [--csv FILE]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

from .results import ResultFormatError, parse_params, read_table
from .tables import fmt_number, markdown_table

# wasm3's operations (m3_exec.h's d_m3Op and the macros built on it: op_<NAME>) by family, in the
# order tried: the first pattern that matches a function's name gives its family.
WASM3_FAMILIES = [
    ("memory", r"^op_(?:[iuf](?:32|64)_(?:Load|Store)|Mem(?:Size|Grow|Copy|Fill|Init)|DataDrop)"),
    ("tables", r"^op_(?:Table|ElemDrop)"),
    ("control", r"^op_(?:Branch|If_|Loop|ContinueLoop|Call|Return|Entry|End|Unreachable|Compile|Unsupported)"),
    ("stack_locals_globals",
     r"^op_(?:Const|CopySlot|PreserveCopySlot|SetSlot|PreserveSetSlot|SetRegister|GetGlobal|SetGlobal|Select|RefAsNonNull|Nop)"),
    ("numeric", r"^op_[iuf](?:32|64)_"),
]
METRICS = ["instructions", "loads", "stores", "branches", "mispredicts"]


def wasm3_family(function: str) -> str:
    """The family of one of wasm3's functions by its name; `other` for a function no pattern names."""
    name = function.split("(", 1)[0].strip()
    for family, pattern in WASM3_FAMILIES:
        if re.match(pattern, name):
            return family
    return "other"


def load_functions(run_dir: Path, experiment: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The experiment's functions table (numbers as numbers) and its summary, checked against the
    schema its sidecar declares."""
    sidecar_file = run_dir / f"{experiment}.json"
    functions_csv = run_dir / f"{experiment}.functions.csv"
    if not functions_csv.exists():
        raise FileNotFoundError(f"{functions_csv} does not exist: run `dlab wasm bench --valgrind --valgrind-functions "
                                f"--run-dir {run_dir} ...` first")
    sidecar = json.loads(sidecar_file.read_text())
    if "functions" not in sidecar.get("schema", {}):
        raise ResultFormatError(f"{sidecar_file}: its schema has no functions table")
    f = read_table(functions_csv, sidecar, "functions")
    for m in METRICS:
        f[m] = pd.to_numeric(f[m])
    summary = read_table(run_dir / f"{experiment}.summary.csv", sidecar, "summary")
    return f, summary


def engine_of_cases(summary: pd.DataFrame) -> dict[str, tuple[str, str, bool]]:
    """case -> (workload, engine, is a peer): a peer's cases are that peer (its name); each of dlab's
    is its engine, the case's name after the workload ("tail_pn", "tail/vec")."""
    out = {}
    for case, params in summary[["case", "params"]].drop_duplicates().itertuples(index=False):
        p = parse_params(params)
        workload = p.get("workload", case.split("/", 1)[0])
        peer = p.get("peer")
        engine = peer or (case.split("/", 1)[1] if "/" in case else case)
        out[case] = (workload, engine, bool(peer))
    return out


def run_peers(summary: pd.DataFrame) -> list[str]:
    """The peers the run counted beside dlab."""
    return sorted({engine for _, engine, peer in engine_of_cases(summary).values() if peer})


def run_engines(summary: pd.DataFrame) -> list[str]:
    """dlab's engines in the run, in the order of its cases."""
    return list(dict.fromkeys(engine for _, engine, peer in engine_of_cases(summary).values() if not peer))


def by_family(functions: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per workload, engine (each of dlab's engines apart, each peer) and family: the counts per call."""
    engines = engine_of_cases(summary)
    f = functions.copy()
    unknown = sorted(set(f["case"]) - set(engines))
    if unknown:
        raise ResultFormatError(f"functions rows of cases the summary does not have: {unknown[:3]}")
    f["workload"] = f["case"].map(lambda c: engines[c][0])
    f["engine"] = f["case"].map(lambda c: engines[c][1])
    is_dlab = ~f["case"].map(lambda c: engines[c][2])
    fam = f["family"].where(f["family"] != "", None)
    f["family"] = fam.where(is_dlab, f["function"].map(wasm3_family)).fillna("other")
    return f.groupby(["workload", "engine", "family"], as_index=False)[METRICS].sum()


def family_markdown(table: pd.DataFrame, peer: str, engine: str) -> str:
    """Per workload, a row per family: dlab's (one engine's) and the peer's instructions and stores
    per call, their ratio, and dlab's excess instructions as a share of the peer's."""
    parts = []
    for workload, g in table.groupby("workload", sort=True):
        d = g[g["engine"] == engine].set_index("family")
        p = g[g["engine"] == peer].set_index("family")
        if d.empty or p.empty:
            continue
        families = sorted(set(d.index) | set(p.index), key=lambda x: -(d["instructions"].get(x, 0) + p["instructions"].get(x, 0)))
        total_d, total_p = d["instructions"].sum(), p["instructions"].sum()
        rows = []
        for fam in families:
            di, pi = d["instructions"].get(fam, 0.0), p["instructions"].get(fam, 0.0)
            ds, ps = d["stores"].get(fam, 0.0), p["stores"].get(fam, 0.0)
            rows.append([fam, fmt_number(di), fmt_number(pi), fmt_number(di / pi, 3) if pi else "",
                         fmt_number(ds), fmt_number(ps), fmt_number(ds / ps, 3) if ps else "",
                         f"{100 * (di - pi) / total_p:+.1f}%" if total_p else ""])
        rows.append(["**all**", fmt_number(total_d), fmt_number(total_p), fmt_number(total_d / total_p, 3) if total_p else "",
                     fmt_number(d["stores"].sum()), fmt_number(p["stores"].sum()),
                     fmt_number(d["stores"].sum() / p["stores"].sum(), 3) if p["stores"].sum() else "",
                     f"{100 * (total_d - total_p) / total_p:+.1f}%" if total_p else ""])
        parts.append(f"#### {workload} (dlab `{engine}`)\n\n" + markdown_table(
            ["family", "dlab instr/call", f"{peer} instr/call", "ratio", "dlab stores/call", f"{peer} stores/call", "ratio",
             f"dlab - {peer}, share of {peer}'s total"], rows))
    if not parts:
        return f"(no workload has both dlab `{engine}`'s and {peer}'s functions)\n"
    return "\n".join(parts)


def report_section(run_dir: Path, experiment: str) -> str:
    """The report's section for an experiment with a functions table: the family table against
    each peer of the run; "" when the experiment has no functions table or no peer."""
    if not (Path(run_dir) / f"{experiment}.functions.csv").exists():
        return ""
    functions, summary = load_functions(Path(run_dir), experiment)
    table = by_family(functions, summary)
    parts = []
    for peer in run_peers(summary):
        for engine in run_engines(summary):
            parts.append(f"\n### Where dlab `{engine}` executes more than `{peer}`, by family (`{experiment}.functions.csv`)\n\n"
                         "Cachegrind's counts per call split by function: dlab's handlers by their handlers/ file, "
                         f"{peer}'s operations by name (dispatchlab_analysis.where); counts, not times.\n\n"
                         + family_markdown(table, peer, engine))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dispatchlab_analysis.where", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="a run directory with <experiment>.functions.csv")
    ap.add_argument("--experiment", default="wasm_valgrind", help="the cachegrind experiment (default: wasm_valgrind)")
    ap.add_argument("--peer", default=None, help="the peer to compare with (default: the one peer in the run)")
    ap.add_argument("--engine", default=None, help="dlab's engine to compare (the case's name after the workload; "
                    "default: the one engine in the run)")
    ap.add_argument("--out", type=Path, help="write the Markdown here (a new file) instead of stdout")
    ap.add_argument("--csv", type=Path, help="also write the per-family table as CSV (a new file)")
    a = ap.parse_args(argv)
    try:
        functions, summary = load_functions(a.run_dir, a.experiment)
        table = by_family(functions, summary)
        peers = run_peers(summary)
        peer = a.peer or (peers[0] if len(peers) == 1 else None)
        if peer is None or peer not in peers:
            raise ValueError(f"--peer must name one of the run's peers {peers}" if peers else
                             "the run has no peer: bench with --peer (wasm3: `just peers`)")
        engines = run_engines(summary)
        engine = a.engine or (engines[0] if len(engines) == 1 else None)
        if engine is None or engine not in engines:
            raise ValueError(f"--engine must name one of the run's engines {engines}")
        text = family_markdown(table, peer, engine)
        if a.out is not None and a.csv is not None and a.out.absolute() == a.csv.absolute():
            raise ValueError("--out and --csv name the same file")
        # Exclusive creation: an existing file, a device or a symbolic link (even a dangling one)
        # is refused, never written through or replaced.
        if a.csv is not None:
            with open(a.csv, "x", newline="") as f:
                table.to_csv(f, index=False)
        if a.out is not None:
            with open(a.out, "x") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
    except (OSError, ValueError, KeyError) as e:
        print(f"where: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
