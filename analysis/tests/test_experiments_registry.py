"""tools/experiments.toml: it parses, its names are unique and are the files its steps write, its
conditions are the Justfile's old ones, and the Justfile's rfc and models recipes run it through
the runner."""
import re
from pathlib import Path

import pytest

from dispatchlab_analysis import experiments
from dispatchlab_analysis.experiments import RegistryError, load_registry, parse_registry

REPO = Path(__file__).resolve().parents[2]


def test_registry_parses_and_every_step_has_a_recipe_an_argv_and_an_expected_time():
    reg = load_registry()
    assert reg.path == REPO / "tools" / "experiments.toml"
    assert {"cpu", "commit"} <= set(reg.measured)
    for step in reg.steps:
        assert step.recipes, step.name
        for recipe, r in step.recipes.items():
            assert recipe in experiments.RECIPES
            assert r.argv[0] == "{dlab}", (step.name, recipe)
            assert r.seconds >= 0
    assert reg.recipe_steps("rfc") and reg.recipe_steps("models")


def test_registry_names_are_unique():
    names = [s.name for s in load_registry().steps]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def written_name(argv: tuple[str, ...]) -> str:
    """The experiment a dlab command line writes (<name>.summary.csv), by dlab's naming rules:
    the command's name or --name (`wasm bench` writes wasm, `wasm programs` programs), then _calls for --calls,
    _valgrind for --valgrind, _simulated for --predict."""
    args = list(argv[1:])
    name = {("wasm", "bench"): "wasm", ("wasm", "programs"): "programs"}.get(tuple(args[:2]), args[0])
    if "--name" in args:
        name = args[args.index("--name") + 1]
    if "--calls" in args:
        name += "_calls"
    if "--valgrind" in args:
        name += "_valgrind"
    if "--predict" in args:
        name += "_simulated"
    return name


def test_each_experiment_name_is_the_file_its_steps_write():
    for step in load_registry().steps:
        if not step.experiment:
            continue
        for recipe, r in step.recipes.items():
            assert written_name(r.argv) == step.name, (step.name, recipe, r.argv)
            assert r.argv[-2:] == ("--run-dir", "{run}"), (step.name, recipe)


def test_every_interpreter_cachegrind_step_shares_the_recipe_runs_reuse_folder():
    """A case two benches of one recipe run share (wasm_ir's stack IR is wasm's tail_pn) is counted once."""
    for step in load_registry().steps:
        for recipe, r in step.recipes.items():
            if r.argv[1:3] == ("wasm", "bench") and "--valgrind" in r.argv:
                i = r.argv.index("--valgrind-reuse")
                assert r.argv[i + 1] == "{scratch}", (step.name, recipe)


def test_experiment_names_are_in_run_order_and_leave_out_other_steps():
    names = experiments.experiment_names()
    assert names[:3] == ["calibrate", "models", "models_valgrind"]
    assert "counters" not in names and "probes" not in names and "handler_signatures" not in names
    assert experiments.in_run_order(["zz_mine", "wasm", "calibrate", "aa_mine"]) == ["calibrate", "wasm", "aa_mine", "zz_mine"]


def test_the_corpus_steps_and_the_node_peer_are_conditional():
    reg = load_registry()
    corpus = [s.name for s in reg.steps if "corpus" in s.name]
    assert corpus and all(reg.step(n).if_exists == "{build_dir}/interpreter/corpus/corpus.wasm" for n in corpus)
    extras = [(s.name, e.if_on_path or e.if_exists) for s in reg.steps for r in s.recipes.values() for e in r.extra]
    assert extras == [("wasm", "node"), ("wasm", "build/peers/wasm3/wasm3"), ("wasm", "build/peers/wasm3/wasm3"),
                      ("wasm_valgrind", "build/peers/wasm3-portable/wasm3"),
                      ("wasm_pace_heldout", "build/peers/wasm3/wasm3"), ("wasm_pace_heldout", "{build_dir}/dlab-run"),
                      ("programs", "build/peers/wasm3/wasm3"), ("wasm_pace_kernels", "build/peers/wasm3/wasm3")]


@pytest.mark.parametrize("text, message", [
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n'
     '[[step]]\nname = "a"\nwhat = "y"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n', "twice"),
    ('[[step]]\nname = "a"\nwhat = "x"\n', "no recipe"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\n', "seconds"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = []\nseconds = 1\n', "argv"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = "dlab x"\nseconds = 1\n', "argv"),
    ('[[step]]\nname = "a"\nwhat = "x"\nif_exists = "f"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n', "unless"),
    ('[[step]]\nname = "a"\nwhat = "x"\nexperiment = false\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n', "writes"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\nsecs = 2\n', "unknown keys"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.nightly]\nargv = ["{dlab}"]\nseconds = 1\n', "unknown keys"),
    # malformed in kind, not only in keys (issue 48, item 6)
    ('measured = 5\n[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n', "`measured` must be a table"),
    ('step = 5\n', "`step` must be an array of tables"),
    ('step = [1, 2]\n', "step 1 is int 1, not a table"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = nan\n', "finite number >= 0, not nan"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = inf\n', "finite number >= 0, not inf"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = true\n', "not True"),
    ('[[step]]\nname = "a"\nwhat = "x"\nrfc = 3\n', "must be a table"),
    ('[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\nstdout = 3\n', "`stdout` must be a file name"),
    ('[[step]\n', "not TOML"),
])
def test_registry_mistakes_are_refused_with_what_is_wrong(text, message):
    with pytest.raises(RegistryError, match=message):
        parse_registry(text)


def recipe_body(justfile: str, recipe: str) -> str:
    m = re.search(rf"^{recipe}:( [\w-]+)*\n((?:    .*\n|\n)*?)(?=^\S|\Z)", justfile, re.M)
    assert m, f"no `{recipe}` recipe in the Justfile"
    return m.group(2)


# What a recipe builds and checks before its run directory: `models` builds the models and engines a
# default build leaves out and runs their tests first (rfc depends on `build-compared`).
PREPARE = {"rfc": [], "pace": [], "models": ["cmake --preset {{preset}} -DDLAB_ALL_MODELS=ON -DDLAB_COMPARED_ENGINES=ON > /dev/null",
                                  "cmake --build --preset {{preset}}", "ctest --preset {{preset}} -L 'models|compared'"]}


@pytest.mark.parametrize("recipe", ["rfc", "models", "pace"])
def test_justfile_recipe_runs_the_registry_through_the_runner(recipe):
    body = recipe_body((REPO / "Justfile").read_text(), recipe)
    assert "set -euo pipefail" in body
    steps = [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith(("#", "echo", "set "))]
    assert steps[:len(PREPARE[recipe])] == PREPARE[recipe]
    steps = steps[len(PREPARE[recipe]):]
    assert steps[0] == "run=$({{new_run}})", "the publishing recipes refuse a dirty tree (Justfile's new_run)"
    assert steps[1] == (f'{{{{python}}}} -m dispatchlab_analysis.experiments {recipe} "$run" '
                        "--dlab {{dlab}} --build-dir {{build_dir}}")
    assert steps[2] == 'DLAB_BIN="$PWD/{{dlab}}" {{python}} -m dispatchlab_analysis.report "$run"'
    assert len(steps) == 3, "an experiment run outside the registry: add it to tools/experiments.toml"


def test_an_extra_needs_exactly_one_condition(tmp_path):
    base = '[[step]]\nname = "a"\nwhat = "x"\n[step.rfc]\nargv = ["{dlab}"]\nseconds = 1\n[[step.rfc.extra]]\nargv = ["--x"]\nunless = "u"\n'
    for extra in ("", 'if_on_path = "node"\nif_exists = "f"\n'):
        f = tmp_path / "experiments.toml"
        f.write_text(base + extra)
        with pytest.raises(RegistryError, match="one of `if_on_path` / `if_exists`"):
            load_registry(f)
