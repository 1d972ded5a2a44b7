"""Figures (PNG and SVG, headless) from a run directory. Every figure is written with its data
file next to it (<name>.csv) and says on its face which metrics were estimated or unavailable."""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display on CI or a server
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .compare import interpreter_changes, model_change_by_dispatch  # noqa: E402
from .cycle_model import cycle_model, kernel_cycle_model  # noqa: E402
from .results import (Run, nearest, pick_common_cycles, pick_cycles, research_stack_config, rows_whose_baseline,  # noqa: E402
                      with_params)

# Thirteen placements on one axis stay readable only with both a distinct colour and a distinct
# marker per line.
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "<", ">", "h", "*", "p", "8"]


def style(i: int) -> dict:
    return {"color": matplotlib.colormaps["tab20"](i % 20), "marker": MARKERS[i % len(MARKERS)]}


def unavailable_note(df: pd.DataFrame, metric: str) -> str | None:
    rows = df[(df["metric"] == metric) & (df["n"] == 0)]
    if rows.empty:
        return None
    return f"{metric} unavailable: {rows.iloc[0]['unavailable_reason']}"


def save(fig, data: pd.DataFrame, out_dir: Path, name: str, notes: list[str]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    if notes:
        lines = [line for n in notes for line in textwrap.wrap(n, 130)]
        fig.text(0.01, 0.01, "\n".join(lines), fontsize=7, va="bottom", ha="left", color="#a00")
        fig.subplots_adjust(bottom=0.12 + 0.03 * len(lines))
    data.to_csv(out_dir / f"{name}.csv", index=False)
    for ext in ("png", "svg"):
        fig.savefig(out_dir / f"{name}.{ext}", dpi=110)
    plt.close(fig)
    return out_dir / f"{name}.png"


SIMULATED_FLUSHES = "simulated_memory_order_flushes["


def simulated_flushes(run: Run) -> pd.DataFrame | None:
    """The K-copy models' simulated memory-order flushes (models_simulated) in tail dispatch, one
    row per case and memory-dependence predictor (`predictor`), or None when the run has none."""
    if "models_simulated" not in run.experiments:
        return None
    df = with_params(run.experiments["models_simulated"].summary)
    df = df[df["metric"].str.startswith(SIMULATED_FLUSHES) & df["model"].astype(str).str.startswith("kcopy")
            & (df["dispatch"] == "tail") & (df["n"] > 0)].copy()
    if df.empty:
        return None
    df["predictor"] = df["metric"].str.slice(len(SIMULATED_FLUSHES), -1)
    return df


def flushes_vs_copies(run: Run, out_dir: Path) -> Path | None:
    """Memory-order flushes per 1k dispatches against K, a panel per K-copy kind: counted (a line per
    order) where a PMU counted them, and simulated (a dashed line per memory-dependence predictor,
    from models_simulated) beside them, each line's label saying which it is."""
    counted = None
    notes = []
    if "models" in run.experiments:
        df = with_params(run.experiments["models"].summary)
        k = df[df["model"].astype(str).str.startswith("kcopy") & (df["dispatch"] == "tail")]
        k = k[k["length"] == nearest(k["length"], 4096)]
        counted = k[k["metric"] == "memory_order_flushes"][["model", "order", "copies", "median", "ci95_lo", "ci95_hi", "n"]].copy()
        counted["source"], counted["predictor"] = "counted", ""
        notes += [n for n in [unavailable_note(k, "memory_order_flushes")] if n]
    simulated = simulated_flushes(run)
    if simulated is not None:
        sidecar = run.experiments["models_simulated"].sidecar.get("simulation", {})
        notes.append(f"dashed: SIMULATED memory-order flushes (predictors/ on valgrind traces of the handlers (dlabtrace), stores "
                     f"resolved after {sidecar.get('window_instructions', '?')} instructions; docs/predictors.md), never counted")
        simulated = simulated[["model", "order", "copies", "median", "ci95_lo", "ci95_hi", "n", "predictor"]].assign(source="simulated")
    parts = [d for d in (counted, simulated) if d is not None and not d.empty]
    if not parts:
        return None
    data = pd.concat(parts, ignore_index=True)
    for c in ("median", "ci95_lo", "ci95_hi"):
        data[c] = data[c] * 1000
    kinds = sorted(data.loc[data["n"] > 0, "model"].unique()) or sorted(data["model"].unique())
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.5 * len(kinds), 4.5), squeeze=False)
    predictors = list(dict.fromkeys(data.loc[data["source"] == "simulated", "predictor"]))
    for ax, model in zip(axes[0], kinds):
        here = data[(data["model"] == model) & (data["n"] > 0)]
        for order, g in here[here["source"] == "counted"].groupby("order"):
            g = g.sort_values("copies")
            ax.errorbar(g["copies"], g["median"], yerr=[g["median"] - g["ci95_lo"], g["ci95_hi"] - g["median"]], marker="o",
                        capsize=2, color="black", label=f"counted, {order}")
        for (predictor, order), g in here[here["source"] == "simulated"].groupby(["predictor", "order"], sort=False):
            g = g.sort_values("copies")
            ax.plot(g["copies"], g["median"], linestyle="--", label=f"simulated: {predictor}" + (f" ({order})" if order != "cyclic" else ""),
                    **style(predictors.index(predictor)))
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=1)  # 0 to 1,000 per 1k: the steps near 0 and the bound at 1,000 both readable
        ax.set_ylim(bottom=0)
        ax.set_xlabel("copies K")
        ax.set_title(f"{model}" + (" (no-alias control)" if model == "kcopy_o" else ""), fontsize=10)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    axes[0][0].set_ylabel("memory-order flushes / 1k dispatches")
    fig.suptitle("K-copy reduction: flushes against copies (tail dispatch)", fontsize=11)
    return save(fig, data, out_dir, "flushes_vs_copies", notes)


def stack_placement_groups(run: Run) -> pd.DataFrame | None:
    """The stack model's placement groups in tail dispatch (their baseline case records the vec
    placement and tail dispatch)."""
    if "models" not in run.experiments:
        return None
    df = rows_whose_baseline(with_params(run.experiments["models"].summary), placement="vec", dispatch="tail")
    s = df[(df["model"] == "stack") & (df["dispatch"] == "tail")]
    return None if s.empty else s




def against_handlers(s: pd.DataFrame, metric: str, scale: float, ylabel: str, title: str, notes: list[str],
                     out_dir: Path, name: str) -> Path:
    """One line per stack placement of `metric` (x scale) against handler count, with CI bars, at
    the program length nearest the research's (the title says which)."""
    _, statements = research_stack_config(s)
    s = s[s["statements"] == statements]
    data = s[s["metric"] == metric][["placement", "copies", "handlers", "statements", "median", "ci95_lo", "ci95_hi", "n"]].copy()
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, (placement, g) in enumerate(data[data["n"] > 0].groupby("placement", sort=False)):
        g = g.sort_values("handlers")
        ax.errorbar(g["handlers"], g["median"] * scale,
                    yerr=[(g["median"] - g["ci95_lo"]) * scale, (g["ci95_hi"] - g["median"]) * scale], capsize=2,
                    label=placement, **style(i))
    ax.set_xscale("log")
    ax.set_xlabel("handlers (kinds x copies)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} ({int(statements)}-statement programs, tail dispatch)", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, ncol=2)
    return save(fig, data, out_dir, name, notes)


def cycles_vs_handlers(run: Run, out_dir: Path) -> Path | None:
    """Cycles per dispatch against handler count, one line per stack placement."""
    s = stack_placement_groups(run)
    if s is None:
        return None
    metric, notes = pick_cycles(s)
    return against_handlers(s, metric, 1, f"{metric} / dispatch", "Stack-state placements: cycles per dispatch against handlers",
                            notes, out_dir, "cycles_vs_handlers")


def backend_vs_handlers(run: Run, out_dir: Path) -> Path | None:
    """Back-end bound share against handler count."""
    s = stack_placement_groups(run)
    if s is None:
        return None
    notes = [n for n in [unavailable_note(s, "backend_bound")] if n]
    return against_handlers(s, "backend_bound", 100, "back-end bound, % of slots", "Back-end stall share against handlers",
                            notes, out_dir, "backend_vs_handlers")


def cycles_vs_statements(run: Run, out_dir: Path) -> Path | None:
    """The predictability sweep: cycles per dispatch against program length, one line per placement
    (left), and branch mispredicts per dispatch where counted (right): where the dispatch sequence
    stops being learnable, mispredicts take over and the placements converge."""
    s = stack_placement_groups(run)
    if s is None or s["statements"].nunique() < 2:
        return None
    copies, _ = research_stack_config(s)
    s = s[s["copies"] == copies]
    metric, notes = pick_cycles(s)
    cols = ["placement", "statements", "distinct_pairs", "metric", "median", "ci95_lo", "ci95_hi", "n"]
    data = s[s["metric"].isin([metric, "branch_mispredicts"])][[c for c in cols if c in s]].copy()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5))
    cyc = data[(data["metric"] == metric) & (data["n"] > 0)]
    for i, (placement, g) in enumerate(cyc.groupby("placement", sort=False)):
        g = g.sort_values("statements")
        ax.errorbar(g["statements"], g["median"], yerr=[g["median"] - g["ci95_lo"], g["ci95_hi"] - g["median"]], capsize=2,
                    label=placement, **style(i))
    ax.set_xscale("log")
    ax.set_xlabel("statements per program (random order; the research used 64)")
    ax.set_ylabel(f"{metric} / dispatch")
    ax.set_title(f"Predictability sweep, {int(copies)} copies per kind, tail dispatch", fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    mis = data[(data["metric"] == "branch_mispredicts") & (data["n"] > 0)]
    if mis.empty:
        bx.axis("off")
        bx.text(0.5, 0.5, "branch mispredicts: not counted on this machine\n(see the note below)", ha="center", va="center",
                transform=bx.transAxes)
        note = unavailable_note(s, "branch_mispredicts")
        if note:
            notes = notes + [note]
    else:
        for i, (placement, g) in enumerate(mis.groupby("placement", sort=False)):
            g = g.sort_values("statements")
            bx.plot(g["statements"], g["median"], label=placement, **style(i))
        bx.set_xscale("log")
        bx.set_xlabel("statements per program")
        bx.set_ylabel("branch mispredicts / dispatch")
        bx.set_title("Mispredicted dispatches", fontsize=10)
    fig.tight_layout()
    return save(fig, data, out_dir, "cycles_vs_statements", notes)


def valgrind_counts(run: Run, out_dir: Path) -> Path | None:
    """Instructions, loads and stores per dispatch per stack placement (the mean over the
    placement's cases), from cachegrind (no PMU needed)."""
    if "models_valgrind" not in run.experiments:
        return None
    df = with_params(run.experiments["models_valgrind"].summary)
    data = df[df["metric"].isin(["cg_instructions", "cg_loads", "cg_stores"])].pivot_table(
        index="placement", columns="metric", values="median", sort=False).reset_index()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(data)), 4.5))
    width = 0.27
    xs = range(len(data))
    for i, (metric, label) in enumerate([("cg_instructions", "instructions"), ("cg_loads", "loads"), ("cg_stores", "stores")]):
        if metric in data:
            ax.bar([x + (i - 1) * width for x in xs], data[metric], width, label=label)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(data["placement"], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("per dispatch (cachegrind, N vs 2N runs)")
    ax.set_title("Instructions, loads and stores per dispatch")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, data, out_dir, "valgrind_counts", ["counted by cachegrind (deterministic simulation), not by a PMU"])


def register_budget(probes_csv: Path, out_dir: Path) -> Path | None:
    """The probes' register budget as a figure: integer registers per target and convention."""
    if not probes_csv.exists():
        return None
    df = pd.read_csv(probes_csv, keep_default_na=False, na_values=[""])
    ints = df[df["shape"] == "ints"].pivot_table(index="target", columns="convention", values="int_in_registers", sort=False)
    floats = df[df["shape"] == "floats"].pivot_table(index="target", columns="convention", values="float_in_registers", sort=False)
    ints = ints.reindex(columns=[c for c in df["convention"].drop_duplicates() if c in ints.columns or c in floats.columns])
    floats = floats.reindex(index=ints.index, columns=ints.columns)
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, table, title in ((axes[0], ints, "integer arguments in registers"), (axes[1], floats, "float arguments in registers")):
        cmap = matplotlib.colormaps["viridis"].copy()
        cmap.set_bad("#dddddd")  # conventions clang ignores on a target
        im = ax.imshow(table.values.astype(float), cmap=cmap, aspect="auto")
        ax.set_xticks(range(len(table.columns)))
        ax.set_xticklabels(table.columns, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(table.index)))
        ax.set_yticklabels(table.index, fontsize=7)
        for (i, j), v in pd.DataFrame(table.values).stack(dropna=False).items():
            ax.text(j, i, "ign." if pd.isna(v) else f"{int(v)}", ha="center", va="center", fontsize=7,
                    color="#333" if pd.isna(v) else "w")
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    data = df[df["shape"].isin(["ints", "floats"])][["target", "convention", "shape", "status", "int_in_registers", "float_in_registers"]]
    return save(fig, data, out_dir, "register_budget", ["'ign.': clang ignores that convention on that target"])


def model_vs_interpreter(run: Run, out_dir: Path) -> Path | None:
    """Model change against interpreter change per dispatch mode, both against switch dispatch:
    one point per (mode, workload), interpreter CI as error bars, the diagonal where they agree."""
    if "wasm" not in run.experiments or "models" not in run.experiments:
        return None
    wasm = with_params(run.experiments["wasm"].summary)
    models = with_params(run.experiments["models"].summary)
    metric, notes = pick_common_cycles(wasm, models)
    model, label = model_change_by_dispatch(models, metric)
    if model.empty:
        return None
    data = interpreter_changes(run, metric).merge(model, on="dispatch")
    if data.empty:
        return None
    notes = notes + [f"model: {label}; interpreter change: paired ratio with its bootstrap 95% CI, switch and the mode "
                     "interleaved in one run per workload"]
    return prediction_scatter(data, "dispatch", "switch", metric, f"Dispatch modes: model prediction vs WebAssembly interpreter\n"
                              f"predicted by: {label}", notes, out_dir, "model_vs_interpreter")


def prediction_scatter(data: pd.DataFrame, series: str, baseline: str, metric: str, title: str, notes: list[str],
                       out_dir: Path, name: str) -> Path:
    """x: the model's predicted change (with its CI where it has one), y: the interpreter's measured
    change per workload with its CI; colour = workload, marker = `series`; the diagonal is agreement."""
    fig, ax = plt.subplots(figsize=(7, 5.5))
    kinds = list(dict.fromkeys(data[series]))
    workloads = list(dict.fromkeys(data["workload"]))
    for (kind, workload), g in data.groupby([series, "workload"], sort=False):
        xerr = None if g["model_lo"].isna().any() else [(g["model_change"] - g["model_lo"]) * 100,
                                                        (g["model_hi"] - g["model_change"]) * 100]
        ax.errorbar(g["model_change"] * 100, g["interp_change"] * 100, xerr=xerr,
                    yerr=[(g["interp_change"] - g["interp_lo"]) * 100, (g["interp_hi"] - g["interp_change"]) * 100],
                    marker=MARKERS[kinds.index(kind) % len(MARKERS)], color=f"C{workloads.index(workload) % 10}",
                    linestyle="none", capsize=2, label=f"{kind}: {workload}")
    lows = [data["model_change"].min(), data["interp_lo"].min()] + ([data["model_lo"].min()] if data["model_lo"].notna().any() else [])
    highs = [data["model_change"].max(), data["interp_hi"].max()] + ([data["model_hi"].max()] if data["model_hi"].notna().any() else [])
    lo, hi = min([0.0] + lows) * 100 - 5, max([0.0] + highs) * 100 + 5
    ax.plot([lo, hi], [lo, hi], color="#888", linewidth=0.8, label="model = interpreter")
    ax.axhline(0, color="#ccc", linewidth=0.6)
    ax.axvline(0, color="#ccc", linewidth=0.6)
    ax.set_xlabel(f"model change vs {baseline}, % ({metric}/dispatch)")
    ax.set_ylabel(f"interpreter change vs {baseline}, % ({metric}/call)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    return save(fig, data, out_dir, name, notes)


def placements_model_vs_interpreter(run: Run, out_dir: Path) -> Path | None:
    """Per stack placement, the model's change against vec (x) against the interpreter's on every
    workload (y), both with CIs; the diagonal is where the model predicts the interpreter."""
    from .compare import placement_changes
    model, interp, metric, label = placement_changes(run)
    if model.empty or interp.empty:
        return None
    data = interp.merge(model, on="placement")
    if data.empty:
        return None
    notes = ([] if metric == "cycles" else ["cycles are TSC-based ESTIMATES (no counted cycles on this machine)"]) + [
        "both changes paired against vec within their own interleaved runs, tail dispatch"]
    return prediction_scatter(data, "placement", "vec", metric, f"Stack placements: model prediction vs WebAssembly interpreter\n"
                              f"predicted by: {label}", notes, out_dir, "placements_model_vs_interpreter")


def dbinop_cycles(run: Run, out_dir: Path) -> Path | None:
    """The D-binop family in the real interpreter: cycles per wasm instruction against the number
    of distinct binop pairs in the hot loop, one line per engine."""
    if "wasm_dbinop" not in run.experiments:
        return None
    df = with_params(run.experiments["wasm_dbinop"].summary)
    metric, notes = pick_cycles(df)
    data = df[(df["metric"] == metric) & (df["n"] > 0)][["dispatch", "placement", "binop_pairs", "median", "ci95_lo", "ci95_hi"]].copy()
    if data.empty:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for i, ((dispatch, placement), g) in enumerate(data.groupby(["dispatch", "placement"], sort=False)):
        g = g.sort_values("binop_pairs")
        ax.errorbar(g["binop_pairs"], g["median"], yerr=[g["median"] - g["ci95_lo"], g["ci95_hi"] - g["median"]], capsize=2,
                    label=f"{dispatch}/{placement}", **style(i))
    ax.axvspan(11, 19, color="#eee", label="the research's knee (11-19 pairs)")
    ax.set_xlabel("distinct binop pairs D in the hot loop")
    ax.set_ylabel(f"{metric} / wasm instruction")
    ax.set_title("D-binop family in the WebAssembly interpreter", fontsize=10)
    ax.legend(fontsize=7)
    return save(fig, data, out_dir, "dbinop_cycles", notes)


SIMULATED_INDIRECT = "simulated_indirect_mispredicts["


def mispredicts_by_dispatch(run: Run, out_dir: Path) -> Path | None:
    """The interpreter's dispatch modes on the kernels (wasm_simulated): SIMULATED indirect
    mispredicts per 1k dispatches, a panel per indirect predictor row, a bar per mode within each
    kernel: switch's one jump against threaded and tail code's jump per handler (CGO 2015's question)."""
    # The kernels' (wasm_simulated) where the run has them, before another suite's (wasm_corpus_simulated).
    exp = run.experiments.get("wasm_simulated") or next(
        (e for name, e in run.experiments.items() if name.startswith("wasm") and name.endswith("_simulated")), None)
    if exp is None:
        return None
    df = with_params(exp.summary)
    df = df[df["metric"].str.startswith(SIMULATED_INDIRECT) & (df["n"] > 0)].copy()
    if df.empty:
        return None
    df["predictor"] = df["metric"].str.slice(len(SIMULATED_INDIRECT), -1)
    df["per_1k"] = df["median"] * 1000
    # One bar per kernel, mode and row: where a run simulated several engines of one mode (placements,
    # lowerings), the first, as the table in the report lists them all.
    data = df[["workload", "dispatch", "predictor", "per_1k", "dispatches"]].drop_duplicates(["workload", "dispatch", "predictor"])
    data = data.reset_index(drop=True)
    predictors = list(dict.fromkeys(data["predictor"]))
    workloads = list(dict.fromkeys(data["workload"]))
    modes = list(dict.fromkeys(data["dispatch"]))
    fig, axes = plt.subplots(len(predictors), 1, figsize=(max(7, 0.7 * len(workloads) * len(modes) / 2), 2.6 * len(predictors)),
                             squeeze=False, sharex=True)
    width = 0.8 / len(modes)
    for ax, predictor in zip(axes[:, 0], predictors):
        here = data[data["predictor"] == predictor].set_index(["workload", "dispatch"])["per_1k"]
        for i, mode in enumerate(modes):
            ys = [here.get((w, mode), float("nan")) for w in workloads]
            ax.bar([x + (i - (len(modes) - 1) / 2) * width for x in range(len(workloads))], ys, width, label=mode, color=style(i)["color"])
        ax.set_yscale("symlog", linthresh=1)  # 0.01 to 1,000 per 1k: the threaded cells and the switch's 1,000 both readable
        ax.set_ylim(bottom=0)
        ax.set_ylabel("per 1k dispatches", fontsize=8)
        ax.set_title(f"{predictor}", fontsize=9, loc="left")
        ax.legend(fontsize=7, ncol=len(modes), loc="upper right")
    axes[-1, 0].set_xticks(list(range(len(workloads))))
    axes[-1, 0].set_xticklabels(workloads, rotation=30, ha="right", fontsize=8)
    fig.suptitle("Indirect (dispatch) mispredicts by dispatch mode, SIMULATED", fontsize=11)
    fig.tight_layout()
    notes = [f"SIMULATED ({exp.name}): each kernel one call at its quick size under valgrind (dlabtrace), the engine's own code "
             "traced; a dispatch is an indirect jump run there; docs/predictors.md says each row's sizes and how far to trust them "
             "(the core-sized rows' cells move with the code's layout: docs/findings.md)"]
    return save(fig, data, out_dir, "mispredicts_by_dispatch", notes)


def cycle_model_check(run: Run, out_dir: Path) -> Path | None:
    """Cycles per dispatch, measured (the models experiment, and the wasm experiment's kernels)
    against the cycle model's prediction (ESTIMATED: the llvm-mca bound + SIMULATED mispredicts x
    the measured penalty), a bar per term and the measured cycles as a marker, per case."""
    found = [f for f in (cycle_model(run), kernel_cycle_model(run)) if f is not None]
    if not found:
        return None
    table = pd.concat([t for t, _ in found], ignore_index=True)
    notes = list(dict.fromkeys(n for _, ns in found for n in ns))
    data = table[["case", "measured", "ideal", "mispredict_cycles", "predicted", "error", "predicted_ordered",
                  "predicted_resources"]].reset_index(drop=True)
    # Labels without the parts every case shares (the dispatch mode, say): the notes need the room.
    common = set.intersection(*(set(c.split("/")) for c in data["case"]))
    labels = ["/".join(p for p in c.split("/") if p not in common) for c in data["case"]]
    fig, ax = plt.subplots(figsize=(max(7, 0.5 * len(data)), 7))
    xs = list(range(len(data)))
    ax.bar(xs, data["ideal"], 0.6, label="ideal (llvm-mca, ESTIMATED)", color="#9ecae1")
    ax.bar(xs, data["mispredict_cycles"], 0.6, bottom=data["ideal"], label="mispredicts x penalty (SIMULATED x measured)", color="#fdae6b")
    if data["predicted_ordered"].notna().any():
        ax.plot(xs, data["predicted_ordered"], "_", markersize=18, color="#08519c",
                label="the same, loads after older stores (llvm-mca -noalias=false): its upper end")
    if data["predicted_resources"].notna().any():
        ax.plot(xs, data["predicted_resources"], "_", markersize=18, color="#74c476",
                label="the same from each handler's busiest resource alone (dependences ignored): its lower end")
    ax.plot(xs, data["measured"], "kD", label="measured")
    ax.set_yscale("log")
    # Room above the tallest mark for the legend (five entries): a decade on the log scale.
    top = max(v for v in (data["predicted_ordered"].max(), data["predicted"].max(), data["measured"].max()) if pd.notna(v))
    ax.set_ylim(top=top * 12)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("cycles per dispatch")
    ax.set_title("Cycle model against measured cycles per dispatch" + (f" ({'/'.join(sorted(common))})" if common else ""), fontsize=11)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    return save(fig, data, out_dir, "cycle_model_check", notes)


def all_figures(run: Run, out_dir: Path, probes_csv: Path | None = None) -> list[Path]:
    made = [f(run, out_dir) for f in (flushes_vs_copies, cycles_vs_handlers, backend_vs_handlers, cycles_vs_statements,
                                      valgrind_counts, model_vs_interpreter, placements_model_vs_interpreter, dbinop_cycles,
                                      mispredicts_by_dispatch, cycle_model_check)]
    if probes_csv is not None:
        made.append(register_budget(probes_csv, out_dir))
    return [m for m in made if m is not None]
