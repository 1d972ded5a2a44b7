"""RFC-ready Markdown tables from result frames."""
from __future__ import annotations

import math

import pandas as pd


def fmt_number(x: float, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}g}"


def fmt_change(ratio: float) -> str:
    """0.66 -> '-34%', 1.05 -> '+5%'."""
    if ratio is None or math.isnan(ratio):
        return ""
    pct = (ratio - 1.0) * 100.0
    return f"{pct:+.0f}%" if abs(pct) >= 0.5 else "0%"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    def cell(s: str) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def counters_markdown(counters: pd.DataFrame) -> str:
    """One row per metric: the candidate a measurement uses, or why none is available."""
    rows = []
    for metric, group in counters.groupby("metric", sort=False):
        chosen = group[group["selected"]]
        if len(chosen):
            c = chosen.iloc[0]
            status = "estimated" if c["estimated"] else "available"
            rows.append([metric, status, c["backend"], f"`{c['native_event']}`", c["reason"]])
        else:
            reasons = "; ".join(f"{r.backend}: {r.reason}" if r.backend else r.reason for r in group.itertuples())
            events = ", ".join(f"`{e}`" for e in group["native_event"] if e)
            rows.append([metric, "**unavailable**", "", events, reasons])
    return markdown_table(["metric", "status", "backend", "native event", "reason / note"], rows)


def summary_markdown(summary: pd.DataFrame) -> str:
    """Measured metrics per variant with spread and change against the baseline variant."""
    measured = summary[summary["n"] > 0]
    rows = []
    for r in measured.itertuples():
        change = ""
        if r.variant != r.baseline and not math.isnan(r.ratio):
            change = (f"{fmt_change(r.ratio)} [{fmt_change(r.ratio_ci95_lo)}, {fmt_change(r.ratio_ci95_hi)}], "
                      f"{int(r.smaller_k)}/{int(r.smaller_n)} smaller")
        elif r.variant == r.baseline:
            change = "baseline"
        rows.append([r.variant, r.metric + (" (estimate)" if r.estimated else ""), fmt_number(r.median),
                     f"[{fmt_number(r.ci95_lo)}, {fmt_number(r.ci95_hi)}]", fmt_number(r.mad), r.unit, change])
    return markdown_table(["variant", "metric", "median", "95% CI", "MAD", "unit", "vs baseline"], rows)


def unavailable_markdown(summary: pd.DataFrame) -> str:
    gaps = summary[summary["n"] == 0].drop_duplicates("metric")
    if gaps.empty:
        return "Every metric was measured.\n"
    rows = [[g.metric, g.unavailable_reason] for g in gaps.itertuples()]
    return markdown_table(["metric (empty in the tables)", "reason"], rows)


def parse_params(params: str) -> dict[str, str]:
    """'copies=16;dispatch=tail' -> {'copies': '16', 'dispatch': 'tail'}"""
    return dict(p.split("=", 1) for p in params.split(";") if "=" in p)


# (metric, column label, scale): per-dispatch values, some shown per 1k dispatches.
MODEL_COLUMNS = [
    ("cycles", "cycles", 1),
    ("instructions", "instructions", 1),
    ("memory_order_flushes", "flushes/1k", 1000),
    ("store_forward_blocks", "st-fwd blocks/1k", 1000),
    ("backend_bound", "back-end bound", 1),
    ("branch_mispredicts", "mispredicts/1k", 1000),
]
# The interpreter's counts are per call (millions of instructions), so mispredicts are per call too.
WASM_VALGRIND_COLUMNS = [
    ("cg_instructions", "instructions", 1),
    ("cg_loads", "loads", 1),
    ("cg_stores", "stores", 1),
    ("cg_mispredicts", "sim. mispredicts", 1),
]
VALGRIND_COLUMNS = [
    ("cg_instructions", "instructions", 1),
    ("cg_loads", "loads", 1),
    ("cg_stores", "stores", 1),
    ("cg_mispredicts", "sim. mispredicts/1k", 1000),
]


def wide_markdown(summary: pd.DataFrame, headline: str | None, columns: list[tuple[str, str, float]]) -> str:
    """One row per case: the headline metric with its CI and change against the group's baseline,
    then one column per other metric (empty where unavailable; see the unavailable list)."""
    cells = {(r.variant, r.metric): r for r in summary.itertuples()}
    variants = list(dict.fromkeys(summary["variant"]))
    header = ["case", "dispatch sites"]
    if headline:
        header += [f"{headline} [95% CI]", "vs group baseline"]
    present = [c for c in columns if any(cells.get((v, c[0])) is not None and cells[(v, c[0])].n > 0 for v in variants)]
    header += [label for _, label, _ in present]
    rows = []
    for v in variants:
        any_row = next(r for (vv, _), r in cells.items() if vv == v)
        row = [v, parse_params(any_row.params).get("indirect_jump_sites", "")]
        if headline:
            h = cells.get((v, headline))
            if h is not None and h.n > 0:
                row.append(f"{fmt_number(h.median)} [{fmt_number(h.ci95_lo)}, {fmt_number(h.ci95_hi)}]")
                if h.variant == h.baseline:
                    row.append("baseline")
                elif not math.isnan(h.ratio):
                    row.append(f"{fmt_change(h.ratio)} [{fmt_change(h.ratio_ci95_lo)}, {fmt_change(h.ratio_ci95_hi)}], "
                               f"{int(h.smaller_k)}/{int(h.smaller_n)} faster")
                else:
                    row.append("")
            else:
                row += ["", ""]
        for metric, _, scale in present:
            c = cells.get((v, metric))
            row.append(fmt_number(c.median * scale) if c is not None and c.n > 0 else "")
        rows.append(row)
    return markdown_table(header, rows)


def rfc_change_table(runs, copies: int | None = None) -> str:
    """RFC-ready: change of each stack variant against `vec`, one column per CPU (the latest run of
    each CPU that has models), at the largest handler count of each run unless `copies` is given.
    Changes are ratios within one interleaved run, so they do not depend on any calibration. The
    baseline's absolute cycles are shown only where cycles were counted, or estimated with a TSC
    calibration that passed its cross-check; elsewhere the cell says why not."""
    from .figures import pick_cycles, with_params
    from .results import cycle_estimate_status, uarch_name
    columns, cells, variants, notes = [], {}, [], []
    for run in runs:
        if "models" not in run.experiments:
            continue
        df = with_params(run.experiments["models"].summary)
        s = df[df["model"] == "stack"]
        if s.empty:
            continue
        metric, _ = pick_cycles(s)
        k = copies if copies is not None else int(s["copies"].max())
        s = s[(s["copies"] == k) & (s["metric"] == metric)]
        cpu = f"{run.machine.get('cpu_slug', run.path.parent.name)} ({k * 10} handlers)"
        columns.append(cpu)
        trusted, why = cycle_estimate_status(run.machine)
        absolute = metric == "cycles" or (metric == "cycles_tsc_estimate" and trusted)
        if metric == "cycles":
            notes.append(f"{cpu}: {uarch_name(run.machine)}, counted cycles")
        elif absolute:
            notes.append(f"{cpu}: {uarch_name(run.machine)}, TSC-estimated cycles ({why})")
        else:
            notes.append(f"{cpu}: {uarch_name(run.machine)}, changes only; absolute cycles not shown: {why}")
        for r in s.itertuples():
            if r.variant not in variants:
                variants.append(r.variant)
            if r.case == r.baseline:
                cells[(r.variant, cpu)] = (f"{fmt_number(r.median)} cycles (baseline)" if absolute and r.n > 0
                                           else "baseline")
            elif r.n > 0 and not math.isnan(r.ratio):
                cells[(r.variant, cpu)] = (f"{fmt_change(r.ratio)} [{fmt_change(r.ratio_ci95_lo)}, {fmt_change(r.ratio_ci95_hi)}], "
                                           f"{int(r.smaller_k)}/{int(r.smaller_n)} faster")
    rows = [[v] + [cells.get((v, c), "") for c in columns] for v in variants]
    table = markdown_table(["variant"] + columns, rows)
    return table + "".join(f"\n{n}" for n in notes) + ("\n" if notes else "")


def latest_runs(results_root) -> list:
    """The latest run with models of every CPU under results/."""
    from pathlib import Path

    from .results import load_run
    runs = []
    root = Path(results_root)
    if not (root / "README.md").exists():  # not a dispatchlab results folder
        return runs
    for cpu in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "probes"):
        candidates = sorted(d for d in cpu.iterdir() if d.is_dir() and (d / "models.summary.csv").exists())
        if candidates:
            runs.append(load_run(candidates[-1]))
    return runs
