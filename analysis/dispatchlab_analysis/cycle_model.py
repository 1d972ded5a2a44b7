"""The cycle model (issue 46, item 6), checked against time: predicted cycles per dispatch =
the ideal bound (llvm-mca over the handlers, models_simulated or wasm_simulated) + simulated mispredicts per dispatch
x the penalty `dlab calibrate` measured, beside the cycles per dispatch the models experiment
measured for the same case, with the error. Memory-order flushes enter once their penalty is
measured (it is not yet), so their share is left out and said to be. Every term but the measured
cycles is an estimate; the table says which."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .results import Run, pick_cycles, with_params

# The rows whose simulated mispredicts the model charges: for the dispatch (the indirect jumps), the
# row the CPU table names for the run's CPU (harness/catalog/cpus.json's `predictors`, from a
# published size: Zen 3's 1,536 and Zen 4/5's 3,072 indirect-target entries), else the CBP-3
# ITTAGE, the paper's own; for the conditionals TAGE, no CPU publishing its direction predictor.
FALLBACK_INDIRECT_ROW = "ittage_64kb"
CONDITIONAL_ROW = "tage_62kbit"
CPU_TABLE = Path(__file__).resolve().parents[2] / "harness" / "catalog" / "cpus.json"


def indirect_row(run: Run) -> tuple[str, str]:
    """The indirect predictor row the cycle model charges on this run's CPU, and why: the row its
    fingerprint names, or (a fingerprint from before CPUs named rows) the CPU table's row of its key."""
    micro = run.machine.get("microarchitecture", {})
    named = micro.get("predictors") or {}
    source = "its fingerprint"
    if not named and micro.get("key") and CPU_TABLE.exists():
        for entry in json.loads(CPU_TABLE.read_text()).get("cpus", []):
            if entry.get("key") == micro["key"]:
                named, source = entry.get("predictors", {}), "the CPU table's row of its key (harness/catalog/cpus.json)"
    name = micro.get("name") or "this CPU"
    if named.get("indirect"):
        return named["indirect"], f"the row {name} is closest to by {source}: {named.get('why', '')}"
    return FALLBACK_INDIRECT_ROW, (f"no CPU row names an indirect predictor for {name} (no published size): the CBP-3 ITTAGE, "
                                   "the paper's configuration")
FLUSHES = "simulated_memory_order_flushes["

# Student's t, two-sided 95% (the 0.975 quantile), by degrees of freedom: for the fitted penalty's
# interval from a handful of cases. Beyond 30, the normal's 1.96 is within 4%.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.96


def cycle_model(run: Run) -> tuple[pd.DataFrame, list[str]] | None:
    """One row per case in both models and models_simulated (with an ideal bound), or None when
    the run lacks one of the three experiments or the penalty; the notes say what each term is."""
    if not {"models", "models_simulated", "calibrate"} <= set(run.experiments):
        return None
    penalty = run.experiments["calibrate"].sidecar.get("mispredict_penalty", {})
    if "cycles_per_mispredict" not in penalty:
        return None
    measured = run.experiments["models"].summary
    simulated = run.experiments["models_simulated"].summary
    metric, notes = pick_cycles(measured)
    if metric == "tsc_ticks":
        return None
    if penalty.get("metric") != metric:
        notes = notes + [f"the penalty is in `{penalty.get('metric')}`, the measured cycles in `{metric}`"]
    # Cases are matched by their parameters, not by name (older runs named cases without the
    # program's length): a K-copy case by its order and length, a stack case by its statements.
    def key(r) -> tuple:
        rest = ("statements",) if r["model"] == "stack" else ("order", "length")
        return tuple(str(r[k]) for k in ("model", "placement", "dispatch", "copies", *rest))

    m = with_params(measured[(measured["metric"] == metric) & (measured["n"] > 0)])
    sim = with_params(simulated[simulated["n"] > 0])
    wide: dict[tuple, dict[str, float]] = {}
    names: dict[tuple, str] = {}
    for _, r in sim.iterrows():
        wide.setdefault(key(r), {})[r["metric"]] = r["median"]
        names[key(r)] = r["case"]
    ideal_col = next((c for c in dict.fromkeys(sim["metric"]) if c.startswith("ideal_cycles[")), None)
    ordered_col = next((c for c in dict.fromkeys(sim["metric"]) if c.startswith("ideal_cycles_ordered[")), None)
    resources_col = next((c for c in dict.fromkeys(sim["metric"]) if c.startswith("ideal_cycles_resources[")), None)
    row, why_row = indirect_row(run)
    indirect, conditional = f"simulated_indirect_mispredicts[{row}]", f"simulated_conditional_mispredicts[{CONDITIONAL_ROW}]"
    # Both mispredict terms or no model: a missing row is not zero mispredicts.
    if ideal_col is None or not {indirect, conditional} <= set(sim["metric"]):
        return None
    rows, seen = [], set()
    for _, r in m.iterrows():
        w = wide.get(key(r), {})
        if ideal_col not in w or indirect not in w or conditional not in w or key(r) in seen:  # a case timed in two groups: the first
            continue
        seen.add(key(r))
        rows.append(_predicted_row(names[key(r)], r["model"], r["median"], w, ideal_col, ordered_col, resources_col, indirect, conditional,
                                   penalty["cycles_per_mispredict"]))
    if not rows:
        return None
    notes = notes + [f"measured: `{metric}` per dispatch (the models experiment's median)"] + _model_notes(
        ideal_col, ordered_col, resources_col, indirect, conditional, why_row, penalty, "models_simulated")
    return pd.DataFrame(rows), notes


def _predicted_row(case: str, model: str, measured: float, w: dict, ideal_col: str, ordered_col: str | None, resources_col: str | None,
                   indirect: str, conditional: str, cycles_per_mispredict: float) -> dict:
    """One case of the cycle model: the ideal bound plus the simulated mispredicts at the penalty,
    and the same from the ordered bound (its upper end) and the resource bound (its lower end)."""
    mispredicts = w[indirect] + w[conditional]
    lost = mispredicts * cycles_per_mispredict
    predicted = w[ideal_col] + lost
    ordered = w[ordered_col] + lost if ordered_col and ordered_col in w else float("nan")
    resources = w[resources_col] + lost if resources_col and resources_col in w else float("nan")
    return {"case": case, "model": model, "measured": measured, "ideal": w[ideal_col], "predicted_ordered": ordered,
            "predicted_resources": resources, "mispredicts_per_dispatch": mispredicts, "mispredict_cycles": lost, "predicted": predicted,
            "error": predicted / measured - 1, "ideal_share": w[ideal_col] / predicted, "mispredict_share": lost / predicted,
            **{m: v for m, v in w.items() if m.startswith(FLUSHES)}}


def _model_notes(ideal_col: str, ordered_col: str | None, resources_col: str | None, indirect: str, conditional: str, why_row: str,
                 penalty: dict, simulated: str) -> list[str]:
    return [
        f"ideal: `{ideal_col}`, ESTIMATED by llvm-mca (each handler repeated alone: its own loop-carried chain charged in full, "
        "which the program may overlap with the next handler's work)",
        (f"ordered: the prediction from `{ordered_col}` instead (llvm-mca with every load after every older store: each handler "
         "repeated alone carries its store-to-load round trips), its upper end; a measured time between the two is what the "
         "model can account for" if ordered_col else f"ordered: not in this run ({simulated} before the ordered bound)"),
        (f"resources: the prediction from `{resources_col}` instead (each handler's busiest resource alone, dependences "
         "ignored), its lower end" if resources_col else f"resources: not in this run ({simulated} before the resource bound)"),
        f"mispredicts: SIMULATED, `{indirect}` + `{conditional}` per dispatch; the indirect row is {why_row}",
        f"penalty: {penalty['cycles_per_mispredict']:.1f} cycles per mispredict (`dlab calibrate`, {penalty['metric']}; its rate assumed)",
        "memory-order flushes: not in the model (no chain measures their penalty; the fit below is drawn from this model's "
        "error, so it cannot be a term of it); their cycles are in the error",
    ]


class _KernelRun:
    """What both kernel checks read: the simulated experiment's cases (n > 0) with their
    parameters, the measured cycles' metric and the penalty; None without the three experiments or a
    penalty in a cycles metric."""

    def __init__(self, run: Run):
        # The kernels' simulation beside the kernels' timing (`wasm`): another suite's (the corpus's
        # wasm_corpus_simulated, `just flushes`) has other cases.
        self.simulated_name = "wasm_simulated"
        self.ok = {"wasm", "wasm_simulated", "calibrate"} <= set(run.experiments)
        if not self.ok:
            return
        self.penalty = run.experiments["calibrate"].sidecar.get("mispredict_penalty", {})
        measured = run.experiments["wasm"].summary
        self.metric, self.notes = pick_cycles(measured)
        self.ok = "cycles_per_mispredict" in self.penalty and self.metric != "tsc_ticks"
        if not self.ok:
            return
        sim = with_params(run.experiments[self.simulated_name].summary)
        self.sim = sim[sim["n"] > 0]
        timed = with_params(measured[(measured["metric"] == self.metric) & (measured["n"] > 0)])
        self.timed = timed.drop_duplicates("case").set_index("case")  # a case timed in two groups: the first

    def cases(self):
        """Each simulated case the wasm experiment timed at the same size: (case, its simulated rows,
        the measured cycles per dispatch: the time per call over the dispatches one call makes)."""
        for case, g in self.sim.groupby("case", sort=False):
            if case not in self.timed.index:
                continue
            t = self.timed.loc[case]
            if str(t.get("size", "")) != str(g["size"].iloc[0]):
                continue  # another size: another number of dispatches per call
            yield case, g, float(t["median"]) / float(g["dispatches"].iloc[0])

    def measured_notes(self) -> list[str]:
        mismatch = ([f"the penalty is in `{self.penalty.get('metric')}`, the measured cycles in `{self.metric}`"]
                    if self.penalty.get("metric") != self.metric else [])
        return self.notes + mismatch + [f"measured: `{self.metric}` per call (the wasm experiment's median) over the dispatches one "
                                        f"call makes ({self.simulated_name}'s count)"]


def kernel_cycle_model(run: Run) -> tuple[pd.DataFrame, list[str]] | None:
    """The cycle model on the interpreter's kernels: each case of wasm_simulated with an ideal bound
    (the engines whose handlers are functions of their own) beside the cycles per dispatch the wasm
    experiment measured for the same case (same name, same size). None without the three
    experiments, a penalty in the measured cycles' metric, or both mispredict rows."""
    k = _KernelRun(run)
    if not k.ok:
        return None
    metrics = list(dict.fromkeys(k.sim["metric"]))
    ideal_col = next((c for c in metrics if c.startswith("ideal_cycles[")), None)
    ordered_col = next((c for c in metrics if c.startswith("ideal_cycles_ordered[")), None)
    resources_col = next((c for c in metrics if c.startswith("ideal_cycles_resources[")), None)
    row, why_row = indirect_row(run)
    indirect, conditional = f"simulated_indirect_mispredicts[{row}]", f"simulated_conditional_mispredicts[{CONDITIONAL_ROW}]"
    if ideal_col is None or not {indirect, conditional} <= set(metrics):
        return None
    rows = []
    for case, g, per_dispatch in k.cases():
        w = g.set_index("metric")["median"].to_dict()
        if ideal_col not in w or indirect not in w or conditional not in w:
            continue  # a one-loop engine (switch, goto) has no handler's own code: no ideal bound
        rows.append(_predicted_row(case, "kernel", per_dispatch, w, ideal_col, ordered_col, resources_col, indirect, conditional,
                                   k.penalty["cycles_per_mispredict"]))
    if not rows:
        return None
    return pd.DataFrame(rows), k.measured_notes() + _model_notes(ideal_col, ordered_col, resources_col, indirect, conditional, why_row,
                                                                 k.penalty, k.simulated_name)


def _model_markdown(found: tuple[pd.DataFrame, list[str]] | None) -> str | None:
    if found is None:
        return None
    table, notes = found
    lines = ["| case | measured | ideal | mispredicts/1k | predicted | error | predicted from resources (lower end) | "
             "predicted from ordered (upper end) | ideal share | mispredict share |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in table.itertuples():
        ordered = "" if pd.isna(r.predicted_ordered) else f"{r.predicted_ordered:.2f}"
        resources = "" if pd.isna(r.predicted_resources) else f"{r.predicted_resources:.2f}"
        lines.append(f"| {r.case} | {r.measured:.2f} | {r.ideal:.2f} | {r.mispredicts_per_dispatch * 1000:.1f} | {r.predicted:.2f} | "
                     f"{r.error * 100:+.0f}% | {resources} | {ordered} | {r.ideal_share * 100:.0f}% | {r.mispredict_share * 100:.0f}% |")
    return "\n".join(lines) + "\n\n" + "".join(f"- {n}\n" for n in notes)


def cycle_model_markdown(run: Run) -> str | None:
    return _model_markdown(cycle_model(run))


def kernel_cycle_model_markdown(run: Run) -> str | None:
    return _model_markdown(kernel_cycle_model(run))


def flush_penalty_fits(run: Run) -> tuple[pd.DataFrame, list[str]] | None:
    """The flush penalty no chain isolates (issue 46, item 4), FITTED by least squares on the K-copy
    series: what the cycle model leaves unexplained (measured - predicted cycles per dispatch)
    against each memory row's simulated flushes per dispatch, residual = a + F x flushes, one fit
    per row. F is the cycles a flush would cost if that row were the core's predictor; `a` takes up
    what is missing alike in every case. None without the cycle model or three K-copy cases."""
    found = cycle_model(run)
    if found is None:
        return None
    table, _ = found
    kcopy = table[table["model"].astype(str).str.startswith("kcopy")]
    if len(kcopy) < 3:
        return None
    rows = []
    for column in [c for c in kcopy.columns if c.startswith(FLUSHES)]:
        x = kcopy[column].astype(float).to_numpy()
        y = (kcopy["measured"] - kcopy["predicted"]).astype(float).to_numpy()
        n = len(x)
        sxx = float(((x - x.mean()) ** 2).sum())
        row = {"row": column[len(FLUSHES):-1], "cases": n, "flushes_lo": float(x.min()), "flushes_hi": float(x.max())}
        if sxx <= 0 or n < 3:
            rows.append({**row, "why": "its flushes are the same in every case: nothing to fit"})
            continue
        slope = float(((x - x.mean()) * (y - y.mean())).sum() / sxx)
        intercept = float(y.mean() - slope * x.mean())
        residuals = y - (intercept + slope * x)
        rss = float((residuals ** 2).sum())
        tss = float(((y - y.mean()) ** 2).sum())
        se = (rss / (n - 2) / sxx) ** 0.5 if n > 2 else float("nan")
        half = t975(n - 2) * se
        rows.append({**row, "penalty": slope, "ci95_lo": slope - half, "ci95_hi": slope + half, "intercept": intercept,
                     "r2": 1 - rss / tss if tss > 0 else float("nan"), "rms_residual": (rss / n) ** 0.5, "why": ""})
    penalty = run.experiments["calibrate"].sidecar["mispredict_penalty"]["cycles_per_mispredict"]
    fits = pd.DataFrame(rows)
    if "penalty" in fits:
        fits["vs_mispredict"] = fits["penalty"] / penalty
    notes = [
        "FITTED, not measured: residual = measured - predicted cycles per dispatch (the cycle model above) of the K-copy cases, "
        "against each memory row's SIMULATED flushes per dispatch, by ordinary least squares with an intercept; 95% interval "
        "from Student's t",
        "the K-copy kinds differ in more than flushes (kcopy_u's handlers read the slot the previous one wrote, a store-to-load "
        "chain kcopy_o's do not), so a row whose flushes follow the kinds takes that chain's cycles into its F: an upper bound on "
        "the flush penalty under that row, not a measurement of it",
        "a row with a negative F, or an interval holding 0, does not explain the time; the one with the highest R2 is the "
        "predictor these cases are most consistent with, on this machine, not the core's",
        f"a flush restarts the pipeline as a mispredicted branch does: `x mispredict` is F over the {penalty:.1f} cycles `dlab calibrate` "
        "measured for one; many times that says the row's flush count is too small to be where the time goes",
    ]
    return fits, notes


def flush_penalty_markdown(run: Run) -> str | None:
    found = flush_penalty_fits(run)
    if found is None:
        return None
    fits, notes = found
    lines = ["| memory row | cases | flushes/1k (lo to hi) | fitted cycles per flush [95% CI] | x mispredict | intercept (cycles) | R2 | rms residual |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in fits.itertuples():
        span = f"{r.flushes_lo * 1000:.2f} to {r.flushes_hi * 1000:.2f}"
        if r.why:
            lines.append(f"| {r.row} | {r.cases} | {span} | {r.why} |  |  |  |  |")
        else:
            lines.append(f"| {r.row} | {r.cases} | {span} | {r.penalty:.1f} [{r.ci95_lo:.1f}, {r.ci95_hi:.1f}] | {r.vs_mispredict:.1f} | "
                         f"{r.intercept:.2f} | {r.r2:.2f} | {r.rms_residual:.2f} |")
    return "\n".join(lines) + "\n\n" + "".join(f"- {n}\n" for n in notes)


def kernel_mispredict_check(run: Run) -> tuple[pd.DataFrame, list[str]] | None:
    """The interpreter's kernels: what each indirect row's SIMULATED mispredicts (wasm_simulated,
    with TAGE's conditional ones) would cost at the measured penalty, against the cycles per dispatch
    the wasm experiment measured for the same case (same name: workload and engine, quick size).
    A row charging more cycles than a dispatch took cannot be this core's predictor: the check needs
    no ideal bound. None without the three experiments or a penalty in the measured cycles' metric."""
    k = _KernelRun(run)
    if not k.ok:
        return None
    sim, penalty = k.sim, k.penalty
    conditional = f"simulated_conditional_mispredicts[{CONDITIONAL_ROW}]"
    rows_named = [m[len("simulated_indirect_mispredicts["):-1] for m in dict.fromkeys(sim["metric"])
                  if m.startswith("simulated_indirect_mispredicts[")]
    if not rows_named:
        return None
    # Without the conditional row the check charges the indirect mispredicts alone: fewer cycles
    # than the row would cost, so a refutation still stands; said in the notes, never a 0 put in.
    with_conditional = conditional in set(sim["metric"])
    out = []
    for case, g, per_dispatch in k.cases():
        values = g.set_index("metric")["median"]
        row = {"case": case, "measured": per_dispatch}
        for name in rows_named:
            lost = values.get(f"simulated_indirect_mispredicts[{name}]", float("nan"))
            if with_conditional:
                lost += values.get(conditional, float("nan"))
            row[name] = lost * penalty["cycles_per_mispredict"]
        out.append(row)
    if not out:
        return None
    charged = f"+ `{conditional}` " if with_conditional else f"alone (`{conditional}` not simulated in this run: a lower bound of the cost) "
    notes = k.measured_notes() + [
        f"each row: its SIMULATED indirect mispredicts {charged}per dispatch x {penalty['cycles_per_mispredict']:.1f} cycles "
        f"(`dlab calibrate`, {penalty.get('metric')}; its rate assumed)",
        "a cell above the measured cycles (marked !) is a row whose mispredicts alone take longer than the dispatch took: "
        "not this core's predictor, whatever the rest of the time is",
    ]
    return pd.DataFrame(out), notes


def kernel_mispredict_markdown(run: Run) -> str | None:
    found = kernel_mispredict_check(run)
    if found is None:
        return None
    table, notes = found
    rows = [c for c in table.columns if c not in ("case", "measured")]
    lines = ["| case | measured cycles/dispatch | " + " | ".join(f"{r}: mispredict cycles/dispatch" for r in rows) + " |",
             "|---|---:|" + "---:|" * len(rows)]
    for r in table.itertuples(index=False):
        d = r._asdict()
        cells = [f"{d[c]:.2f}{' !' if d[c] > d['measured'] else ''}" if pd.notna(d[c]) else "" for c in rows]
        lines.append(f"| {d['case']} | {d['measured']:.2f} | " + " | ".join(cells) + " |")
    refuted = {c: int((table[c] > table["measured"]).sum()) for c in rows}
    summary = "Cases where a row's mispredicts alone exceed the measured time: " + ", ".join(
        f"`{c}` {n} of {len(table)}" for c, n in refuted.items()) + ".\n"
    return "\n".join(lines) + "\n\n" + summary + "\n" + "".join(f"- {n}\n" for n in notes)
