"""Writes <run>/report.md: the fingerprint, the protocol, the counter availability table, every
experiment's summary and the list of unavailable metrics with their reasons.

    python -m dispatchlab_analysis.report results/<cpu>/<run>
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from .experiments import describe, in_run_order
from .figures import all_figures
from .programs import programs_markdown
from .workloads import DefError, read_suites
from .knee import dbinop_knees, kcopy_knees
from . import where
from .cycle_model import cycle_model_markdown, flush_penalty_markdown, kernel_cycle_model_markdown, kernel_mispredict_markdown
from .results import (PLACEMENT_PARAM, Run, experiment_emulation, latest_runs, load_run, machine_emulation, parse_params,
                      pick_cycles, with_case, without_emulated)
from .tables import (MODEL_COLUMNS, VALGRIND_COLUMNS, WASM_COLUMNS, WASM_VALGRIND_COLUMNS, budgets_markdown, counters_markdown, gc_markdown,
                     simulated_markdown, length_sweep_table, lowering_markdown,
                     markdown_table, model_interpreter_markdown, placements_markdown, rfc_change_table, summary_markdown,
                     unavailable_markdown, wide_markdown)


def calibration_rows(tsc: dict) -> list[list[str]]:
    """The TSC rate and the cycle calibration: both chains and the verdict (or the old one-chain form)."""
    rows = [["TSC", f"{tsc['counter']} {tsc['hz'] / 1e9:.6f} GHz, {'invariant' if tsc['invariant'] else 'NOT invariant'}"]]
    if "cross_check" not in tsc:  # a fingerprint from before the cross-check
        rows.append(["core cycles per TSC tick (estimate, not cross-checked)",
                     f"{tsc['core_cycles_per_tick_estimate']:.4f} ({tsc['method']})"])
        return rows
    for c in tsc["cross_check"]["chains"]:
        rate = "latency unknown" if c["cycles_per_tick"] is None else f"{c['cycles_per_tick']:.4f} core cycles/tick"
        latency = "?" if c["latency_cycles"] is None else f"{c['latency_cycles']:g}"
        rows.append([f"calibration chain `{c['chain']}`",
                     f"`{c['instruction']}`, {latency} cycles: {c['ticks_per_op']:.4f} ticks/op, {rate} ({c['trials']} trials)"])
    est = tsc["core_cycles_per_tick_estimate"]
    rows.append(["core cycles per TSC tick (estimate)",
                 f"{est:.4f}, the chains agree within {tsc['cross_check']['tolerance'] * 100:.0f}%" if est is not None
                 else f"none: {tsc['estimate_refused']}"])
    return rows


def machine_markdown(m: dict) -> str:
    if not m:
        return "No machine fingerprint in this run.\n"
    cpu, micro, virt, tsc, build = m["cpu"], m["microarchitecture"], m["virtualization"], m["tsc"], m["build"]
    uarch = micro.get("name") or f"{micro['libpfm_pmu'] or 'unknown to libpfm4'} {micro['description']}".strip()
    if micro.get("cores"):
        uarch += f" ({' + '.join(micro['cores'])})"
    if micro.get("matched_by"):
        uarch += f", by {micro['matched_by']}"
    rows = [
        ["CPU", f"{cpu['name']} ({cpu['vendor']} family {cpu['family']} model {cpu['model']} stepping {cpu['stepping']})"],
        ["microarchitecture", uarch],
    ]
    if micro.get("note"):
        rows.append(["identification note", micro["note"]])
    rows += [
        ["catalog source", (micro["catalog_source"] or "none")
         + (f", events as {micro['event_encoding']}" if micro.get("event_encoding") else "")],
        ["libpfm4 PMU", f"{micro['libpfm_pmu'] or 'none detected'} {micro['description']}".strip()],
        ["logical CPUs", str(m["logical_cpus"])],
        ["VM", ("yes, " + (virt["hypervisor"] or "unknown hypervisor")) if virt["is_vm"] else "no"],
        ["emulated", (f"**yes: {machine_emulation(m)}**: {m['emulation'].get('reason', '')}" if machine_emulation(m)
                      else "no" if "emulation" in m else "not checked (a fingerprint from before emulation was detected)")],
        ["kernel core PMU", "exposed" if virt["kernel_core_pmu"] else "none"],
        ["kernel", m["kernel"]],
        ["perf_event_paranoid", "unreadable" if m["perf_event_paranoid"] is None else str(m["perf_event_paranoid"])],
    ]
    rows += calibration_rows(tsc)
    rows += [
        ["compiler", f"{build['compiler']} [{build['preset']}, {build['build_type']}] `{build['cxx_flags']}`"],
        ["git commit", build["git_commit"]],
    ]
    return markdown_table(["", ""], rows)


def experiment_markdown(exp) -> str:
    """The models are shown wide (a row per case, per dispatch); other experiments long."""
    if exp.name == "models":
        parts = []
        for group in exp.sidecar.get("groups", []):
            base = group["baseline"]
            sub = exp.summary[exp.summary["baseline"] == base]
            headline, notes = pick_cycles(sub)
            parts += [f"### {group['group']}\n", f"Headline `{headline}` per dispatch{': ' + notes[0] if notes else ''}; "
                      "changes are against the group's first case.\n",
                      wide_markdown(sub, headline, MODEL_COLUMNS)]
        return "\n".join(parts)
    if exp.name.startswith("wasm") and exp.name.endswith("_calls"):
        return calls_markdown(exp)
    if "programs" in exp.sidecar:  # `dlab wasm programs`
        return programs_markdown(exp)
    if exp.name == "models_simulated":
        sim = exp.sidecar.get("simulation", {})
        return simulated_markdown(exp.summary, (
            "SIMULATED, not counted: each case run in dlab-model-exec under valgrind (dlabtrace: lackey's trace of the "
            f"case's handlers; whole programs for at least {sim.get('traced_dispatches_target', '?')} dispatches), its "
            "trace streamed through the predictors of docs/predictors.md; stores resolved after "
            f"{sim.get('window_instructions', '?')} instructions. The counts depend on the binary, not on this CPU.\n"))
    if exp.name.startswith("wasm") and exp.name.endswith("_simulated"):
        sim = exp.sidecar.get("simulation", {})
        return simulated_markdown(exp.summary, (
            "SIMULATED, not counted: each workload's export called once at its quick size in `dlab wasm run` under "
            "valgrind (dlabtrace: lackey's trace of the engine's own code, its dispatch file and run function), the trace "
            "streamed through the predictors of docs/predictors.md; a dispatch is an indirect jump run in that code "
            "(one shared jump in `switch`, one per handler in `goto` and `tail`); stores resolved after "
            f"{sim.get('window_instructions', '?')} instructions. The counts depend on the binary, not on this CPU."
            + (f" The branch rows ran with the binary at {len(sim['code_shifts'])} load addresses (whole pages apart, as ASLR "
               "moves it), each a sample: the median is shown, the summary's interval spans them."
               if len(sim.get("code_shifts", [])) > 1 else "") + "\n"))
    if exp.name.startswith("wasm") and not exp.name.endswith("_valgrind"):
        parts = []
        pace = []  # (workload, peer, dlab ms per call, the peer's ms per call after its start-up, its start-up ms, its peak MiB)
        for group in exp.sidecar.get("groups", []):
            # The group's cases: those paired with its baseline, and those paired with one of them
            # (a budgeted engine records its unbudgeted case as its baseline).
            first = exp.summary[exp.summary["baseline"] == group["baseline"]]
            sub = exp.summary[exp.summary["baseline"].isin(set(first["case"]) | {group["baseline"]})]
            native = f"{group['workload']}/native"
            if group.get("peers"):
                notes = "; ".join(f"`{name}`: {note}" for name, note in group["peers"].items())
                hz = exp.sidecar.get("machine", {}).get("tsc", {}).get("hz")
                after = []
                ticks = sub[(sub["metric"] == "tsc_ticks") & (sub["n"] > 0)]
                in_process = ticks[ticks["case"] == group["baseline"]]
                for r in ticks.itertuples():
                    p = parse_params(r.params)
                    if p.get("dispatch") == "peer" and hz:
                        peer = p["peer"]
                        calls = int(p["calls_per_process"])
                        total_ms, startup_ms = r.median * calls / hz * 1e3, float(p["peer_startup_ns"]) / 1e6
                        # Below a tenth of the start-up, the difference is the start-up's own jitter.
                        if total_ms - startup_ms < 0.1 * startup_ms:
                            after.append(f"`{peer}`: the calls take less than the start-up's noise "
                                         f"({total_ms:.3g} ms in all, {startup_ms:.3g} ms start-up; raise --peer-calls)")
                        else:
                            after.append(f"`{peer}` {(total_ms - startup_ms) / calls:.3g} ms per call after its start-up")
                            if len(in_process):
                                rss_kb = float(p.get("peer_startup_max_rss_kb") or "nan")
                                pace.append((group["workload"].removesuffix(" (peers)"), peer,
                                             float(in_process["median"].iloc[0]) / hz * 1e3, (total_ms - startup_ms) / calls,
                                             startup_ms, rss_kb / 1024 if rss_kb > 0 else float("nan")))
                if after:
                    notes += ". Without start-up: " + ", ".join(after)
                parts += [f"### {group['workload']} (size {group['size']}, checksum {group['checksum']} from every peer)\n",
                          f"Other engines as whole processes (wall time: TSC ticks and the cycle estimate only), beside "
                          f"`{group['baseline']}` making the same calls in process. {notes}.\n",
                          wide_markdown(sub, pick_cycles(sub)[0], [("tsc_ticks", "TSC ticks", 1)])]
                continue
            parts += [f"### {group['workload']} (size {group['size']}, checksum {group['checksum']} in every engine)\n",
                      f"Per call of the workload's export; changes are against `{group['baseline']}`, paired by round; "
                      "`native` is the same C compiled with clang -O2, timed in the same rounds.\n",
                      wide_markdown(sub, pick_cycles(sub)[0], WASM_COLUMNS,
                                    reference=native if (with_case(sub)["case"] == native).any() else None)]
            gc = gc_markdown(sub)
            if gc:
                parts += ["\nThe collector in the same calls (collections and steady-clock time inside them, per call):\n", gc]
        if pace:
            parts += ["### Pace against the other engines\n",
                      "dlab's fastest engine on each workload (in process) against each peer's time per call after its "
                      "start-up (a whole process per sample, its start-up measured apart): `x peer` is the peer's time over "
                      "dlab's, above 1 when dlab is faster; the geometric mean is over the workloads listed. dlab's engine is "
                      "the fastest of this run's samples, which favours it slightly; on a `selection` workload the "
                      "superinstructions were chosen from its own profile, so only `held out` rows say how dlab does on "
                      "programs it was not tuned on.\n",
                      peer_pace_markdown(pace)]
        return "\n".join(parts)
    if exp.name.startswith("wasm") and exp.name.endswith("_valgrind"):
        return ("Per call of the workload's export, from cachegrind runs of N and 2N calls (deterministic; decoding, "
                "lowering and start-up cancel out; mispredicts are cachegrind's simulated predictor, not this CPU's).\n\n"
                + wide_markdown(exp.summary, None, WASM_VALGRIND_COLUMNS))
    if exp.name == "models_valgrind":
        return ("Per dispatch, from cachegrind runs of N and 2N repetitions (deterministic; mispredicts are "
                "cachegrind's simulated predictor, not this CPU's).\n\n" + wide_markdown(exp.summary, None, VALGRIND_COLUMNS))
    if exp.name == "calibrate" and "mispredict_penalty" in exp.sidecar:
        return summary_markdown(exp.summary) + "\n" + penalty_markdown(exp.sidecar["mispredict_penalty"])
    return summary_markdown(exp.summary)


def penalty_markdown(p: dict) -> str:
    """`dlab calibrate`'s indirect-call mispredict penalty: the random-target loop's extra cycles over
    the learnable one's, per mispredict it cannot avoid (an assumed rate, said)."""
    if "cycles_per_mispredict" not in p:
        return f"**Mispredict penalty:** not measured: {p.get('unavailable_reason', '?')}.\n"
    estimated = ", ESTIMATED from the TSC" if p["metric"] == "cycles_tsc_estimate" else ""
    return (f"**Mispredict penalty** ({p['metric']}{estimated}): {p['cycles_per_mispredict']:.1f} cycles "
            f"[{p['ci95_lo']:.1f}, {p['ci95_hi']:.1f}] per mispredicted indirect call: `indirect_random` minus "
            f"`indirect_pattern`, divided by the {p['assumed_mispredicts_per_call']:.4f} mispredicts per call that a "
            "target drawn at random cannot avoid (assumed, not counted).\n")


def calls_markdown(exp) -> str:
    """`dlab wasm bench --calls`: one table per kind of call (per call, engines paired against the
    first), and what one instance holds beyond its module."""
    parts = []
    for c in exp.sidecar.get("calls", []):
        sub = exp.summary[exp.summary["baseline"] == c["baseline"]]
        parts += [f"### {c['call']}\n", f"{c['what']}; per call ({int(c['calls_per_run'])} per run), changes against "
                  f"`{c['baseline']}`, paired by round.\n",
                  wide_markdown(sub, pick_cycles(sub)[0], WASM_COLUMNS)]
    memory = exp.sidecar.get("instance_memory", [])
    if memory:
        parts += ["### Memory per instance\n", f"Over {memory[0]['instances']} instantiations in a fresh runtime "
                  f"({memory[0]['how']}); the heap figure leaves out the instance's copy of its decoded module.\n",
                  "| engine | heap bytes beyond the module | module copy bytes | resident bytes |", "|---|---:|---:|---:|"]
        def resident(m):
            v = m.get("resident_bytes_per_instance")
            return f"{v:,.0f}" if v is not None else f"({m.get('resident_unavailable_reason', 'not measured')})"
        parts += [f"| {m['engine']} | {m['heap_bytes_per_instance']:,.0f} | {m['module_copy_bytes']:,.0f} | {resident(m)} |"
                  for m in memory]
    return "\n".join(parts)


def peer_pace_markdown(pace: list[tuple]) -> str:
    """Per workload and peer, dlab's and the peer's ms per call and `x peer`, the peer's start-up
    (the module loaded, no call) and its peak resident memory then (empty in runs before these were
    recorded), then each peer's geometric mean over its workloads."""
    rows, ratios = [], {}
    roles = workload_roles()
    for workload, peer, dlab_ms, peer_ms, *footprint in pace:
        startup_ms, peak_mib = (footprint + [float("nan"), float("nan")])[:2]
        ratio = peer_ms / dlab_ms
        ratios.setdefault(peer, []).append(ratio)
        rows.append([workload, roles.get(workload, ""), peer, f"{dlab_ms:.3g}", f"{peer_ms:.3g}", f"{ratio:.2f}",
                     f"{startup_ms:.3g}" if math.isfinite(startup_ms) else "",
                     f"{peak_mib:.3g}" if math.isfinite(peak_mib) else ""])
    for peer, rs in ratios.items():
        rows.append([f"geometric mean ({len(rs)})", "", peer, "", "", f"{math.exp(sum(map(math.log, rs)) / len(rs)):.2f}", "", ""])
    return markdown_table(["workload", "role", "peer", "dlab ms/call", "peer ms/call", "x peer", "peer start-up ms",
                           "peer peak MiB at start-up"], rows)


def workload_roles() -> dict[str, str]:
    """Per workload of the suites' list: `selection` where the interpreter's choices were made from
    its profile (the profiled kernels, the corpus's selection program), else `held out`."""
    try:
        suites = read_suites()
    except (OSError, DefError):
        return {}
    return {w.name: "selection" if w.profile or w.role == "selection" else "held out" for s in suites.values() for w in s.workloads}


def render(run: Run) -> str:
    parts = [f"# dispatchlab run {run.run_id}\n", "## Machine\n", machine_markdown(run.machine)]
    if run.counters is not None:
        parts += ["## Counter availability\n",
                  "Availability is decided by opening each event on this machine. An unavailable metric is "
                  "empty in every table, never 0.\n", counters_markdown(run.counters)]
    probes = run.path.parent.parent / "probes" / "register_budget.md"
    if probes.exists():
        body = probes.read_text().split("# Register budget", 1)[-1].strip()
        parts += ["## Register budget (from `results/probes/`)\n",
                  "Compiler facts, not measurements of this machine; `results/probes/state_placement.md` has the "
                  "handlers' state placement per target and convention.\n", body + "\n"]
    signatures = run.path / "handler_signatures.md"
    if signatures.exists():
        parts += ["## The interpreter's handler signatures per target (`dlab probes fit --engines all`)\n",
                  "Which arguments of each tail-call engine's handlers stay in registers (a budget's fuel counter is the "
                  "last argument of the `fuel` engines); compiler facts, not measurements.\n",
                  signatures.read_text().split("\n", 1)[-1].strip() + "\n"]
    for exp in (run.experiments[name] for name in in_run_order(run.experiments)):  # as the recipes run them
        what = describe(exp.name)
        heading = [f"## Experiment `{exp.name}`\n"] + ([f"{what[0].upper()}{what[1:]} (tools/experiments.toml).\n"] if what else [])
        emulated = experiment_emulation(exp)
        if emulated:
            parts += [*heading,
                      f"Left out: measured under emulation ({emulated}), so none of its {len(exp.summary)} summary rows is a "
                      "measurement; the rows stay in the run's files, marked in their `emulated` column.\n"]
            continue
        protocol = exp.sidecar.get("protocol", {})
        pin = exp.sidecar.get("pinned_cpu", -1)
        parts += [*heading,
                  f"Protocol `{protocol.get('name', '?')}`: {protocol.get('samples')} samples after "
                  f"{protocol.get('warmup_rounds')} warm-up rounds, "
                  f"{'interleaved (A B A B ...)' if protocol.get('interleave') else 'blocked'}, "
                  f"{'pinned to CPU ' + str(pin) if pin >= 0 else exp.sidecar.get('pin_note', 'not pinned')}; "
                  f"bootstrap {protocol.get('bootstrap_resamples')} resamples (seed {protocol.get('bootstrap_seed')}).\n",
                  "```json\n" + json.dumps(protocol, indent=2) + "\n```\n",
                  experiment_markdown(exp), where.report_section(run.path, exp.name),
                  "\nUnavailable metrics:\n\n", unavailable_markdown(exp.summary)]
    return "\n".join(parts)


def knees_or_why(find, exp, metric: str, what: str, parts: list[str]) -> list[dict]:
    """The experiment's knees from `find` (through `dlab knee`), or none with the reason appended
    to `parts` when the dlab binary is not there."""
    try:
        return find(exp.samples, exp.summary, metric)
    except FileNotFoundError as e:
        parts.append(f"{what} skipped: {e}\n")
        return []


def simulated_knees_markdown(run: Run, parts: list[str]) -> str | None:
    """`dlab knee` on each memory-dependence predictor's simulated flushes against copies, per K-copy
    kind, order and dispatch of models_simulated (three copies or more), as a table."""
    if "models_simulated" not in run.experiments:
        return None
    exp = run.experiments["models_simulated"]
    prefix = "simulated_memory_order_flushes["
    rows = []
    for metric in dict.fromkeys(m for m in exp.summary["metric"] if m.startswith(prefix)):
        for k in knees_or_why(kcopy_knees, exp, metric, "Knee detection on simulated flushes", parts):
            rows.append([metric[len(prefix):-1], k["model"], k["order"], k["dispatch"], str(k["length"]), k["summary"]])
    if not rows:
        return ("No knee fitted: each memory-dependence predictor's series needs at least 4 cases at 3 distinct "
                "copies per K-copy kind, order and dispatch (`dlab models --predict` with more `--copies`).\n")
    return markdown_table(["predictor", "model", "order", "dispatch", "elements", "result"], rows)


def analysis_markdown(run: Run) -> str:
    """Figures, knees and the cross-CPU RFC table; written into <run>/figures/. Experiments measured
    under emulation are left out of all of it (and the RFC table leaves out emulated runs), saying so."""
    parts = []
    run, left_out = without_emulated(run)
    if left_out:
        parts += ["## Left out: made under emulation\n",
                  "Emulation is never a measurement; no figure, knee or comparison below uses these experiments: "
                  + ", ".join(f"`{name}` ({label})" for name, label in left_out.items()) + ".\n"]
    probes_csv = run.path.parent.parent / "probes" / "register_budget.csv"
    figures = all_figures(run, run.path / "figures", probes_csv if probes_csv.exists() else None)
    if figures:
        parts += ["## Figures\n", "Each figure has its data next to it (`figures/<name>.csv`); estimated or unavailable "
                  "metrics are named on the figure.\n"]
        parts += [f"![{f.stem}](figures/{f.name})\n" for f in figures]
    knees = simulated_knees_markdown(run, parts)
    if knees:
        parts += ["## Knees of the simulated flushes (`dlab knee`, per memory-dependence predictor, against copies K)\n",
                  "SIMULATED flushes per dispatch (models_simulated), never counted: where each predictor's flushes step "
                  "with the copies, the seeds' K-copy question asked of each predictor.\n", knees]
    if "models" in run.experiments:
        exp = run.experiments["models"]
        metric = pick_cycles(exp.summary)[0]
        knees = knees_or_why(kcopy_knees, exp, metric, "Knee detection", parts)
        if knees:
            parts += [f"## Knees (`dlab knee`, {metric} per dispatch against copies K)\n",
                      markdown_table(["model", "order", "dispatch", "elements", "result"],
                                     [[k["model"], k["order"], k["dispatch"], str(k["length"]), k["summary"]] for k in knees])]
        runs = latest_runs(run.path.parent.parent)
        if not any(r.path == run.path for r in runs):
            runs.append(run)
        parts += ["## Change against `vec` per CPU (RFC table)\n",
                  "At the configuration nearest the research's (64 statements, about 171 handlers), tail dispatch; each "
                  "column names its regime.\n", rfc_change_table(runs, simulated=run)]
        sweep = length_sweep_table(run)
        if sweep:
            parts += ["## This CPU's predictability sweep\n",
                      "The same placements at other program lengths: short random programs let the indirect-branch predictor "
                      "learn the dispatch sequence; long ones are bound by mispredicted dispatches, where state placement "
                      "matters less.\n", sweep]
    if "wasm_dbinop" in run.experiments:
        exp = run.experiments["wasm_dbinop"]
        metric = pick_cycles(exp.summary)[0]
        knees = knees_or_why(dbinop_knees, exp, metric, "D-binop knee detection", parts)
        if knees:
            parts += [f"## D-binop knee in the interpreter (`dlab knee`, {metric} per wasm instruction against D)\n",
                      "D+1 i32 binops back to back in a loop, D distinct consecutive pairs (the loop adds 9 fixed pairs); "
                      "the research found its knee between 11 and 19 pairs.\n",
                      markdown_table(["dispatch", "placement", "result"], [[k["dispatch"], k["placement"], k["summary"]] for k in knees])]
    comparison = model_interpreter_markdown(run)
    if comparison:
        parts += ["## Model vs interpreter: dispatch modes against switch\n", comparison]
    lowering = lowering_markdown(run)
    if lowering:
        parts += ["## Interpreter speed techniques (the lowering's fold, fuse and super)\n", lowering]
    placements = placements_markdown(run)
    if placements:
        parts += ["## Model vs interpreter: stack placements against vec\n", placements]
    model = cycle_model_markdown(run)
    if model:
        parts += ["## Cycle model, checked against measured cycles (issue 46, item 6)\n",
                  "Predicted cycles per dispatch = the ideal bound + simulated mispredicts x the measured penalty, beside "
                  "the measured cycles of the same case; the shares are of the predicted cycles. An ESTIMATE of where the "
                  "cycles go where no PMU says it.\n", model]
    kernel_model = kernel_cycle_model_markdown(run)
    if kernel_model:
        parts += ["## Cycle model on the interpreter's kernels (issue 46, item 6)\n",
                  "The same model on real programs: each kernel in an engine whose handlers are functions of their own, its "
                  "ideal bound from the path each handler usually ran (the trace's counts) weighted by its entries, its "
                  "simulated mispredicts at the measured penalty, beside the cycles per dispatch the wasm experiment measured. "
                  "An ESTIMATE of where the cycles go where no PMU says it.\n", kernel_model]
    kernels = kernel_mispredict_markdown(run)
    if kernels:
        parts += ["## Which predictor could this core have? The kernels' mispredicts against their time (issue 46, item 6)\n",
                  "Each simulated indirect row's mispredicts (with TAGE's conditional ones) at the measured penalty, beside the "
                  "cycles per dispatch the same kernel took in the same engine: a row charging more than the whole dispatch "
                  "took is refuted for this core.\n", kernels]
    fits = flush_penalty_markdown(run)
    if fits:
        parts += ["## Flush penalty, fitted on the K-copy series (issue 46, item 4)\n",
                  "What the cycle model leaves unexplained, against each memory-dependence row's simulated flushes: the cycles a "
                  "flush would cost if that row were this core's predictor.\n", fits]
    budgets = budgets_markdown(run)
    if budgets:
        parts += ["## Budgets: what bounding an invocation costs (fuel, deadline)\n", budgets]
    return "\n".join(parts)


def write_report(run_dir: str | Path) -> Path:
    run = load_run(run_dir)
    out = Path(run_dir) / "report.md"
    if out.exists():
        raise FileExistsError(f"{out} exists; results are never overwritten")
    tmp = out.with_name(f".report.md.tmp.{os.getpid()}")
    tmp.write_text(render(run) + "\n" + analysis_markdown(run))
    os.link(tmp, out)  # fails rather than replace a report written meanwhile
    tmp.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="a run directory under results/<cpu>/")
    args = ap.parse_args(argv)
    try:
        out = write_report(args.run_dir)
    except (FileNotFoundError, FileExistsError, ValueError) as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
