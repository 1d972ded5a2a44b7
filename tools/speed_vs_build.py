#!/usr/bin/env python3
"""Is any engine slower than in another build of dlab? Runs `dlab wasm bench` with the same
options from two dlab binaries alternately (A B A B ..., so drift in the machine falls on both),
each run saved in a run directory, and compares every case's median TSC ticks per call, round by
round: the change is the median of the per-round ratios B/A - 1, with their range. With
--per-native (the default) each case is first divided by its workload's `native` case of the same
run (timed in the same interleaved rounds), so what the machine did between two runs cancels:
the change is then one of "times native", which the native code (the same C in both builds) does
not move.

    tools/speed_vs_build.py --before OLD/dlab --after build/release/dlab --rounds 3 \\
        --results results -- --quick --lowerings plain,fold+fuse+super

writes each run's directory under --results (the after-build's runs as <name>_after_<k>, the
before-build's as <name>_before_<k>, all in one new run directory of the after-build) and a
Markdown table, speed_vs_build.md, beside them; exits 1 when a case's median change is worse
than --worse-than (default 0.02) and every round agrees it got slower, 2 on bad input. Child
processes run from argument vectors, never a shell."""
from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
from pathlib import Path


def run_bench(dlab: str, run_dir: Path, name: str, bench_args: list[str]) -> None:
    cmd = [dlab, "wasm", "bench", *bench_args, "--name", name, "--run-dir", str(run_dir)]
    print("==", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def medians(path: Path, metric: str) -> dict[str, float]:
    with path.open() as f:
        return {r.get("case", r.get("variant")): float(r["median"]) for r in csv.DictReader(f) if r["metric"] == metric and r["median"]}


def per_native(m: dict[str, float]) -> dict[str, float]:
    """Each engine case over its workload's native case ("workload/..." over "workload/native")."""
    out = {}
    for case, v in m.items():
        native = m.get(case.split("/", 1)[0] + "/native")
        if native and not case.endswith("/native"):
            out[case] = v / native
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="the other build's dlab binary")
    p.add_argument("--after", required=True, help="this build's dlab binary (its run directory holds everything)")
    p.add_argument("--rounds", type=int, default=3, help="A B rounds (1..20, default 3)")
    p.add_argument("--results", default="results", help="results root for the new run directory")
    p.add_argument("--name", default="wasm_speed", help="experiment name stem (lower-case letters, digits, _)")
    p.add_argument("--metric", default="tsc_ticks")
    p.add_argument("--worse-than", type=float, default=0.02)
    p.add_argument("--absolute", action="store_true", help="compare raw medians, not each case divided by its run's native case")
    p.add_argument("bench_args", nargs="*", help="after --: options for `dlab wasm bench`")
    args = p.parse_args(argv)
    if not 1 <= args.rounds <= 20:
        p.error("--rounds must be 1..20")
    for b in (args.before, args.after):
        if not Path(b).is_file():
            p.error(f"{b} is not a file")
    try:
        run = Path(subprocess.run([args.after, "new-run", "--results", args.results], check=True, capture_output=True,
                                  text=True).stdout.strip())
        per_round: dict[str, list[float]] = {}
        for k in range(1, args.rounds + 1):
            run_bench(args.before, run, f"{args.name}_before_{k}", args.bench_args)
            run_bench(args.after, run, f"{args.name}_after_{k}", args.bench_args)
            a = medians(run / f"{args.name}_before_{k}.summary.csv", args.metric)
            b = medians(run / f"{args.name}_after_{k}.summary.csv", args.metric)
            if not args.absolute:
                a, b = per_native(a), per_native(b)
            for case in sorted(a.keys() & b.keys()):
                per_round.setdefault(case, []).append(b[case] / a[case] - 1)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"speed_vs_build: {e}", file=sys.stderr)
        return 2
    what = "per call" if args.absolute else "per call, over the same run's native case"
    lines = [f"# {args.metric} {what}: after ({args.after}) against before ({args.before})\n",
             f"{args.rounds} rounds, each `dlab wasm bench {' '.join(args.bench_args)}` from the before-build and then the "
             "after-build; change = median over rounds of after/before - 1, with the rounds' range.\n",
             "| case | change | range |", "|---|---:|---:|"]
    slower = []
    for case, changes in per_round.items():
        mid = statistics.median(changes)
        lines.append(f"| {case} | {mid:+.2%} | [{min(changes):+.2%}, {max(changes):+.2%}] |")
        if mid > args.worse_than and min(changes) > 0:
            slower.append(case)
    engines = [c for c in per_round if not c.endswith("/native")]
    lines.append(f"\n{len(engines)} engine cases; median change over them "
                 f"{statistics.median(statistics.median(per_round[c]) for c in engines):+.2%}; "
                 f"slower by more than {args.worse_than:.0%} in every round: {', '.join(slower) or 'none'}")
    (run / "speed_vs_build.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {run / 'speed_vs_build.md'}", file=sys.stderr)
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
