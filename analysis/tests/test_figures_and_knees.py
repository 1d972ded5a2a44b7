import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dispatchlab_analysis import figures, knee, report, tables
from dispatchlab_analysis.results import load_run

FIXTURES = Path(__file__).parent / "fixtures"
NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "run_overview.ipynb"
SIMULATED_NOTEBOOK = NOTEBOOK.with_name("simulated.ipynb")


@pytest.fixture
def models_run(tmp_path):
    dst = tmp_path / "run-models"
    shutil.copytree(FIXTURES / "run-models", dst)
    return dst


def test_every_figure_is_written_with_its_data_and_says_what_is_missing(models_run, tmp_path):
    run = load_run(models_run)
    made = figures.all_figures(run, tmp_path / "fig", FIXTURES / "probes" / "register_budget.csv")
    names = {p.stem for p in made}
    assert names == {"flushes_vs_copies", "cycles_vs_handlers", "backend_vs_handlers", "valgrind_counts", "register_budget"}
    for n in names:
        for ext in ("png", "svg", "csv"):
            assert (tmp_path / "fig" / f"{n}.{ext}").stat().st_size > 0
    # Flushes are unavailable on the fixture's VM: the data file keeps the counted ones empty, never 0,
    # and draws the simulated ones (models_simulated) beside them, labelled so.
    flushes = pd.read_csv(tmp_path / "fig" / "flushes_vs_copies.csv")
    assert flushes.loc[flushes["source"] == "counted", "median"].isna().all()
    simulated = flushes[flushes["source"] == "simulated"]
    assert set(simulated["predictor"]) == {"always_speculate", "store_sets"}
    # Every update of kcopy_u meets the older store to the top: the bound flushes on all but the first
    # of its 32,770 dispatches (one run of the 32,768-element program).
    bound = simulated[(simulated["model"] == "kcopy_u") & (simulated["predictor"] == "always_speculate")]
    assert bound["median"].tolist() == pytest.approx([1000 * 32769 / 32770] * 2, abs=0.01)
    # The own-slot control: nothing aliases once there are several handlers.
    assert simulated[(simulated["model"] == "kcopy_o") & (simulated["copies"] == 8)]["median"].eq(0).all()
    svg = (tmp_path / "fig" / "flushes_vs_copies.svg").read_text()
    assert "unavailable" in svg
    assert "SIMULATED" in svg and "simulated: store_sets" in svg
    assert "ESTIMATES" in (tmp_path / "fig" / "cycles_vs_handlers.svg").read_text()


def test_model_vs_interpreter_pairs_each_mode_with_the_kcopy_change(tmp_path):
    shutil.copytree(FIXTURES / "run-interp", tmp_path / "run")
    run = load_run(tmp_path / "run")
    out = figures.model_vs_interpreter(run, tmp_path / "fig")
    assert out is not None and out.stat().st_size > 0
    data = pd.read_csv(tmp_path / "fig" / "model_vs_interpreter.csv")
    assert set(data["dispatch"]) == {"tail", "tail_pn"}  # switch is the baseline of both sides
    assert set(data["workload"]) == {"fib", "crc32"}
    # The interpreter side is the bench's own paired ratio; the model side is median over median.
    wasm = run.experiments["wasm"].summary
    row = wasm[(wasm["case"] == "fib/tail") & (wasm["metric"] == "cycles_tsc_estimate")].iloc[0]
    got = data[(data["dispatch"] == "tail") & (data["workload"] == "fib")].iloc[0]
    assert got["interp_change"] == pytest.approx(row["ratio"] - 1)
    m = run.experiments["models"].summary
    med = lambda v: m[(m["case"] == v) & (m["metric"] == "cycles_tsc_estimate")].iloc[0]["median"]
    assert got["model_change"] == pytest.approx(med("kcopy_u/sp/tail/K128/random") / med("kcopy_u/sp/switch/K128/random") - 1)
    assert "ESTIMATES" in (tmp_path / "fig" / "model_vs_interpreter.svg").read_text()
    # Without the interpreter's table there is no such figure (and no error).
    assert figures.model_vs_interpreter(load_run(FIXTURES / "run-models"), tmp_path / "fig2") is None


def test_knee_finds_a_known_step_through_dlab(dlab_bin, monkeypatch):
    monkeypatch.setenv("DLAB_BIN", str(dlab_bin))
    rng = np.random.default_rng(3)
    x = np.repeat([5, 8, 11, 13, 15, 17, 19, 22, 26, 30], 5)
    y = np.where(x <= 11, 5.0, np.where(x >= 19, 7.0, 5.0 + 2.0 * (x - 11) / 8)) + rng.normal(0, 0.05, x.size)
    k = knee.detect(x, y)
    assert k["best"]["model"] == "plateau"
    assert (k["best"]["start"], k["best"]["end"]) == (11, 19)
    assert k["summary"].startswith("steps up between")
    flat = knee.detect(x, np.full(x.size, 3.0) + rng.normal(0, 0.01, x.size))
    assert flat["best"]["model"] == "flat"


def test_a_simulated_sweep_of_three_copies_is_skipped_not_an_error(dlab_bin, monkeypatch):
    # `just rfc` simulates K = 1, 8, 32 once each: three points, fewer than dlab knee needs (4)
    monkeypatch.setenv("DLAB_BIN", str(dlab_bin))
    params = "model=kcopy_u;placement=sp;dispatch=tail;copies={};order=cyclic;length=4096"
    cases = [f"kcopy_u/sp/tail/K{k}" for k in (1, 8, 32)]
    summary = pd.DataFrame({"case": cases, "params": [params.format(k) for k in (1, 8, 32)]})
    samples = pd.DataFrame({"case": cases, "metric": ["m"] * 3, "value": [1.0, 0.0, 0.0]})
    assert knee.kcopy_knees(samples, summary, "m") == []
    assert not knee.fits_a_knee(pd.Series([1, 8, 32])) and knee.fits_a_knee(pd.Series([1, 1, 8, 32]))
    four = pd.concat([samples, samples.iloc[[0]]], ignore_index=True)
    assert len(knee.kcopy_knees(four, summary, "m")) == 1


def test_rfc_table_has_a_column_per_cpu_and_k_of_n(models_run):
    a = load_run(models_run)
    b = load_run(models_run)
    b.machine = dict(b.machine, cpu_slug="zen4-25-17")
    md = tables.rfc_change_table([a, b])
    header = md.splitlines()[0]
    assert "icx-6-106" in header and "zen4-25-17" in header
    assert "faster" in md
    # The fixture's calibration predates the cross-check: changes only, and the table says why.
    assert "(baseline)" not in md and "absolute cycles not shown" in md


def with_calibration(run, estimate, refused=""):
    tsc = dict(run.machine["tsc"], core_cycles_per_tick_estimate=estimate, estimate_refused=refused,
               cross_check={"tolerance": 0.1, "attempts": 1, "chains": []})
    run.machine = dict(run.machine, tsc=tsc)
    return run


def test_rfc_table_shows_absolute_cycles_only_where_the_calibration_passed_its_cross_check(models_run):
    passed = with_calibration(load_run(models_run), 1.43)
    refused = with_calibration(load_run(models_run), None, "calibration chains disagree: imul 1.430, add 3.900 cycles/tick")
    refused.machine = dict(refused.machine, cpu_slug="emr-6-207")
    md = tables.rfc_change_table([passed, refused])
    vec_row = next(line for line in md.splitlines() if line.startswith("| vec |"))
    cells = [c.strip() for c in vec_row.strip("|").split("|")]
    assert cells[1].endswith("cycles (baseline)")  # icx: estimated and cross-checked
    assert cells[2] == "baseline"                  # emr: refused, so no absolute number
    assert "TSC-estimated cycles" in md
    assert "calibration chains disagree" in md


def test_report_embeds_figures_knees_and_the_rfc_table(models_run, dlab_bin, monkeypatch):
    monkeypatch.setenv("DLAB_BIN", str(dlab_bin))
    text = report.write_report(models_run).read_text()
    assert "![cycles_vs_handlers](figures/cycles_vs_handlers.png)" in text
    assert "## Knees" in text
    assert "## Change against `vec` per CPU" in text
    assert (models_run / "figures" / "valgrind_counts.png").exists()


def execute_notebook(notebook: Path, run: Path, dlab_bin, tmp_path) -> str:
    """The notebook run headless as `just plots` runs it, on `run`: its executed text (figures into
    tmp_path/nbfig)."""
    env = dict(os.environ, DLAB_RUN=str(run), DLAB_FIGURES=str(tmp_path / "nbfig"), DLAB_BIN=str(dlab_bin))
    out = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", str(notebook),
                          "--output-dir", str(tmp_path / "nb")], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return (tmp_path / "nb" / notebook.name).read_text()


def test_notebook_executes_headless_on_a_fixture(models_run, dlab_bin, tmp_path):
    executed = execute_notebook(NOTEBOOK, models_run, dlab_bin, tmp_path)
    assert "image/png" in executed
    assert (tmp_path / "nbfig" / "cycles_vs_handlers.png").exists()


def test_the_simulated_notebook_executes_headless_and_says_what_is_missing(models_run, dlab_bin, tmp_path):
    """analysis/notebooks/simulated.ipynb (issue 46, item 8): flushes, back-end stalls and cycles per
    dispatch, simulated beside counted. On the fixture (models timed and simulated, no
    wasm_simulated): the flushes figure is drawn, and the dispatch-mode section says it is not in
    this run instead of failing."""
    executed = execute_notebook(SIMULATED_NOTEBOOK, models_run, dlab_bin, tmp_path)
    assert "image/png" in executed
    assert (tmp_path / "nbfig" / "flushes_vs_copies.png").exists()
    assert "Not in this run: no wasm_simulated experiment" in executed


def test_counted_flushes_are_drawn_beside_the_simulated_ones(tmp_path):
    """Where a PMU counts machine clears (issue 46, item 6: counted beside simulated on the same
    run): the fixture's K-copy rows given counted memory_order_flushes, as a PMU run writes them.
    The figure's data holds both, each labelled by its source, the counted ones per order and the
    simulated ones per predictor."""
    import csv
    run_dir = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "fixtures" / "run-models", run_dir)
    path = run_dir / "models.summary.csv"
    rows = list(csv.DictReader(path.open()))
    counted = 0
    for r in rows:
        if r["metric"] == "memory_order_flushes" and r["variant"].startswith("kcopy"):
            copies = int(r["variant"].split("/K")[1].split("/")[0])
            value = 0.004 * copies  # flushes per dispatch: a step is not needed, a value per case is
            r.update({"n": "5", "median": str(value), "min": str(value), "mad": "0", "ci95_lo": str(value), "ci95_hi": str(value),
                      "unavailable_reason": "", "backend": "perf_event"})
            counted += 1
    assert counted >= 6
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    run = load_run(run_dir)
    png = figures.flushes_vs_copies(run, tmp_path / "fig")
    assert png is not None and png.exists()
    data = pd.read_csv(tmp_path / "fig" / "flushes_vs_copies.csv")
    assert set(data["source"]) == {"counted", "simulated"}
    c = data[(data["source"] == "counted") & (data["model"] == "kcopy_u")].sort_values("copies")
    assert list(c["copies"]) == [1, 8, 32, 128] and c["median"].tolist() == pytest.approx([4, 32, 128, 512])  # per 1k
    assert data[data["source"] == "simulated"]["predictor"].notna().all()
    # The K-copy rows are all counted now: nothing of them for the figure's 'unavailable' note.
    k = run.experiments["models"].summary
    assert figures.unavailable_note(k[k["case"].str.startswith("kcopy")], "memory_order_flushes") is None
