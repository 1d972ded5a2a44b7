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
