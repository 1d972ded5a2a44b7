"""Loading result files: a run directory holds machine.json, counters.csv/.json and, per
experiment, <name>.summary.csv, <name>.samples.csv and <name>.json."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


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


def uarch_name(machine: dict) -> str:
    """The microarchitecture a fingerprint names (older fingerprints: libpfm4's PMU)."""
    micro = machine.get("microarchitecture", {})
    return micro.get("name") or micro.get("libpfm_pmu") or "unknown"
