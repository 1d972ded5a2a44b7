"""Groups are selected by what their baseline case records (results.rows_whose_baseline), never by
matching case or baseline names; the measured case is `case` and the stack placement `placement`."""
import ast
import math
from pathlib import Path

import pandas as pd
import dispatchlab_analysis
from dispatchlab_analysis import tables
from dispatchlab_analysis.results import baseline_params, load_run, parse_params, rows_whose_baseline, with_case, with_params

FIXTURES = Path(__file__).parent / "fixtures"
PACKAGE = Path(dispatchlab_analysis.__file__).parent

# Name fragments of the experiments' cases that once picked groups ("stack/vec/...", ".../switch/...").
NAME_FRAGMENTS = ("stack/", "/switch", "/vec", "/tail")
NAME_MATCHERS = {"startswith", "endswith", "contains", "match", "fullmatch", "find", "index", "rfind", "search"}


def name_matches(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, code) of every call that matches a string holding a case-name fragment
    (x.startswith("stack/vec/"), s.str.contains("/switch/"), re.match(...)) and every
    `"/switch/" in x`."""
    def fragment(node) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and any(f in node.value for f in NAME_FRAGMENTS))

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in NAME_MATCHERS:
            args = list(node.args) + [k.value for k in node.keywords]
            if any(fragment(a) or (isinstance(a, ast.Tuple) and any(fragment(e) for e in a.elts)) for a in args):
                found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Compare) and fragment(node.left) and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_selects_rows_by_matching_a_case_or_baseline_name():
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 8
    offenders = [f"{m.name}:{line}: {code}" for m in modules for line, code in name_matches(ast.parse(m.read_text()))]
    assert not offenders, "select groups with results.rows_whose_baseline (recorded axes), not by name:\n" + "\n".join(offenders)


def test_the_scan_finds_the_name_matches_it_forbids():
    src = ('s = df[df["baseline"].str.startswith("stack/vec/")]\n'
           'm = models["baseline"].str.contains("/switch/")\n'
           'k = "/switch/" in case\n'
           'ok = df["model"].str.startswith("kcopy")\n')
    assert sorted(line for line, _ in name_matches(ast.parse(src))) == [1, 2, 3]


def summary(rows):
    """A raw summary (the case in `variant`, as on disk) from (case, baseline, params, ratio)."""
    return pd.DataFrame([dict(variant=c, baseline=b, params=p, metric="cycles", n=5, median=10.0, ratio=r, ratio_ci95_lo=r,
                              ratio_ci95_hi=r, smaller_k=5, smaller_n=5) for c, b, p, r in rows])


# Names carry none of the fragments the old code matched: only the recorded params tell the groups apart.
ROWS = [
    ("p0", "p0", "model=stack;variant=vec;dispatch=tail;copies=17", 1.0),   # placement group, baseline vec/tail
    ("p1", "p0", "model=stack;variant=sp;dispatch=tail;copies=17", 0.6),
    ("m0", "m0", "model=stack;variant=sp;dispatch=switch;copies=17", 1.0),  # mode group, baseline switch
    ("m1", "m0", "model=stack;variant=sp;dispatch=tail;copies=17", 0.5),
    ("v0", "v0", "model=stack;variant=vec;dispatch=switch;copies=4", 1.0),  # a vec mode group: switch, not tail
    ("v1", "v0", "model=stack;variant=vec;dispatch=tail;copies=4", 0.7),
    ("o1", "gone", "model=stack;variant=sp;dispatch=tail;copies=17", 0.9),  # its baseline's rows are not in the frame
]


def test_baseline_params_are_read_from_the_baseline_rows_params():
    df = with_params(summary(ROWS))
    base = baseline_params(df)
    assert list(base.index) == list(df.index)
    assert list(base["placement"].fillna("-")) == ["vec", "vec", "sp", "sp", "vec", "vec", "-"]
    assert list(base["dispatch"].fillna("-")) == ["tail", "tail", "switch", "switch", "switch", "switch", "-"]
    assert list(base["copies"].fillna(0)) == [17, 17, 17, 17, 4, 4, 0]
    # A raw summary (the case in its on-disk `variant` column) gives the same.
    pd.testing.assert_frame_equal(baseline_params(summary(ROWS)), base)


def test_rows_whose_baseline_selects_groups_by_recorded_axes():
    df = with_params(summary(ROWS))
    cases = lambda **axes: list(rows_whose_baseline(df, **axes)["case"])
    assert cases(placement="vec", dispatch="tail") == ["p0", "p1"]
    assert cases(dispatch="switch") == ["m0", "m1", "v0", "v1"]
    assert cases(placement="vec") == ["p0", "p1", "v0", "v1"]
    assert cases(copies=4) == ["v0", "v1"]  # numeric axes compare as numbers
    assert cases(dispatch=["tail", "switch"], copies={17}) == ["p0", "p1", "m0", "m1"]
    assert cases(placement="none") == [] and cases(no_such_axis="x") == []
    # Selecting by the baseline's axes does not filter on the row's own: m1 is tail, in a switch group.
    assert "m1" in cases(dispatch="switch")


def test_the_case_and_the_placement_are_named_apart():
    raw = summary(ROWS)
    df = with_params(raw)
    assert list(df["case"]) == list(raw["variant"])
    assert list(df["placement"]) == ["vec", "sp", "sp", "sp", "vec", "vec", "sp"]
    assert "variant" not in df  # a version-1 row's `variant` param reads as `placement`
    assert list(with_case(raw)["case"]) == list(raw["variant"]) and with_case(df) is df


def test_the_fixture_runs_groups_are_found_as_the_name_prefix_found_them():
    df = with_params(load_run(FIXTURES / "run-models").experiments["models"].summary)
    by_axes = rows_whose_baseline(df, placement="vec", dispatch="tail")
    by_axes = by_axes[by_axes["model"] == "stack"]
    by_name = df[(df["model"] == "stack") & df["baseline"].map(lambda b: b.split("/")[:2] == ["stack", "vec"])]
    assert len(by_axes) > 0 and by_axes.index.equals(by_name.index)
    interp = with_params(load_run(FIXTURES / "run-interp").experiments["models"].summary)
    switch = rows_whose_baseline(interp, dispatch="switch")
    assert len(switch) > 0 and set(switch["baseline"]) == {"kcopy_u/sp/switch/K1/random"}


def test_every_change_cell_is_written_one_way():
    r = pd.Series(dict(n=5, ratio=0.66, ratio_ci95_lo=0.6, ratio_ci95_hi=0.7, smaller_k=11, smaller_n=11))
    row = next(pd.DataFrame([r]).itertuples())
    assert tables.change_ci(0.66, 0.6, 0.7) == "-34% [-40%, -30%]"
    assert tables.change_cell(row) == "-34% [-40%, -30%], 11/11 faster"
    assert tables.change_cell(row, "smaller") == "-34% [-40%, -30%], 11/11 smaller"
    unmeasured = next(pd.DataFrame([dict(r, ratio=math.nan)]).itertuples())
    assert tables.change_cell(unmeasured) == ""


def test_schema_1_rows_read_as_schema_2_writes_them():
    # version 1 wrote the placement, "native" and a peer's name all as `variant`
    assert parse_params("dispatch=tail;variant=sp_wt") == {"dispatch": "tail", "placement": "sp_wt"}
    assert parse_params("dispatch=native;variant=native") == {"dispatch": "native"}
    assert parse_params("dispatch=peer;variant=node") == {"dispatch": "peer", "peer": "node"}
    assert parse_params("dispatch=tail;placement=sp") == {"dispatch": "tail", "placement": "sp"}
