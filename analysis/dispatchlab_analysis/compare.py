"""The model's prediction beside the interpreter's measurement, for the dispatch modes and the
stack placements: what the figures plot and the report's comparison tables state, computed once.
Groups are picked by what their baseline case records (rows_whose_baseline), never by name."""
from __future__ import annotations

import pandas as pd

from .results import Run, pick_common_cycles, research_stack_config, rows_whose_baseline, with_params


def model_change_by_dispatch(models: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, str]:
    """Per dispatch mode, the model's change against switch dispatch. Preferred: the stack model's
    mode group (one placement in every mode, its baseline recording switch dispatch, paired in one
    interleaved run) at the program nearest the research's configuration, a predictable program
    like the interpreter workloads' loops. Fallback for older runs: kcopy_u at its largest K in
    every mode (ratio of separate medians). Returns the changes and which configuration predicts."""
    modes = rows_whose_baseline(models, dispatch="switch")
    modes = modes[(modes["model"] == "stack") & (modes["metric"] == metric) & (modes["n"] > 0)]
    if not modes.empty:
        copies, statements = research_stack_config(modes)
        placement = "sp" if "sp" in set(modes["placement"]) else sorted(set(modes["placement"]))[0]
        g = modes[(modes["copies"] == copies) & (modes["statements"] == statements) & (modes["placement"] == placement)]
        g = g[g["dispatch"] != "switch"]
        if not g.empty:
            handlers = int(g["handlers"].iloc[0]) + 1
            rows = [{"dispatch": r.dispatch, "model_change": r.ratio - 1, "model_lo": r.ratio_ci95_lo - 1,
                     "model_hi": r.ratio_ci95_hi - 1, "model_case": r.case} for r in g.itertuples()]
            return pd.DataFrame(rows), (f"stack model, placement {placement}, {handlers} handlers, {int(statements)} statements, "
                                        "paired against switch")
    k = models[(models["model"] == "kcopy_u") & (models["metric"] == metric) & (models["n"] > 0)]
    if k.empty or "switch" not in set(k["dispatch"]):
        return pd.DataFrame(), ""
    order = "random" if "random" in set(k["order"]) else sorted(set(k["order"]))[0]
    k = k[k["order"] == order]
    modes_k = set(k["dispatch"])
    common = [c for c in sorted(set(k["copies"])) if set(k[k["copies"] == c]["dispatch"]) == modes_k]
    if not common:
        return pd.DataFrame(), ""
    K = int(common[-1])
    at = k[k["copies"] == K].set_index("dispatch")["median"]
    rows = [{"dispatch": d, "model_change": at[d] / at["switch"] - 1, "model_lo": float("nan"), "model_hi": float("nan"),
             "model_case": f"kcopy_u/{d}/K{K}/{order}"} for d in at.index if d != "switch"]
    return pd.DataFrame(rows), f"kcopy_u K={K} {order}, ratio of separate medians (an older run: no stack mode group)"


def interpreter_changes(run: Run, metric: str) -> pd.DataFrame:
    """The interpreter's paired change of each dispatch mode against switch (the groups whose
    baseline case records switch dispatch), per workload."""
    wasm = rows_whose_baseline(with_params(run.experiments["wasm"].summary), dispatch="switch")
    w = wasm[(wasm["metric"] == metric) & (wasm["n"] > 0) & wasm["ratio"].notna()].copy()
    w = w[w["case"] != w["baseline"]]
    w["interp_change"] = w["ratio"] - 1
    w["interp_lo"] = w["ratio_ci95_lo"] - 1
    w["interp_hi"] = w["ratio_ci95_hi"] - 1
    return w[["workload", "dispatch", "interp_change", "interp_lo", "interp_hi", "smaller_k", "smaller_n"]]


def count_ratios(run: Run, metric: str = "cg_instructions") -> tuple[dict, dict]:
    """A cachegrind count of each mode over switch's: the model's (per dispatch, the stack mode
    group nearest the research's configuration) and the interpreter's (per call, per workload)."""
    model, interp = {}, {}
    if "models_valgrind" in run.experiments:
        mv = with_params(run.experiments["models_valgrind"].summary)
        mv = mv[(mv["model"] == "stack") & (mv["metric"] == metric) & (mv["n"] > 0)]
        if not mv.empty:
            copies, statements = research_stack_config(mv)
            g = mv[(mv["copies"] == copies) & (mv["statements"] == statements) & (mv["placement"] == "sp")]
            # sp/tail is in both the placement group and the mode group: the same deterministic count.
            at = g.drop_duplicates("dispatch").set_index("dispatch")["median"]
            if "switch" in at:
                model = {d: at[d] / at["switch"] for d in at.index if d != "switch"}
    if "wasm_valgrind" in run.experiments:
        wv = with_params(run.experiments["wasm_valgrind"].summary)
        wv = wv[(wv["metric"] == metric) & (wv["n"] > 0)]
        for workload, g in wv.groupby("workload"):
            at = g.drop_duplicates("dispatch").set_index("dispatch")["median"]
            if "switch" in at:
                for d in at.index:
                    if d != "switch":
                        interp.setdefault(d, {})[workload] = at[d] / at["switch"]
    return model, interp


def placement_changes(run: Run) -> tuple[pd.DataFrame, pd.DataFrame, str, str]:
    """Per stack placement, the model's change against vec (the stack model's placement group
    nearest the research's configuration: its baseline records the vec placement and tail
    dispatch; paired) and the interpreter's (the wasm_placements bench's groups against vec, tail
    dispatch, paired per workload). Returns (model, interpreter, metric, label); both frames have
    a `placement` column."""
    empty = pd.DataFrame()
    # wasm_variants: its name in runs before 2026-12-07, when "variant" also meant a placement
    name = next((n for n in ("wasm_placements", "wasm_variants") if n in run.experiments), None)
    if name is None or "models" not in run.experiments:
        return empty, empty, "", ""
    wv = with_params(run.experiments[name].summary)
    models = with_params(run.experiments["models"].summary)
    metric, _ = pick_common_cycles(wv, models)
    wv = rows_whose_baseline(wv, placement="vec", dispatch="tail")
    wv = wv[(wv["metric"] == metric) & (wv["dispatch"] == "tail") & (wv["n"] > 0) & wv["ratio"].notna()]
    wv = wv[wv["case"] != wv["baseline"]]
    interp = pd.DataFrame({"placement": wv["placement"], "workload": wv["workload"], "interp_change": wv["ratio"] - 1,
                           "interp_lo": wv["ratio_ci95_lo"] - 1, "interp_hi": wv["ratio_ci95_hi"] - 1})
    s = rows_whose_baseline(models, placement="vec", dispatch="tail")
    s = s[(s["model"] == "stack") & (s["dispatch"] == "tail") & (s["metric"] == metric) & (s["n"] > 0)]
    if s.empty:
        return empty, interp, metric, ""
    copies, statements = research_stack_config(s)
    g = s[(s["copies"] == copies) & (s["statements"] == statements) & s["placement"].isin(set(interp["placement"]))]
    g = g[g["case"] != g["baseline"]]
    model = pd.DataFrame({"placement": g["placement"], "model_change": g["ratio"] - 1, "model_lo": g["ratio_ci95_lo"] - 1,
                          "model_hi": g["ratio_ci95_hi"] - 1})
    handlers = int(g["handlers"].iloc[0]) + 1 if len(g) else 0
    return model, interp, metric, f"stack model, {handlers} handlers, {int(statements)} statements, tail, paired against vec"


