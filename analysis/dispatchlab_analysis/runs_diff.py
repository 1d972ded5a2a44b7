"""One experiment's metric in two runs, case by case: did a change make any case worse?

Meant for deterministic metrics (cachegrind's instructions per call: the same on any machine for
the same code), where two runs made at different times compare; a timed metric compares only
within one interleaved run (the harness's ratio columns), never across runs, and this refuses
one unless --allow-timed says the caller knows.

    python -m dispatchlab_analysis.runs_diff BEFORE_RUN AFTER_RUN --experiment wasm_valgrind \
        --metric cg_instructions [--worse-than 0.02]

prints a Markdown table (case, before, after, change) and exits 1 when a case got worse by more
than --worse-than (a fraction), 2 on bad input."""
from __future__ import annotations

import argparse
import sys

import pandas as pd

from .results import load_run, parse_params

DETERMINISTIC_BACKENDS = {"valgrind"}


def diff(before: pd.DataFrame, after: pd.DataFrame, metric: str, allow_timed: bool = False) -> pd.DataFrame:
    """Per case in both runs: before, after and the change (after / before - 1) of `metric`'s
    median. Cases in only one run are left out and listed by `unmatched`."""
    b = before[(before["metric"] == metric) & (before["n"] > 0)]
    a = after[(after["metric"] == metric) & (after["n"] > 0)]
    if b.empty or a.empty:
        raise ValueError(f"metric {metric!r} has no measured rows in {'the first' if b.empty else 'the second'} run")
    backends = set(b["backend"]) | set(a["backend"])
    if not allow_timed and not backends <= DETERMINISTIC_BACKENDS:
        raise ValueError(f"metric {metric!r} is measured by {sorted(backends)}: a timed metric does not compare across runs "
                         "(use one interleaved run's ratios, or pass --allow-timed)")
    merged = b[["case", "params", "median"]].merge(a[["case", "params", "median"]], on="case", suffixes=("_before", "_after"))
    # The same case: every parameter both runs record is the same (a later run may record more,
    # e.g. clock=real, which an earlier one did not have).
    same = [same_params(x, y) for x, y in zip(merged["params_before"], merged["params_after"])]
    merged = merged[same].copy()
    merged["change"] = merged["median_after"] / merged["median_before"] - 1
    return merged[["case", "median_before", "median_after", "change"]].rename(
        columns={"median_before": "before", "median_after": "after"}).reset_index(drop=True)


def same_params(before: str, after: str) -> bool:
    b, a = parse_params(before), parse_params(after)
    return all(a[k] == v for k, v in b.items() if k in a)


def unmatched(before: pd.DataFrame, after: pd.DataFrame, metric: str) -> tuple[list[str], list[str]]:
    b = set(before[before["metric"] == metric]["case"])
    a = set(after[after["metric"] == metric]["case"])
    return sorted(b - a), sorted(a - b)


def markdown(d: pd.DataFrame) -> str:
    lines = ["| case | before | after | change |", "|---|---:|---:|---:|"]
    for r in d.itertuples():
        lines.append(f"| {r.case} | {r.before:,.0f} | {r.after:,.0f} | {r.change:+.2%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="runs_diff", description=__doc__.split("\n\n")[0])
    p.add_argument("before", help="run directory (results/<cpu>/<run>)")
    p.add_argument("after", help="run directory")
    p.add_argument("--experiment", required=True, help="e.g. wasm_valgrind")
    p.add_argument("--metric", required=True, help="e.g. cg_instructions")
    p.add_argument("--worse-than", type=float, default=0.02, help="a fraction: exit 1 if a case grew more (default 0.02)")
    p.add_argument("--allow-timed", action="store_true", help="compare a timed metric across runs anyway")
    args = p.parse_args(argv)
    if not 0 <= args.worse_than < 10:
        p.error("--worse-than must be a fraction in [0, 10)")
    try:
        runs = [load_run(args.before), load_run(args.after)]
        frames = []
        for run in runs:
            if args.experiment not in run.experiments:
                raise ValueError(f"{run.path} has no experiment {args.experiment!r} (it has {sorted(run.experiments)})")
            frames.append(run.experiments[args.experiment].summary)
        d = diff(frames[0], frames[1], args.metric, args.allow_timed)
    except (OSError, ValueError) as e:
        print(f"runs_diff: {e}", file=sys.stderr)
        return 2
    print(markdown(d))
    only_before, only_after = unmatched(frames[0], frames[1], args.metric)
    if only_before or only_after:
        print(f"\nonly in the first run: {', '.join(only_before) or '-'}; only in the second: {', '.join(only_after) or '-'}")
    worse = d[d["change"] > args.worse_than]
    print(f"\n{len(d)} cases; largest change {d['change'].max():+.2%}, smallest {d['change'].min():+.2%}; "
          f"{len(worse)} worse by more than {args.worse_than:.0%}")
    return 1 if len(worse) else 0


if __name__ == "__main__":
    sys.exit(main())
