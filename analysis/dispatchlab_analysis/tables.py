"""RFC-ready Markdown tables from result frames."""
from __future__ import annotations

import math

import pandas as pd

from .results import (cycle_estimate_status, parse_params, pick_common_cycles, pick_cycles, research_stack_config,
                      nearest, rows_whose_baseline, run_emulation, uarch_name, with_case, with_params)


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


def change_ci(ratio: float, lo: float, hi: float) -> str:
    """A change with its 95% CI, from ratios: (0.66, 0.60, 0.70) -> '-34% [-40%, -30%]'."""
    return f"{fmt_change(ratio)} [{fmt_change(lo)}, {fmt_change(hi)}]"


def change_cell(r, smaller: str = "faster") -> str:
    """A summary row's change against its group's baseline with its CI and in how many rounds it was
    smaller: '-34% [-40%, -30%], 11/11 faster'; empty where it was not measured. Every "change
    [lo, hi]" cell of the tables is written by this (or by change_ci, its first part)."""
    if r.n > 0 and not math.isnan(r.ratio):
        return f"{change_ci(r.ratio, r.ratio_ci95_lo, r.ratio_ci95_hi)}, {int(r.smaller_k)}/{int(r.smaller_n)} {smaller}"
    return ""


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
    """Measured metrics per case with spread and change against the group's baseline case."""
    measured = with_case(summary[summary["n"] > 0])
    rows = []
    for r in measured.itertuples():
        change = "baseline" if r.case == r.baseline else change_cell(r, "smaller")
        rows.append([r.case, r.metric + (" (estimate)" if r.estimated else ""), fmt_number(r.median),
                     f"[{fmt_number(r.ci95_lo)}, {fmt_number(r.ci95_hi)}]", fmt_number(r.mad), r.unit, change])
    return markdown_table(["case", "metric", "median", "95% CI", "MAD", "unit", "vs baseline"], rows)


def unavailable_markdown(summary: pd.DataFrame) -> str:
    gaps = summary[summary["n"] == 0].drop_duplicates("metric")
    if gaps.empty:
        return "Every metric was measured.\n"
    rows = [[g.metric, g.unavailable_reason] for g in gaps.itertuples()]
    return markdown_table(["metric (empty in the tables)", "reason"], rows)


# (metric, column label, scale): per-dispatch values, some shown per 1k dispatches.
MODEL_COLUMNS = [
    ("cycles", "cycles", 1),
    ("instructions", "instructions", 1),
    ("memory_order_flushes", "flushes/1k", 1000),
    ("store_forward_blocks", "st-fwd blocks/1k", 1000),
    ("backend_bound", "back-end bound", 1),
    ("branch_mispredicts", "mispredicts/1k", 1000),
]
# The interpreter's timed tables (per call): the models' columns, task-clock, and energy per call
# where RAPL (or macOS) counted it; on a machine without it these columns are absent and the
# unavailable list under the table says why.
WASM_COLUMNS = MODEL_COLUMNS + [
    ("task_clock", "task-clock ns", 1),
    ("energy_joules", "energy uJ (package)", 1e6),
    ("energy_cores_joules", "energy uJ (cores)", 1e6),
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


def simulated_columns(summary: pd.DataFrame, quantity: str) -> list[tuple[str, str, float]]:
    """The columns of one simulated quantity (models_simulated's `simulated_<quantity>[<predictor>]`
    metrics), labelled by predictor, per 1k dispatches."""
    prefix = f"simulated_{quantity}["
    metrics = dict.fromkeys(m for m in summary["metric"] if m.startswith(prefix))
    return [(m, m[len(prefix):-1], 1000) for m in metrics]


def simulated_markdown(summary: pd.DataFrame, note: str) -> str:
    """models_simulated: a table per quantity (memory-order flushes, indirect and conditional
    mispredicts), a column per predictor, per 1k dispatches; every number simulated."""
    parts = [note]
    for quantity, what in (("memory_order_flushes", "Simulated memory-order flushes"),
                           ("indirect_mispredicts", "Simulated indirect-branch mispredicts (the dispatch)"),
                           ("conditional_mispredicts", "Simulated conditional-branch mispredicts")):
        columns = simulated_columns(summary, quantity)
        if columns:
            parts += [f"\n{what} per 1,000 dispatches, a column per predictor:\n", wide_markdown(summary, None, columns)]
    ideal = [(m, ("ordered, " if m.startswith("ideal_cycles_ordered[") else "") + m[m.index("[") + 1:-1], 1)
             for m in dict.fromkeys(summary["metric"]) if m.startswith("ideal_cycles[") or m.startswith("ideal_cycles_ordered[")]
    if ideal:
        parts += ["\nIdeal cycles per dispatch, ESTIMATED: each handler's code through llvm-mca, weighted by the program's "
                  "dispatches to it (no mispredicts, flushes or cache misses; empty in the one-function modes); `ordered`: "
                  "the same with every load after every older store (-noalias=false), the store-to-load round trips' upper end:\n",
                  wide_markdown(summary, None, ideal)]
    return "\n".join(parts)


def wide_markdown(summary: pd.DataFrame, headline: str | None, columns: list[tuple[str, str, float]],
                  reference: str | None = None) -> str:
    """One row per case: the headline metric with its CI and change against the group's baseline,
    then one column per other metric (empty where unavailable; see the unavailable list). With a
    `reference` case (the native build), a column says each case's speed relative to it."""
    summary = with_case(summary)
    cells = {(r.case, r.metric): r for r in summary.itertuples()}
    cases = list(dict.fromkeys(summary["case"]))
    ref = cells.get((reference, headline)) if reference and headline else None
    ref = ref if ref is not None and ref.n > 0 and ref.median > 0 else None
    header = ["case", "dispatch sites"]
    if headline:
        header += [f"{headline} [95% CI]", "vs group baseline"]
    if ref is not None:
        header.append("vs native")
    present = [c for c in columns if any(cells.get((case, c[0])) is not None and cells[(case, c[0])].n > 0 for case in cases)]
    header += [label for _, label, _ in present]
    rows = []
    for case in cases:
        any_row = next(r for (cc, _), r in cells.items() if cc == case)
        row = [case, parse_params(any_row.params).get("indirect_jump_sites", "")]
        if headline:
            h = cells.get((case, headline))
            if h is not None and h.n > 0:
                row.append(f"{fmt_number(h.median)} [{fmt_number(h.ci95_lo)}, {fmt_number(h.ci95_hi)}]")
                row.append("baseline" if h.case == h.baseline else change_cell(h))
            else:
                row += ["", ""]
        if ref is not None:
            h = cells.get((case, headline))
            row.append("" if h is None or h.n == 0 else "native" if case == reference else f"1/{h.median / ref.median:.1f}")
        for metric, _, scale in present:
            c = cells.get((case, metric))
            row.append(fmt_number(c.median * scale) if c is not None and c.n > 0 else "")
        rows.append(row)
    return markdown_table(header, rows)


def stack_placement_rows(run, copies=None, statements=None, dispatch: str = "tail"):
    """The stack model's placement group of a run at (copies, statements) in one dispatch mode,
    nearest the research's configuration unless given; with the metric and the configuration."""
    if "models" not in run.experiments:
        return None
    df = with_params(run.experiments["models"].summary)
    # A placement group is one whose baseline case records the vec placement in this dispatch mode
    # (a mode group's baseline records switch dispatch).
    s = rows_whose_baseline(df, placement="vec", dispatch=dispatch)
    s = s[(s["model"] == "stack") & (s["dispatch"] == dispatch) & (s["case"].str.len() > 0)]
    if s.empty:
        return None
    rc, rs = research_stack_config(s)
    copies = rc if copies is None else copies
    statements = rs if statements is None else statements
    metric, _ = pick_cycles(s)
    at = s[(s["copies"] == copies) & (s["statements"] == statements) & (s["metric"] == metric)]
    return at, metric, int(copies), int(statements)




def rfc_change_table(runs, copies: int | None = None, statements: int | None = None, labels: list[str] | None = None,
                     simulated=None) -> str:
    """RFC-ready: change of each stack placement against `vec` (tail dispatch), one column per CPU
    (the latest run of each CPU that has models), at the configuration nearest the research's
    (64 statements, ~171 handlers) unless given; each column names its regime (and `labels`, one per
    run, name the columns instead of the CPU, as the fleet report does). Changes are ratios
    within one interleaved run, so they do not depend on any calibration. The baseline's absolute
    cycles are shown only where cycles were counted, or estimated with a TSC calibration that
    passed its cross-check; elsewhere the cell says why not. With `simulated` (a run with
    models_simulated), columns of simulated flushes per placement follow the CPUs'."""
    columns, cells, placements, notes = [], {}, [], []
    for i, run in enumerate(runs):
        emulated = run_emulation(run)
        if emulated:  # emulation is never a measurement
            name = labels[i] if labels else run.machine.get('cpu_slug', run.path.parent.name)
            notes.append(f"{name}: left out, made under emulation ({emulated}): not a measurement")
            continue
        found = stack_placement_rows(run, copies, statements)
        if found is None:
            continue
        s, metric, k, n = found
        if s.empty:
            continue
        handlers = int(s["handlers"].iloc[0]) + 1
        name = labels[i] if labels else run.machine.get('cpu_slug', run.path.parent.name)
        cpu = f"{name} ({handlers} handlers, {n} statements)"
        columns.append(cpu)
        trusted, why = cycle_estimate_status(run.machine)
        absolute = metric == "cycles" or (metric == "cycles_tsc_estimate" and trusted)
        shape = ""
        if "distinct_pairs" in s and s["distinct_pairs"].notna().any():
            r0 = s.iloc[0]
            shape = (f"; program: {int(r0['dispatches_per_run'])} dispatches, {int(r0['distinct_handlers'])} distinct handlers, "
                     f"{int(r0['distinct_pairs'])} distinct pairs")
        if metric == "cycles":
            notes.append(f"{cpu}: {uarch_name(run.machine)}, counted cycles{shape}")
        elif absolute:
            notes.append(f"{cpu}: {uarch_name(run.machine)}, TSC-estimated cycles ({why}){shape}")
        else:
            notes.append(f"{cpu}: {uarch_name(run.machine)}, changes only; absolute cycles not shown: {why}{shape}")
        for r in s.itertuples():
            if r.placement not in placements:
                placements.append(r.placement)
            if r.case == r.baseline:
                cells[(r.placement, cpu)] = (f"{fmt_number(r.median)} cycles (baseline)" if absolute and r.n > 0
                                             else "baseline")
            else:
                cells[(r.placement, cpu)] = change_cell(r)
    if simulated is not None:
        sim_columns = simulated_placement_columns(simulated, placements, cells, copies, statements)
        columns += sim_columns
        if sim_columns:
            notes.append("simulated flushes/1k: SIMULATED memory-order flushes per 1,000 dispatches of each placement's "
                         "handlers (models_simulated of this run; predictors/ on their dlabtrace traces, docs/predictors.md): "
                         "they depend on the binary, not on a CPU, so one column serves every CPU; never counted")
    rows = [[p] + [cells.get((p, c), "") for c in columns] for p in placements]
    table = markdown_table(["placement"] + columns, rows)
    return table + "".join(f"\n{n}" for n in notes) + ("\n" if notes else "")


# The simulated columns of the RFC table: the bound (every aliasing load flushes) and the paper's
# store sets; the other rows are in the models_simulated section of the report.
RFC_SIMULATED_PREDICTORS = ("always_speculate", "store_sets")


def simulated_placement_columns(run, placements: list, cells: dict, copies: int | None, statements: int | None) -> list[str]:
    """Adds to `cells` each stack placement's simulated flushes per 1k dispatches (tail dispatch,
    the configuration nearest the research's) from `run`'s models_simulated, a column per
    predictor of RFC_SIMULATED_PREDICTORS; returns the columns added."""
    if "models_simulated" not in run.experiments:
        return []
    df = with_params(run.experiments["models_simulated"].summary)
    s = df[(df["model"] == "stack") & (df["dispatch"] == "tail") & (df["n"] > 0)]
    if s.empty:
        return []
    k = copies if copies is not None else nearest(s["copies"], 17)
    n = statements if statements is not None else nearest(s["statements"], 64)
    s = s[(s["copies"] == k) & (s["statements"] == n)]
    added = []
    for predictor in RFC_SIMULATED_PREDICTORS:
        rows = s[s["metric"] == f"simulated_memory_order_flushes[{predictor}]"]
        if rows.empty:
            continue
        column = f"simulated flushes/1k: {predictor} ({int(k)} copies, {int(n)} statements)"
        added.append(column)
        for r in rows.itertuples():
            if r.placement not in placements:
                placements.append(r.placement)
            cells[(r.placement, column)] = f"{r.median * 1000:.2f}"
    return added


def length_sweep_table(run) -> str | None:
    """This run's predictability sweep: each placement's change against vec at every program length
    (tail dispatch, copies nearest the research's), with the programs' distinct handler pairs."""
    if "models" not in run.experiments:
        return None
    base = stack_placement_rows(run)
    if base is None:
        return None
    _, metric, k, _ = base
    df = rows_whose_baseline(with_params(run.experiments["models"].summary), placement="vec", dispatch="tail")
    s = df[(df["model"] == "stack") & (df["dispatch"] == "tail") & (df["copies"] == k) & (df["metric"] == metric)]
    lengths = sorted(set(s["statements"].dropna()))
    if len(lengths) < 2:
        return None
    header, pairs = ["placement"], []
    for n in lengths:
        at = s[s["statements"] == n].iloc[0]
        header.append(f"{int(n)} statements")
        pairs.append(f"{int(n)} statements: {int(at['dispatches_per_run'])} dispatches, {int(at['distinct_pairs'])} distinct pairs"
                     if pd.notna(at.get("distinct_pairs")) else f"{int(n)} statements")
    rows = []
    for placement in dict.fromkeys(s["placement"]):
        row = [placement]
        for n in lengths:
            r = s[(s["placement"] == placement) & (s["statements"] == n)]
            if r.empty:
                row.append("")
                continue
            r = next(r.itertuples())
            row.append(f"{fmt_number(r.median)} (baseline)" if r.case == r.baseline else change_cell(r))
        rows.append(row)
    return (f"{metric} per dispatch, {k} copies per kind, tail dispatch; changes against vec in each length's own "
            f"interleaved group.\n\n" + markdown_table(header, rows) + "\n" + "; ".join(pairs) + ".\n")


def model_interpreter_markdown(run) -> str | None:
    """Per dispatch mode: the model's predicted change against switch beside the interpreter's
    measured change per workload, how many workloads' CIs contain the prediction, and cachegrind's
    instruction and simulated-mispredict ratios of both: a measured account of where they agree
    and where not, not a guess."""
    from .compare import count_ratios, interpreter_changes, model_change_by_dispatch
    if "wasm" not in run.experiments or "models" not in run.experiments:
        return None
    models = with_params(run.experiments["models"].summary)
    metric, _ = pick_common_cycles(with_params(run.experiments["wasm"].summary), models)
    model, label = model_change_by_dispatch(models, metric)
    if model.empty:
        return None
    interp = interpreter_changes(run, metric)
    m_ins, i_ins = count_ratios(run, "cg_instructions")
    m_mis, i_mis = count_ratios(run, "cg_mispredicts")

    def span(d: dict) -> str:
        return f"{min(d.values()):.2f} .. {max(d.values()):.2f}" if d else ""

    rows = []
    for r in model.itertuples():
        w = interp[interp["dispatch"] == r.dispatch]
        if w.empty:
            continue
        inside = int(((w["interp_lo"] <= r.model_change) & (r.model_change <= w["interp_hi"])).sum())
        lo, hi = w["interp_change"].min(), w["interp_change"].max()
        mid = w["interp_change"].median()
        predicted = (fmt_change(r.model_change + 1) if math.isnan(r.model_lo)
                     else change_ci(r.model_change + 1, r.model_lo + 1, r.model_hi + 1))
        if inside == len(w):
            verdict = "agree (every workload's CI holds the prediction)"
        elif (w["interp_change"] * r.model_change > 0).all():
            points = round(abs(r.model_change - mid) * 100)
            verdict = (f"same direction; the model's change is {points} point{'' if points == 1 else 's'} "
                       f"{'larger' if abs(r.model_change) > abs(mid) else 'smaller'} than the workloads' median")
        else:
            verdict = "disagree in direction on some workloads"
        rows.append([r.dispatch, predicted, f"{fmt_change(lo + 1)} .. {fmt_change(hi + 1)}", f"{inside}/{len(w)}",
                     f"{m_ins[r.dispatch]:.2f}" if r.dispatch in m_ins else "", span(i_ins.get(r.dispatch, {})),
                     f"{m_mis[r.dispatch]:.2f}" if r.dispatch in m_mis else "", span(i_mis.get(r.dispatch, {})), verdict])
    if not rows:
        return None
    return (f"Prediction: {label}. Measured: `dlab wasm bench`, {metric} per call, each mode paired with switch per "
            "workload. Counts: cachegrind, mode over switch (the model per dispatch, the interpreter per call; "
            "mispredicts are cachegrind's simulated predictor, not this CPU's).\n\n"
            + markdown_table(["mode", "model change", "interpreter change (workloads)", "workloads whose CI holds it",
                              "model instr. / switch", "interp. instr. / switch", "model sim. mispred. / switch",
                              "interp. sim. mispred. / switch", "verdict"], rows))


def placements_markdown(run) -> str | None:
    """Per stack placement: the model's predicted change against vec beside the interpreter's
    measured change on every workload (tail dispatch, both paired in their own interleaved runs)."""
    from .compare import placement_changes
    model, interp, metric, label = placement_changes(run)
    if interp.empty:
        return None
    workloads = list(dict.fromkeys(interp["workload"]))
    rows = []
    for placement in dict.fromkeys(interp["placement"]):
        m = model[model["placement"] == placement]
        row = [placement, change_ci(m["model_change"].iloc[0] + 1, m["model_lo"].iloc[0] + 1, m["model_hi"].iloc[0] + 1)
               if len(m) else "(not in the model run)"]
        for w in workloads:
            r = interp[(interp["placement"] == placement) & (interp["workload"] == w)]
            row.append(change_ci(r["interp_change"].iloc[0] + 1, r["interp_lo"].iloc[0] + 1, r["interp_hi"].iloc[0] + 1)
                       if len(r) else "")
        rows.append(row)
    return (f"Change against `vec` ({metric}; model: {label or 'no stack placement group'}; interpreter: `dlab wasm bench "
            f"--placements`, tail dispatch, per call).\n\n" + markdown_table(["placement", "model"] + workloads, rows))




def lowering_markdown(run) -> str | None:
    """The lowering's speed techniques (`wasm_lowering`: `dlab wasm bench --lowerings ...`): per
    workload each configuration's change against the first (plain) one, paired by round, and every
    configuration's speed against the native build of the same C, with the geometric mean over
    the workloads (the issue's yardstick: wasm3 runs CoreMark at about 1/9.6 of native here)."""
    exp = run.experiments.get("wasm_lowering")
    if exp is None:
        return None
    s = with_params(exp.summary)
    metric = pick_cycles(exp.summary)[0]
    s = s[(s["metric"] == metric) & (s["n"] > 0)]
    if s.empty:
        return None
    workloads = list(dict.fromkeys(s["workload"]))
    native = {w: s[(s["workload"] == w) & (s["dispatch"] == "native")]["median"] for w in workloads}
    engines = [c.split("/", 1)[1] for c in dict.fromkeys(s["case"]) if not c.endswith("/native")]
    engines = list(dict.fromkeys(engines))
    change_rows, native_rows = [], []
    for e in engines:
        change, vs_native, logs = [e], [e], []
        for w in workloads:
            r = s[s["case"] == f"{w}/{e}"]
            if r.empty:
                change.append("")
                vs_native.append("")
                continue
            r = r.iloc[0]
            change.append("baseline" if r["case"] == r["baseline"] else
                          change_ci(r["ratio"], r["ratio_ci95_lo"], r["ratio_ci95_hi"]))
            if len(native[w]) and native[w].iloc[0] > 0:
                x = r["median"] / native[w].iloc[0]
                logs.append(math.log(x))
                vs_native.append(f"1/{x:.1f}")
            else:
                vs_native.append("")
        change_rows.append(change)
        native_rows.append(vs_native + [f"1/{math.exp(sum(logs) / len(logs)):.2f}" if logs else ""])
    return (f"Change against `{engines[0]}` ({metric} per call, paired by round, 95% CI):\n\n"
            + markdown_table(["engine/lowering"] + workloads, change_rows)
            + f"\n\nSpeed against the native build (clang -O2, same rounds; {metric} medians), and the geometric mean "
            "over the workloads:\n\n" + markdown_table(["engine/lowering"] + workloads + ["geomean"], native_rows))


def budgets_markdown(run) -> str | None:
    """The budget axis (`dlab wasm bench --budgets none,fuel,...`): per workload and engine, each
    budget's change against the same engine's first budget (its recorded baseline, paired by
    round in the same interleaved run), and, where the run has the cachegrind counterpart, its
    change in instructions per call. Experiments are chosen by their recorded `budget` axis."""
    rows, header_budgets, metric_used, first = [], [], None, "none"
    for exp in run.experiments.values():
        if exp.name.endswith("_valgrind") or exp.summary.empty:
            continue
        s = with_params(exp.summary)
        if "budget" not in s.columns or s["budget"].dropna().nunique() < 2:
            continue
        metric = pick_cycles(exp.summary)[0]
        metric_used = metric
        s = s[(s["metric"] == metric) & (s["n"] > 0) & s["budget"].notna()]
        budgets = list(dict.fromkeys(s["budget"]))
        header_budgets, first = header_budgets or budgets[1:], budgets[0]
        by_case = {r["case"]: r for _, r in s.iterrows()}
        instr = {}
        valgrind = run.experiments.get(exp.name + "_valgrind")
        if valgrind is not None:
            v = valgrind.summary
            for _, r in v[(v["metric"] == "cg_instructions") & (v["n"] > 0)].iterrows():
                instr[r["case"]] = r["median"]
        for _, r in s.iterrows():
            if r["budget"] != budgets[0]:
                continue
            engine = r["case"].split("/", 1)[1]
            suffix = "/" + str(r["budget"])
            row = [exp.name, str(r["workload"]), engine[: -len(suffix)] if engine.endswith(suffix) else engine]
            base_case = r["case"]
            for b in budgets[1:]:
                other = next((c for c, o in by_case.items() if o["baseline"] == base_case and o["budget"] == b), None)
                if other is None:
                    row.append("")
                    continue
                o = by_case[other]
                cell = change_ci(o["ratio"], o["ratio_ci95_lo"], o["ratio_ci95_hi"])
                if base_case in instr and other in instr and instr[base_case] > 0:
                    cell += f"; instr. {fmt_change(instr[other] / instr[base_case])}"
                row.append(cell)
            rows.append(row)
    if not rows:
        return None
    # One experiment: no column for it; several (a quick and a full run, say): each row says whose.
    header = ["experiment", "workload", "engine"]
    if len({r[0] for r in rows}) == 1:
        rows, header = [r[1:] for r in rows], header[1:]
    return (f"Each budget's change against the same engine unbudgeted ({metric_used} per call, paired by round in one "
            "interleaved run, 95% CI; with `instr.` the change in instructions per call under cachegrind). Fuel counts "
            "every branch and call; `fuel` keeps the counter in a handler argument, `fuel_machine` in the machine; "
            "`deadline` compares an epoch a 1 ms timer thread bumps. No budget is reached while timed.\n\n"
            + markdown_table(header + [f"{b} vs {first}" for b in header_budgets], rows))


def gc_markdown(summary: pd.DataFrame) -> str | None:
    """What the collector did per call in each engine (`dlab wasm bench` rows' gc_* params: over
    every timed call, warm-up included), beside the call's own time, so its share is read off. None
    when no engine collected (a workload that allocates nothing, or one below the first trigger)."""
    summary = with_case(summary)
    rows = []
    for case in dict.fromkeys(summary["case"]):
        sub = summary[summary["case"] == case]
        p = parse_params(sub.iloc[0].params)
        if "gc_collections_per_call" not in p:
            continue
        collections, gc_ns = float(p["gc_collections_per_call"]), float(p["gc_ns_per_call"])
        clock = sub[(sub["metric"] == "task_clock") & (sub["n"] > 0)]
        call_ns = float(clock.iloc[0]["median"]) if len(clock) else float("nan")
        share = f"{100 * gc_ns / call_ns:.1f}%" if call_ns == call_ns and call_ns > 0 else ""
        rows.append([case, f"{collections:.3g}", f"{gc_ns / 1e6:.3g}", f"{float(p['gc_bytes_per_call']) / 1e6:.3g}", share,
                     p.get("heap_limit") or "none"])
    if not rows or all(r[1] == "0" for r in rows):
        return None
    return markdown_table(["case", "collections / call", "ms in the collector / call", "MB allocated / call",
                           "collector share of task-clock", "heap limit (bytes)"], rows)
