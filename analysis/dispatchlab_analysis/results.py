"""Loading result files: a run directory holds machine.json, counters.csv/.json and, per
experiment, <name>.summary.csv, <name>.samples.csv and <name>.json."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

# Program lengths of runs recorded before program length was an axis (and so not in their rows).
LEGACY_STACK_STATEMENTS = 2000
LEGACY_KCOPY_LENGTH = 32768
# The research's configuration: 64 statements, about 171 handlers (17 copies of 10 kinds + exit).
RESEARCH_STATEMENTS = 64
RESEARCH_HANDLERS = 171


class ResultFormatError(ValueError):
    """A result file does not match the schema its sidecar declares."""


@dataclass
class Experiment:
    name: str
    summary: pd.DataFrame
    samples: pd.DataFrame
    sidecar: dict


@dataclass
class Run:
    path: Path
    machine: dict
    counters: pd.DataFrame | None
    experiments: dict[str, Experiment] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return self.path.name


def read_table(csv_path: Path, sidecar: dict, table: str) -> pd.DataFrame:
    """Reads one CSV as strings-first, checking its header against the sidecar's schema.

    Empty cells stay missing (NaN), never 0: an empty value is an unavailable metric."""
    columns = [c["name"] for c in sidecar["schema"][table]["columns"]]
    df = pd.read_csv(csv_path, dtype=str, keep_default_na=False, na_values=[""])
    if list(df.columns) != columns:
        raise ResultFormatError(f"{csv_path}: header {list(df.columns)} does not match schema {columns}")
    numeric = {"n", "median", "min", "mad", "ci95_lo", "ci95_hi", "running_fraction_min", "ratio",
               "ratio_ci95_lo", "ratio_ci95_hi", "smaller_k", "smaller_n", "round", "value", "running_fraction"}
    for c in columns:
        if c in numeric:
            df[c] = pd.to_numeric(df[c])
    for c in ("estimated", "available", "selected", "interleaved"):
        if c in df.columns:
            df[c] = df[c].fillna("0").astype(int).astype(bool)
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].fillna("")
    # The measured case's column is `case` from schema version 3; earlier files call it `variant`.
    if table in CASE_TABLES and LEGACY_CASE_COLUMN in df.columns:
        df = df.rename(columns={LEGACY_CASE_COLUMN: "case"})
    return df


def load_run(path: str | Path) -> Run:
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is not a run directory")
    machine_file = path / "machine.json"
    machine = json.loads(machine_file.read_text()) if machine_file.exists() else {}
    counters = None
    if (path / "counters.csv").exists():
        sidecar = json.loads((path / "counters.json").read_text())
        machine = machine or sidecar.get("machine", {})
        counters = read_table(path / "counters.csv", sidecar, "counters")
    run = Run(path=path, machine=machine, counters=counters)
    for summary_csv in sorted(path.glob("*.summary.csv")):
        name = summary_csv.name.removesuffix(".summary.csv")
        sidecar = json.loads((path / f"{name}.json").read_text())
        run.machine = run.machine or sidecar.get("machine", {})
        run.experiments[name] = Experiment(
            name=name,
            summary=read_table(summary_csv, sidecar, "summary"),
            samples=read_table(path / f"{name}.samples.csv", sidecar, "samples"),
            sidecar=sidecar,
        )
    return run


def cycle_estimate_status(machine: dict) -> tuple[bool, str]:
    """Whether a run's TSC cycle estimate may be shown as absolute cycles, and why (not).

    Only a calibration that passed its cross-check (two chains of different instructions agreeing)
    is trusted; runs recorded before the cross-check existed have no such check and are not."""
    tsc = machine.get("tsc", {})
    if "cross_check" not in tsc:
        return False, "calibrated by one dependent-add chain with no cross-check (a run from before the cross-check)"
    if tsc.get("core_cycles_per_tick_estimate") is None:
        return False, tsc.get("estimate_refused") or "no estimate"
    return True, (f"{tsc['core_cycles_per_tick_estimate']:.4f} core cycles/tick, the calibration chains agree within "
                  f"{tsc['cross_check']['tolerance'] * 100:.0f}%")


def machine_emulation(machine: dict) -> str:
    """'' when a fingerprint says the process ran natively (or is from before emulation was
    detected); else what ran it and how that was known ("qemu-user (hypervisor-leaf, comm)")."""
    emu = (machine or {}).get("emulation") or {}
    if not emu.get("emulated"):
        return ""
    methods = list(dict.fromkeys(e.get("method", "?") for e in emu.get("evidence", [])))
    return f"{emu.get('emulator') or 'an emulator'} ({', '.join(methods)})" if methods else emu.get("emulator") or "an emulator"


def experiment_emulation(exp: Experiment) -> str:
    """'' when an experiment was measured natively; else the emulator its rows or its sidecar name.
    Emulation is never a measurement: the report, the RFC table and fleet merges leave such
    experiments out, saying so."""
    if "emulated" in exp.summary.columns:
        marked = exp.summary["emulated"][exp.summary["emulated"] != ""]
        if len(marked):
            return str(marked.iloc[0])
    return machine_emulation(exp.sidecar.get("machine", {}))


def run_emulation(run: Run) -> str:
    """'' when every experiment of a run (and its fingerprint) is native; else the emulator."""
    for exp in run.experiments.values():
        label = experiment_emulation(exp)
        if label:
            return label
    return machine_emulation(run.machine)


def without_emulated(run: Run) -> tuple[Run, dict[str, str]]:
    """The run with only its natively measured experiments, and {experiment: emulator} of those left out."""
    left_out = {name: label for name, exp in run.experiments.items() if (label := experiment_emulation(exp))}
    kept = Run(path=run.path, machine=run.machine, counters=run.counters,
               experiments={n: e for n, e in run.experiments.items() if n not in left_out})
    return kept, left_out


def uarch_name(machine: dict) -> str:
    """The microarchitecture a fingerprint names (older fingerprints: libpfm4's PMU)."""
    micro = machine.get("microarchitecture", {})
    return micro.get("name") or micro.get("libpfm_pmu") or "unknown"


def parse_params(params: str) -> dict[str, str]:
    """'copies=16;dispatch=tail' -> {'copies': '16', 'dispatch': 'tail'}

    Rows of schema version 1 (sidecars without `schema_version`) wrote the stack placement, the
    word "native" and a peer engine's name all as `variant`; they read as version 2 writes them:
    `placement`, nothing (the native build has no placement), and `peer`."""
    d = dict(p.split("=", 1) for p in params.split(";") if "=" in p)
    legacy = d.pop(LEGACY_PLACEMENT_PARAM, None)
    if legacy is not None:
        if d.get("dispatch") == "peer":
            d.setdefault("peer", legacy)
        elif d.get("dispatch") != "native":
            d.setdefault(PLACEMENT_PARAM, legacy)
    return d


NUMERIC_PARAMS = ("copies", "statements", "length", "distinct_handlers", "distinct_pairs", "dispatches_per_run", "binop_pairs")

# Names on disk across schema versions. The summary's, samples' and functions' `case` column holds
# the measured case ("stack/sp/tail/x17/s64", "fib/tail/vec"); files before schema version 3 call
# it `variant`, and read_table renames it. A row's stack placement param is `placement` ("sp",
# "vec"), another engine's name `peer` (schema version 2; version 1 wrote both, and "native", as
# `variant`: parse_params reads them as version 2).
LEGACY_CASE_COLUMN = "variant"
CASE_TABLES = ("summary", "samples", "functions")
PLACEMENT_PARAM = "placement"
LEGACY_PLACEMENT_PARAM = "variant"


def with_case(frame: pd.DataFrame) -> pd.DataFrame:
    """A summary or samples frame with its case column named `case` (a frame built by hand with the
    old name `variant` is renamed; one read by read_table already has it)."""
    return frame if "case" in frame.columns else frame.rename(columns={LEGACY_CASE_COLUMN: "case"})


def params_frame(params: pd.Series) -> pd.DataFrame:
    """The recorded params of each row as columns, indexed like `params`: the placement as
    `placement`, the numeric axes (copies, statements, ...) as numbers."""
    p = pd.DataFrame([parse_params(s) for s in params], index=params.index)
    for c in NUMERIC_PARAMS:
        if c in p:
            p[c] = pd.to_numeric(p[c], errors="coerce")
    return p


def with_params(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with its params (model, placement, copies, order, dispatch...) as columns.

    The summary's `case` column is the measured case ("stack/sp/tail/x17/s64"). The params' stack
    placement is `placement` (`variant` in rows of schema version 1).
    `handlers` is copies times the number of handler kinds the row names (the exit handler is
    not counted)."""
    p = params_frame(summary["params"])
    out = with_case(summary)
    out = out.drop(columns=[c for c in p.columns if c in out.columns]).join(p)
    if "model" in out:
        stack = out["model"] == "stack"
        kcopy = out["model"].astype(str).str.startswith("kcopy")
        if "statements" not in out:
            out["statements"] = None
        if "length" not in out:
            out["length"] = None
        out.loc[stack & out["statements"].isna(), "statements"] = LEGACY_STACK_STATEMENTS
        out.loc[kcopy & out["length"].isna(), "length"] = LEGACY_KCOPY_LENGTH
    for c in NUMERIC_PARAMS:
        if c in out:
            out[c] = pd.to_numeric(out[c], errors="coerce")
    if "copies" in out and "kinds" in out:
        kinds = out["kinds"].fillna("").astype(str).map(lambda k: len(k.replace("+", " ").split()))
        out["handlers"] = out["copies"] * kinds
    return out


def baseline_params(df: pd.DataFrame) -> pd.DataFrame:
    """Per row of a summary (raw or with_params), the recorded params of its group's baseline case
    (placement, dispatch, model, copies, statements, ...), indexed like `df`: read from the params
    of the baseline case's own row, never from its name. A row whose baseline case has no row in
    `df` (filtered out) gets missing values, so select on the whole summary before filtering."""
    frame = with_case(df)
    cases = frame.drop_duplicates("case").set_index("case")["params"]
    params = frame["baseline"].map(cases).fillna("")
    return params_frame(params)


def rows_whose_baseline(df: pd.DataFrame, **axes) -> pd.DataFrame:
    """The rows of `df` whose group's baseline case records every given axis value (a value, or a
    list/set/tuple of values), e.g. `rows_whose_baseline(models, placement="vec", dispatch="tail")`
    is the stack model's placement groups (cases against the vec placement) and
    `rows_whose_baseline(models, dispatch="switch")` its dispatch-mode groups (cases against switch
    dispatch). A new experiment needs no new name pattern: only its recorded axes."""
    base = baseline_params(df)
    keep = pd.Series(True, index=df.index)
    for axis, value in axes.items():
        if axis not in base:
            return df.iloc[0:0]
        values = value if isinstance(value, (list, set, tuple, frozenset)) else [value]
        keep &= base[axis].isin(list(values))
    return df[keep]


def pick_cycles(df: pd.DataFrame) -> tuple[str, list[str]]:
    """Counted cycles where the PMU gave them, else the TSC estimate, labelled so; where the
    calibration refused an estimate, TSC ticks (changes are still valid, absolute cycles are not)."""
    if (df[(df["metric"] == "cycles")]["n"] > 0).any():
        return "cycles", []
    if (df[(df["metric"] == "cycles_tsc_estimate")]["n"] > 0).any():
        return "cycles_tsc_estimate", ["cycles are TSC-based ESTIMATES (no counted cycles on this machine)"]
    return "tsc_ticks", ["TSC ticks, not cycles: no counted cycles and no cross-checked cycle estimate on this machine"]


def pick_common_cycles(*frames: pd.DataFrame) -> tuple[str, list[str]]:
    """pick_cycles for a comparison across experiments measured by different processes (each
    calibrates the TSC on its own, and a busy machine can refuse the estimate in one and not the
    other): the first of cycles, cycles_tsc_estimate and tsc_ticks that every frame measured."""
    for metric, notes in (("cycles", []),
                          ("cycles_tsc_estimate", ["cycles are TSC-based ESTIMATES (no counted cycles on this machine)"])):
        if all((f[(f["metric"] == metric)]["n"] > 0).any() for f in frames):
            return metric, notes
    return "tsc_ticks", ["TSC ticks, not cycles: not every experiment compared has counted or estimated cycles"]


def nearest(values, target: float) -> float | None:
    """The value closest to target (ties: the smaller), or None."""
    vals = sorted(set(v for v in values if pd.notna(v)))
    return min(vals, key=lambda v: (abs(v - target), v)) if vals else None


def research_stack_config(stack: pd.DataFrame) -> tuple[float | None, float | None]:
    """(copies, statements) of the stack rows nearest the research's configuration."""
    statements = nearest(stack["statements"], RESEARCH_STATEMENTS)
    at = stack[stack["statements"] == statements]
    kinds = at["handlers"] / at["copies"] if "handlers" in at else pd.Series([10])
    per_kind = RESEARCH_HANDLERS / (kinds.dropna().iloc[0] if len(kinds.dropna()) else 10)
    return nearest(at["copies"], per_kind), statements


def latest_runs(results_root) -> list:
    """The latest run with models of every CPU under results/."""
    runs = []
    root = Path(results_root)
    if not (root / "README.md").exists():  # not a dispatchlab results folder
        return runs
    for cpu in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "probes"):
        candidates = sorted(d for d in cpu.iterdir() if d.is_dir() and (d / "models.summary.csv").exists())
        # The latest run measured natively: a run made under emulation is never a measurement.
        for candidate in reversed(candidates):
            run = load_run(candidate)
            if not run_emulation(run):
                runs.append(run)
                break
    return runs
