"""The registry of experiments (tools/experiments.toml) and the runner of `just rfc` / `just models` / `just pace` / `just flushes`.

    python -m dispatchlab_analysis.experiments rfc RUN_DIR [--dlab build/release/dlab] [--build-dir build/release]
    python -m dispatchlab_analysis.experiments models RUN_DIR --dry-run     (the plan only)

Prints the plan (each step, its expected time, the total), then runs each step as a child process
from its argument vector (never a shell), a progress line before each. The first step that fails
stops the run: the error names it, and the exit status is the step's (128 + N for signal N).
Each step runs with DLAB_RECIPE and DLAB_RECIPE_STEP in its environment, which dlab writes into
every result sidecar beside its argument vector: the files say which step of which recipe made them.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

REGISTRY = Path(__file__).resolve().parents[2] / "tools" / "experiments.toml"
RECIPES = ("rfc", "models", "pace", "flushes")
PLACEHOLDERS = ("{dlab}", "{run}", "{build_dir}", "{scratch}")


class RegistryError(ValueError):
    """tools/experiments.toml does not say what the runner needs."""


@dataclass(frozen=True)
class Extra:
    """Arguments added when a program is on PATH (the node peer) or a file exists (wasm3, built by
    `just peers`): exactly one of the two conditions."""
    if_on_path: str | None
    argv: tuple[str, ...]
    unless: str
    if_exists: str | None = None


@dataclass(frozen=True)
class RecipeStep:
    """How one recipe runs a step."""
    argv: tuple[str, ...]
    seconds: float
    stdout: str | None = None
    extra: tuple[Extra, ...] = ()


@dataclass(frozen=True)
class Step:
    name: str
    what: str
    experiment: bool = True
    writes: str | None = None
    if_exists: str | None = None
    unless: str | None = None
    recipes: dict[str, RecipeStep] = field(default_factory=dict)


@dataclass(frozen=True)
class Registry:
    steps: tuple[Step, ...]
    measured: dict
    path: Path

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def recipe_steps(self, recipe: str) -> list[Step]:
        return [s for s in self.steps if recipe in s.recipes]


def _strings(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise RegistryError(f"{where}: argv must be a non-empty list of strings")
    return tuple(value)


def _check_keys(table: dict, allowed: set[str], where: str) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise RegistryError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(allowed)})")


def parse_registry(text: str, path: Path = REGISTRY) -> Registry:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RegistryError(f"{path}: not TOML: {e}") from None
    _check_keys(data, {"measured", "step"}, str(path))
    if not isinstance(data.get("measured", {}), dict):
        raise RegistryError(f"{path}: `measured` must be a table (where the expected times were measured)")
    if not isinstance(data.get("step", []), list):
        raise RegistryError(f"{path}: `step` must be an array of tables ([[step]])")
    steps, seen = [], set()
    for i, s in enumerate(data.get("step", [])):
        if not isinstance(s, dict):
            raise RegistryError(f"{path}: step {i + 1} is {type(s).__name__} {s!r}, not a table ([[step]])")
        where = f"{path}: step {i + 1} ({s.get('name', '?')})"
        _check_keys(s, {"name", "what", "experiment", "writes", "if_exists", "unless"} | set(RECIPES), where)
        for key in ("name", "what"):
            if not isinstance(s.get(key), str) or not s[key]:
                raise RegistryError(f"{where}: `{key}` must be a non-empty string")
        if s["name"] in seen:
            raise RegistryError(f"{where}: the name {s['name']!r} is there twice")
        seen.add(s["name"])
        experiment = s.get("experiment", True)
        if not experiment and not s.get("writes"):
            raise RegistryError(f"{where}: a step with experiment = false says what it `writes`")
        if "if_exists" in s and "unless" not in s:
            raise RegistryError(f"{where}: `if_exists` needs `unless` (what to print when it is left out)")
        recipes = {}
        for recipe in RECIPES:
            if recipe not in s:
                continue
            r, rwhere = s[recipe], f"{where} [{recipe}]"
            if not isinstance(r, dict):
                raise RegistryError(f"{rwhere}: must be a table ([step.{recipe}])")
            _check_keys(r, {"argv", "seconds", "stdout", "extra"}, rwhere)
            seconds = r.get("seconds")
            # (a bool is an int to Python: `seconds = true` is not a time)
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
                raise RegistryError(f"{rwhere}: `seconds` (the expected time) must be a finite number >= 0, not {seconds!r}")
            if "stdout" in r and (not isinstance(r["stdout"], str) or not r["stdout"]):
                raise RegistryError(f"{rwhere}: `stdout` must be a file name")
            if not isinstance(r.get("extra", []), list) or not all(isinstance(e, dict) for e in r.get("extra", [])):
                raise RegistryError(f"{rwhere}: `extra` must be an array of tables")
            extras = []
            for e in r.get("extra", []):
                _check_keys(e, {"if_on_path", "if_exists", "argv", "unless"}, f"{rwhere} extra")
                conditions = [k for k in ("if_on_path", "if_exists") if isinstance(e.get(k), str)]
                if len(conditions) != 1 or not isinstance(e.get("unless"), str):
                    raise RegistryError(f"{rwhere} extra: needs one of `if_on_path` / `if_exists`, and `unless`")
                extras.append(Extra(e.get("if_on_path"), _strings(e.get("argv"), f"{rwhere} extra"), e["unless"],
                                    e.get("if_exists")))
            recipes[recipe] = RecipeStep(_strings(r.get("argv"), rwhere), float(r["seconds"]), r.get("stdout"), tuple(extras))
        if not recipes:
            raise RegistryError(f"{where}: no recipe runs it (a [step.<recipe>] table, recipe one of {', '.join(RECIPES)})")
        steps.append(Step(s["name"], s["what"], bool(experiment), s.get("writes"), s.get("if_exists"), s.get("unless"), recipes))
    if not steps:
        raise RegistryError(f"{path}: no [[step]]")
    return Registry(tuple(steps), data.get("measured", {}), path)


def load_registry(path: str | Path = REGISTRY) -> Registry:
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise RegistryError(f"{path}: not UTF-8 (byte {e.start})") from None
    return parse_registry(text, path)


def experiment_names(registry: Registry | None = None) -> list[str]:
    """Every experiment the recipes write (<name>.summary.csv), in the order they run."""
    registry = registry or load_registry()
    return [s.name for s in registry.steps if s.experiment]


@functools.lru_cache(maxsize=1)
def _registry_or_none() -> Registry | None:
    """The repository's registry, or None where it cannot be read (the package copied elsewhere)."""
    try:
        return load_registry()
    except (OSError, RegistryError, tomllib.TOMLDecodeError):
        return None


def in_run_order(names) -> list[str]:
    """Experiment names in the order the recipes run them (the registry's), then any other
    (a `dlab ... --name` of one's own) in alphabetical order."""
    registry = _registry_or_none()
    order = {n: i for i, n in enumerate(experiment_names(registry))} if registry else {}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def describe(name: str) -> str | None:
    """The registry's one line on an experiment, or None when it is not there."""
    registry = _registry_or_none()
    step = next((s for s in registry.steps if s.name == name), None) if registry else None
    return step.what if step else None


def substitute(arg: str, values: dict[str, str]) -> str:
    """Replaces {dlab}, {run}, {build_dir} and {scratch} only: any other {...} (a peer command's {module}) stays."""
    for key in PLACEHOLDERS:
        arg = arg.replace(key, values[key])
    return arg


@dataclass
class Planned:
    step: Step
    argv: list[str]        # what runs
    shown: list[str]       # what the plan and the progress print ({dlab} as dlab, {run} as $run)
    stdout: str | None
    shown_stdout: str | None
    seconds: float
    left_out: str | None   # why the step does not run, else None
    notes: list[str]       # extras left out, and why
    took: float | None = None  # measured seconds, once it ran


def plan(registry: Registry, recipe: str, dlab: str, run: str, build_dir: str,
         which: Callable[[str], str | None] = shutil.which,
         exists: Callable[[str], bool] = os.path.exists, scratch: str = "$scratch") -> list[Planned]:
    """scratch: the folder the runner makes for one recipe run ({scratch}: the cachegrind cases'
    reuse folder, so a case two benches share is counted once) and removes at its end."""
    if recipe not in RECIPES:
        raise RegistryError(f"unknown recipe {recipe!r} (known: {', '.join(RECIPES)})")
    values = {"{dlab}": dlab, "{run}": run, "{build_dir}": build_dir, "{scratch}": scratch}
    shown_values = {"{dlab}": "dlab", "{run}": "$run", "{build_dir}": build_dir, "{scratch}": "$scratch"}
    out = []
    for step in registry.recipe_steps(recipe):
        r = step.recipes[recipe]
        template, notes = list(r.argv), []
        for e in r.extra:
            if (which(e.if_on_path) if e.if_on_path else exists(substitute(e.if_exists, values))):
                template += e.argv
            else:
                notes.append(e.unless)
        left_out = None
        if step.if_exists and not exists(substitute(step.if_exists, values)):
            left_out = step.unless
        out.append(Planned(step, [substitute(a, values) for a in template], [substitute(a, shown_values) for a in template],
                           substitute(r.stdout, values) if r.stdout else None,
                           substitute(r.stdout, shown_values) if r.stdout else None, r.seconds, left_out, notes))
    return out


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def duration(seconds: float) -> str:
    """12 s, 4 min 10 s, 1 h 5 min."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min" if s % 3600 // 60 else f"{s // 3600} h"


def _shown(arg: str) -> str:
    if arg in ("$run", "$scratch"):
        return arg
    return arg if arg.startswith("$run/") and shlex.quote(arg[5:]) == arg[5:] else shlex.quote(arg)


def command_line(p: Planned) -> str:
    """The step as a shell would spell it, with $run for the run directory (for reading only: it runs from argv)."""
    text = " ".join(_shown(a) for a in p.shown)
    if p.shown_stdout:
        text += " > " + _shown(p.shown_stdout)
    return text


def print_plan(steps: list[Planned], recipe: str, run: str, registry: Registry, out: TextIO) -> None:
    running = [p for p in steps if p.left_out is None]
    total = sum(p.seconds for p in running)
    source = "tools/experiments.toml" if registry.path == REGISTRY else str(registry.path)
    print(f"== plan of `just {recipe}`: {plural(len(running), 'step')}, about {duration(total)}; times from {source}, "
          f"measured once on {registry.measured.get('cpu', 'an unnamed CPU')}"
          + ("" if run == "$run" else f"; $run is {run}"), file=out)
    i = 0
    for p in steps:
        if p.left_out is not None:
            print(f"   -  {p.step.name}: left out ({p.left_out})", file=out)
            continue
        i += 1
        print(f"{i:4d}. {p.step.name}: {command_line(p)}  [{duration(p.seconds)}]", file=out)
        for note in p.notes:
            print(f"        ({note})", file=out)
    print(f"      total {duration(total)}", file=out, flush=True)


def run_steps(steps: list[Planned], out: TextIO | None = None,
              clock: Callable[[], float] = time.monotonic, recipe: str = "") -> int:
    """Runs the steps that are not left out, in order; 0, or the first failing step's status.
    recipe: what DLAB_RECIPE says in each step's environment (its sidecars record it)."""
    out = out or sys.stdout
    todo = [p for p in steps if p.left_out is None]
    left = sum(p.seconds for p in todo)
    started = clock()
    i = 0
    for p in steps:
        if p.left_out is not None:
            print(f"== {p.step.name}: left out ({p.left_out})", file=out, flush=True)
            continue
        i += 1
        print(f"== [{i}/{len(todo)}] {p.step.name}: {command_line(p)} (expected {duration(p.seconds)}; "
              f"{duration(left)} left)", file=out)
        print(f"   {p.step.what}", file=out)
        for note in p.notes:
            print(f"   ({note})", file=out)
        out.flush()
        t0 = clock()
        where = f"step {i}/{len(todo)} `{p.step.name}` ({command_line(p)})"
        try:
            f = open(p.stdout, "w") if p.stdout else None
        except OSError as e:
            print(f"experiments: error: {where}: cannot write its output file: {e}", file=sys.stderr, flush=True)
            return 1
        try:
            with f if f else contextlib.nullcontext():
                env = dict(os.environ, DLAB_RECIPE=recipe, DLAB_RECIPE_STEP=p.step.name)
                rc = subprocess.run(p.argv, stdout=f, env=env).returncode
        except OSError as e:
            print(f"experiments: error: {where} could not start: {e}", file=sys.stderr, flush=True)
            return 127
        took = clock() - t0
        if rc != 0:
            if rc < 0:
                try:
                    how = f"was killed by {signal.Signals(-rc).name}"
                except ValueError:
                    how = f"was killed by signal {-rc}"
                status = 128 - rc
            else:
                how, status = f"failed with exit status {rc}", rc
            print(f"experiments: error: {where} {how} after {duration(took)}; the steps after it did not run",
                  file=sys.stderr, flush=True)
            return status
        left -= p.seconds
        print(f"   done in {took:.1f} s" if took < 10 else f"   done in {duration(took)}", file=out, flush=True)
        p.took = took
    print(f"== {plural(len(todo), 'step')} done in {duration(clock() - started)} (expected {duration(sum(p.seconds for p in todo))})",
          file=out, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recipe", choices=RECIPES)
    ap.add_argument("run_dir", help="the run directory (from `dlab new-run`): {run}")
    ap.add_argument("--dlab", default="build/release/dlab", help="the dlab binary: {dlab} (default %(default)s)")
    ap.add_argument("--build-dir", default="build/release", help="the build folder: {build_dir} (default %(default)s)")
    ap.add_argument("--registry", default=str(REGISTRY), help="the registry (default tools/experiments.toml)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan only")
    ap.add_argument("--times-json", metavar="FILE", help="write each step's measured seconds here (to refresh the registry's)")
    a = ap.parse_args(argv)
    # Where the times go is checked first: a missing folder is said before the steps run, not after.
    if a.times_json and not Path(a.times_json).resolve().parent.is_dir():
        print(f"experiments: error: --times-json {a.times_json}: no folder {Path(a.times_json).parent}", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="dlab-recipe-") as scratch:
            try:
                registry = load_registry(a.registry)
                steps = plan(registry, a.recipe, a.dlab, a.run_dir, a.build_dir, scratch=scratch)
            except (OSError, RegistryError) as e:
                print(f"experiments: error: {e}", file=sys.stderr)
                return 2
            if not steps:
                print(f"experiments: error: {a.registry}: no step belongs to the recipe {a.recipe}", file=sys.stderr)
                return 2
            print_plan(steps, a.recipe, a.run_dir, registry, sys.stdout)
            if a.dry_run:
                return 0
            rc = run_steps(steps, recipe=a.recipe)
    except KeyboardInterrupt:
        # The step's own process got the same Ctrl-C; no traceback, and the shell's status for it.
        print("experiments: interrupted; the steps after it did not run", file=sys.stderr, flush=True)
        return 130
    if a.times_json:
        try:
            Path(a.times_json).write_text(json.dumps(
                {"recipe": a.recipe, "steps": {p.step.name: round(p.took, 1) for p in steps if p.took is not None}}, indent=2) + "\n")
        except OSError as e:
            print(f"experiments: error: --times-json {a.times_json}: {e}", file=sys.stderr)
            return rc or 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
