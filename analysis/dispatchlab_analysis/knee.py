"""Knee detection through `dlab knee` (the C++/Eigen implementation; one implementation, not two)."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

from .results import with_case, with_params

REPO = Path(__file__).resolve().parents[2]


def dlab_binary() -> Path:
    path = Path(os.environ.get("DLAB_BIN", REPO / "build" / "release" / "dlab"))
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: build it with `just build` or set DLAB_BIN")
    return path


def fits_a_knee(x) -> bool:
    """What `dlab knee` needs to fit a series: at least 4 points at 3 distinct x (a simulated
    sweep has one point per case, so three copies are too few; a timed one has one per sample)."""
    return len(x) >= 4 and x.nunique() >= 3


def detect(x, y, seed: int = 1) -> dict:
    """Fits flat / step / plateau to (x, y) samples; returns dlab's JSON (best, candidates, summary)."""
    data = pd.DataFrame({"x": list(x), "y": list(y)}).dropna()
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        data.to_csv(f, index=False)
        path = f.name
    try:
        out = subprocess.run([str(dlab_binary()), "knee", "--csv", path, "--x", "x", "--y", "y", "--seed", str(seed), "--json"],
                             check=True, capture_output=True, text=True)
    finally:
        os.unlink(path)
    return json.loads(out.stdout)


def kcopy_knees(samples: pd.DataFrame, summary: pd.DataFrame, metric: str) -> list[dict]:
    """Per (model, order, dispatch) of the K-copy sweep: where `metric` per dispatch changes with K."""
    params = with_params(summary)[["case", "model", "order", "dispatch", "copies", "length"]].drop_duplicates("case")
    s = with_case(samples[samples["metric"] == metric]).merge(params, on="case")
    s = s[s["model"].astype(str).str.startswith("kcopy") & s["value"].notna()]
    found = []
    for (model, order, dispatch, length), g in s.groupby(["model", "order", "dispatch", "length"]):
        if not fits_a_knee(g["copies"]):
            continue
        k = detect(g["copies"], g["value"])
        found.append({"model": model, "order": order, "dispatch": dispatch, "length": int(length), "metric": metric,
                      "summary": k["summary"], "fit": k})
    return found


def dbinop_knees(samples: pd.DataFrame, summary: pd.DataFrame, metric: str) -> list[dict]:
    """Per engine (dispatch, placement) of the D-binop bench: where `metric` per instruction changes
    with the number of distinct binop pairs D in the hot loop."""
    params = with_params(summary)[["case", "dispatch", "placement", "binop_pairs"]].drop_duplicates("case")
    s = with_case(samples[samples["metric"] == metric]).merge(params, on="case")
    s = s[s["binop_pairs"].notna() & s["value"].notna()]
    found = []
    for (dispatch, placement), g in s.groupby(["dispatch", "placement"]):
        if not fits_a_knee(g["binop_pairs"]):
            continue
        k = detect(g["binop_pairs"], g["value"])
        found.append({"dispatch": dispatch, "placement": placement, "metric": metric, "summary": k["summary"], "fit": k})
    return found
