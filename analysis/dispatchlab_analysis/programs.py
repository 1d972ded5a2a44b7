"""The table of `dlab wasm programs`: whole WASI programs built by others, each a process in
dlab-run and in every peer, per program its wall time per run (start-up included), `x peer` (the
peer's time over dlab-run's, above 1 where dlab-run is faster), each engine's peak resident memory,
and where a peer cannot run a program, why. The geometric mean of `x peer` is over the held-out
programs that peer ran; start-up programs are listed apart from it, selection programs neither."""
from __future__ import annotations

import math

from .results import parse_params, with_case
from .tables import markdown_table


def _ms(ms: float) -> str:
    """Three significant digits, without an exponent: 0.913, 4.88, 2,040."""
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.3g}"


def _mib(kb: str) -> str:
    """A row's peak_rss_kb (text, empty where GNU time could not say) in MiB."""
    return f"{float(kb) / 1024:.3g}" if kb else ""


def programs_rows(exp) -> list[dict]:
    """One dict per (program, peer): the program's role, toolchain, dlab-run's ms and MiB, the
    peer's ms, ratio and MiB, and a note: why the peer cannot run it, or what the table lacks."""
    hz = exp.sidecar.get("machine", {}).get("tsc", {}).get("hz")
    summary = with_case(exp.summary)
    ticks = summary[(summary["metric"] == "tsc_ticks") & (summary["n"] > 0)]
    by_case = {r.case: r for r in ticks.itertuples()}
    rows = []
    for group in exp.sidecar.get("programs", []):
        name = group["program"]
        base = by_case.get(group["baseline"])
        if base is None or not hz:
            # Said, not dropped: a program the table cannot time (no TSC rate, no row of dlab-run's).
            rows.append({"program": name, "role": group["role"], "toolchain": group["toolchain"], "peer": "", "dlab_ms": math.nan,
                         "dlab_mib": "", "peer_ms": math.nan, "ratio": math.nan, "peer_mib": "",
                         "note": "no TSC rate in the sidecar" if not hz else f"no timed row of {group['baseline']}"})
            continue
        base_params = parse_params(base.params)
        for engine, note in group.get("engines", {}).items():
            if engine == "dlab-run":
                continue
            row = {"program": name, "role": group["role"], "toolchain": group["toolchain"], "peer": engine,
                   "dlab_ms": float(base.median) / hz * 1e3, "dlab_mib": _mib(base_params.get("peak_rss_kb", "")),
                   "peer_ms": math.nan, "ratio": math.nan, "peer_mib": "", "note": ""}
            if not note.get("runs"):
                row["note"] = f"cannot run it: {note.get('why', '')}"
            else:
                peer = by_case.get(f"{name}/{engine}")
                if peer is None:
                    row["note"] = f"no timed row of {name}/{engine}"
                else:
                    row["peer_ms"] = float(peer.median) / hz * 1e3
                    row["ratio"] = row["peer_ms"] / row["dlab_ms"]
                    row["peer_mib"] = _mib(parse_params(peer.params).get("peak_rss_kb", ""))
            rows.append(row)
        if len(group.get("engines", {})) == 1:  # dlab-run alone: no peer asked for
            rows.append({"program": name, "role": group["role"], "toolchain": group["toolchain"], "peer": "",
                         "dlab_ms": float(base.median) / hz * 1e3, "dlab_mib": _mib(base_params.get("peak_rss_kb", "")),
                         "peer_ms": math.nan, "ratio": math.nan, "peer_mib": "", "note": ""})
    return rows


def programs_markdown(exp) -> str:
    rows = programs_rows(exp)
    if not rows:
        return "No program was timed (no TSC rate in the sidecar, or no programs).\n"
    table, means = [], {}
    for r in rows:
        ran = math.isfinite(r["ratio"])
        if ran and r["role"] == "held_out":
            means.setdefault(r["peer"], []).append(r["ratio"])
        table.append([r["program"], r["role"].replace("_", " "), r["toolchain"],
                      _ms(r["dlab_ms"]) if math.isfinite(r["dlab_ms"]) else "", r["dlab_mib"], r["peer"],
                      _ms(r["peer_ms"]) if ran else "", f"{r['ratio']:.2f}" if ran else "", r["peer_mib"] if ran else "", r["note"]])
    for peer, rs in means.items():
        table.append([f"geometric mean, held out ({len(rs)})", "", "", "", "", peer, "",
                      f"{math.exp(sum(map(math.log, rs)) / len(rs)):.2f}", "", ""])
    engine = exp.sidecar.get("dlab_run_engine", "")
    return ("Whole programs as processes, each engine in the program's folder, wall time per run with its start-up "
            "(TSC ticks; the median of the run's samples), peak resident memory of one more run (GNU time). `x peer` is "
            "the peer's time over dlab-run's, above 1 where dlab-run is faster. Every engine's output was checked "
            "against the list's sha256 before timing. No technique or default was chosen from a held-out program."
            + (f" dlab-run's engine: {engine}." if engine else "") + "\n\n"
            + markdown_table(["program", "role", "toolchain", "dlab-run ms", "dlab-run peak MiB", "peer", "peer ms", "x peer",
                              "peer peak MiB", "note"], table))
