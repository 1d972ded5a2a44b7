#!/usr/bin/env python3
"""Where a fresh clone's set-up time goes: step-seconds of the build per area and its slowest steps
(from the build folder's own .ninja_log), the slowest ctest tests (CTest's CTestCostData.txt), the
slowest pytest tests (the JUnit XML `just test` writes) and the wall time of each phase of
`just test` (the phases file it writes), as one Markdown report.

    tools/time_budget.py build/release                # the report, on stdout
    tools/time_budget.py build/release --json F       # the same figures as JSON too

A build step's time is its wall time in .ninja_log ("step-seconds"). Ninja runs cores + 2 jobs by
default, so on two cores four compiles share them and a step's wall time is up to twice its CPU
time: compare areas by their shares, and the build's wall time (the phases) with other builds'. A folder built more than once has one entry per
output, the last one kept; a report of a fresh clone's build is a report of its first and only run.
Nothing here assumes the machine: the CPU model is read from /proc/cpuinfo and printed with it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

# Areas, first match wins: (name, regular expression on the ninja output path). An output that
# matches none is "other" (the report lists it, so a new kind of step is seen, never hidden).
AREAS: list[tuple[str, str]] = [
    ("interpreter engines (generated dispatch TUs)", r"^interpreter/CMakeFiles/dlab_wasm\.dir/generated/dispatch_.*\.o$"),
    ("interpreter tests", r"^interpreter/tests/"),
    ("interpreter library", r"^interpreter/CMakeFiles/dlab_wasm\.dir/"),
    ("interpreter workloads and corpus", r"^interpreter/(workloads|corpus|CMakeFiles/dlab_native_kernels)"),
    ("models generated handlers", r"^models/CMakeFiles/dlab_model_handlers\.dir/"),
    ("models tests (asm and test programs)", r"^models/tests/"),
    ("models dispatch-site count", r"^models/dispatch_sites\.tsv$"),
    ("models library, generator, bench", r"^models/"),
    ("harness tests", r"^harness/tests/"),
    ("harness library", r"^harness/"),
    ("probes tests", r"^probes/tests/"),
    ("probes library", r"^probes/"),
    ("predictors tests", r"^predictors/tests/"),
    ("predictors library", r"^predictors/"),
    ("dlab command line", r"^CMakeFiles/dlab\.dir/"),
    ("links", r"^(dlab|dlab-model-exec|models_bench|[^/]*\.(a|so))$"),
]


@dataclass
class Step:
    output: str
    seconds: float
    area: str = ""


@dataclass
class Report:
    cpu: str
    steps: list[Step] = field(default_factory=list)
    ctest: list[tuple[str, float]] = field(default_factory=list)
    pytest: list[tuple[str, float]] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    within: dict[str, str] = field(default_factory=dict)  # a phase that ran inside another: its parent
    notes: list[str] = field(default_factory=list)


class BudgetError(Exception):
    """A file that exists but cannot be read as what it should be: file:line and why."""


def area_of(output: str) -> str:
    for name, pattern in AREAS:
        if re.search(pattern, output):
            return name
    if output.endswith((".a", ".so")) or "/" not in output or re.search(r"(^|/)[^/.]+$", output):
        return "links"
    return "other"


def read_ninja_log(path: Path) -> list[Step]:
    """The last entry per output of a .ninja_log (v5: start_ms, end_ms, mtime, output, hash); a
    custom command's output, logged by its absolute path, is named relative to the build folder."""
    prefix = str(path.parent.resolve()) + "/"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# ninja log v"):
        raise BudgetError(f"{path}:1: not a ninja log (no '# ninja log v5' header)")
    last: dict[str, Step] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 5:
            raise BudgetError(f"{path}:{number}: expected 5 tab-separated fields, found {len(parts)}")
        try:
            start, end = int(parts[0]), int(parts[1])
        except ValueError:
            raise BudgetError(f"{path}:{number}: start and end must be integers (milliseconds)") from None
        if end < start:
            raise BudgetError(f"{path}:{number}: ends ({end} ms) before it starts ({start} ms)")
        output = parts[3].removeprefix(prefix)
        last[output] = Step(output, (end - start) / 1000.0, area_of(output))
    return list(last.values())


def read_ctest_costs(path: Path) -> list[tuple[str, float]]:
    """CTestCostData.txt: 'NAME RUNS AVERAGE_SECONDS' per test, up to a '---' line (the failed ones after)."""
    tests = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("---"):
            break
        # A test's name may hold spaces (GoogleTest's '# GetParam() = ...'): runs and seconds are the
        # last two fields.
        parts = line.rsplit(maxsplit=2)
        if len(parts) != 3:
            raise BudgetError(f"{path}:{number}: expected 'name runs seconds', found {line!r}")
        try:
            tests.append((parts[0], float(parts[2])))
        except ValueError:
            raise BudgetError(f"{path}:{number}: the seconds are not a number: {parts[2]!r}") from None
    return tests


def read_junit(path: Path) -> list[tuple[str, float]]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise BudgetError(f"{path}:{e.position[0]}: not JUnit XML ({e})") from None
    tests = []
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        # A case without its time is said, never counted as 0 s (ElementTree keeps no line numbers).
        try:
            tests.append((name, float(case.get("time", ""))))
        except ValueError:
            raise BudgetError(f"{path}: test case {name!r} has no time in seconds ({case.get('time')!r})") from None
    return tests


def read_phases(path: Path) -> tuple[dict[str, float], dict[str, str]]:
    """The phases file, as `just test` writes it: one 'NAME SECONDS' per line, or 'NAME SECONDS within
    PARENT' for a phase that ran inside another (ctest and pytest run side by side within `tests`).
    Returns the phases' seconds and, for those within another, its name."""
    phases, within = {}, {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if len(parts) not in (2, 4) or (len(parts) == 4 and parts[2] != "within"):
            raise BudgetError(f"{path}:{number}: expected 'phase seconds' or 'phase seconds within parent', found {line!r}")
        try:
            phases[parts[0]] = float(parts[1])
        except ValueError:
            raise BudgetError(f"{path}:{number}: the seconds are not a number: {parts[1]!r}") from None
        if len(parts) == 4:
            within[parts[0]] = parts[3]
    for name, parent in within.items():
        if parent not in phases or parent in within:
            raise BudgetError(f"{path}: phase {name} is within {parent!r}, which is not a top-level phase of the file")
    return phases, within


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The first processor's model name, family and model, as /proc/cpuinfo gives them."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown (no /proc/cpuinfo)"
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name", "unknown")
    if "cpu family" in fields:
        return f"{name} (family {fields['cpu family']}, model {fields.get('model', '?')})"
    return name


def collect(build: Path, cpuinfo: Path = Path("/proc/cpuinfo")) -> Report:
    report = Report(cpu=cpu_model(cpuinfo))
    # Each source: its file, how it is read, where it goes and what its absence means.
    sources = [
        (build / ".ninja_log", read_ninja_log, "steps", "build first (`just build`)"),
        (build / "Testing" / "Temporary" / "CTestCostData.txt", read_ctest_costs, "ctest", "no ctest run in this build folder"),
        (build / "pytest-junit.xml", read_junit, "pytest", "no pytest run by `just test` in this build folder"),
        (build / "test-phases.txt", read_phases, "phases", "the phases' wall times are written by `just test`"),
    ]
    for path, read, field, absent in sources:
        if path.exists():
            if field == "phases":
                report.phases, report.within = read(path)
            else:
                setattr(report, field, read(path))
        else:
            report.notes.append(f"no {path}: {absent}")
    return report


def by_area(steps: list[Step]) -> list[tuple[str, int, float]]:
    totals: dict[str, list[float]] = {}
    for s in steps:
        totals.setdefault(s.area, []).append(s.seconds)
    rows = [(area, len(t), sum(t)) for area, t in totals.items()]
    return sorted(rows, key=lambda r: -r[2])


def minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def markdown(report: Report, top: int = 12) -> str:
    out = [f"Machine running this report: {report.cpu}, {os.cpu_count()} cores (the build folder's own when run where it was built)", ""]
    if report.phases:
        out += ["| phase of `just test` | wall |", "|---|---:|"]
        out += [f"| {name} (within {report.within[name]}) | {minutes(sec)} |" if name in report.within
                else f"| {name} | {minutes(sec)} |" for name, sec in report.phases.items()]
        top_level = sum(sec for name, sec in report.phases.items() if name not in report.within)
        out += [f"| **all** | **{minutes(top_level)}** |", ""]
    if report.steps:
        total = sum(s.seconds for s in report.steps)
        out += [f"Build: {len(report.steps)} steps, {total:,.0f} step-seconds (.ninja_log; with more jobs than cores, steps overlap).", ""]
        out += ["| area | steps | step-s | share |", "|---|---:|---:|---:|"]
        out += [f"| {a} | {n} | {sec:,.0f} | {100 * sec / total:.0f}% |" for a, n, sec in by_area(report.steps)]
        out += ["", f"Slowest {top} build steps:", "", "| step | s |", "|---|---:|"]
        for s in sorted(report.steps, key=lambda s: -s.seconds)[:top]:
            out.append(f"| `{s.output}` | {s.seconds:.1f} |")
        out.append("")
    for title, tests in (("ctest", report.ctest), ("pytest", report.pytest)):
        if not tests:
            continue
        total = sum(t for _, t in tests)
        out += [f"{title}: {len(tests)} tests, {total:,.0f} s summed (run in parallel; the phase's wall time is above).", ""]
        out += [f"| slowest {title} tests | s |", "|---|---:|"]
        out += [f"| `{name}` | {sec:.1f} |" for name, sec in sorted(tests, key=lambda t: -t[1])[:top]]
        out.append("")
    out += [f"({note})" for note in report.notes]
    return "\n".join(out).rstrip() + "\n"


def as_json(report: Report) -> dict:
    return {
        "cpu": report.cpu,
        "phases": report.phases,
        "phases_within": report.within,
        "build": {"steps": len(report.steps), "step_seconds": sum(s.seconds for s in report.steps),
                  "areas": [{"area": a, "steps": n, "step_seconds": sec} for a, n, sec in by_area(report.steps)]},
        "ctest": dict(report.ctest),
        "pytest": dict(report.pytest),
        "notes": report.notes,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", type=Path, help="the build folder (build/release)")
    ap.add_argument("--top", type=int, default=12, help="how many of the slowest steps and tests to list (default 12)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    args = ap.parse_args(argv)
    if args.top < 1:
        ap.error("--top must be at least 1")
    if not args.build.is_dir():
        print(f"time_budget: {args.build} is not a folder (the build folder, e.g. build/release)", file=sys.stderr)
        return 2
    try:
        report = collect(args.build)
    except (BudgetError, OSError, UnicodeDecodeError) as e:
        print(f"time_budget: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(markdown(report, args.top))
    if args.json:
        try:
            args.json.write_text(json.dumps(as_json(report), indent=1) + "\n", encoding="utf-8")
        except OSError as e:
            print(f"time_budget: cannot write {args.json}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
