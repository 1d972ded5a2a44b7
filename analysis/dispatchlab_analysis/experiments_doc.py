"""Rewrites the generated experiments table of docs/results-schema.md from tools/experiments.toml.

    python -m dispatchlab_analysis.experiments_doc docs/results-schema.md     (`just experiments-doc`)
    python -m dispatchlab_analysis.experiments_doc docs/results-schema.md --check
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .experiments import RECIPES, REGISTRY, Registry, Step, duration, load_registry
from .schema_doc import replace_block

BEGIN = "<!-- experiments:begin (generated from tools/experiments.toml by `just experiments-doc`, do not edit) -->\n"
END = "<!-- experiments:end -->"


def _cell(text: str) -> str:
    """Markdown-safe, with the placeholders as the docs spell them."""
    return text.replace("{run}", "<run>").replace("{build_dir}", "build/<preset>").replace("|", "\\|")


def _command(step: Step, recipe: str) -> str:
    """The step's dlab arguments (no {dlab}, no `--run-dir {run}`), its condition and its expected time."""
    r = step.recipes.get(recipe)
    if r is None:
        return ""
    argv = list(r.argv)
    if argv[0] == "{dlab}":
        argv = argv[1:]
    for i in range(len(argv) - 1):
        if argv[i] == "--run-dir" and argv[i + 1] == "{run}":
            del argv[i:i + 2]
            break
    text = "`" + " ".join(argv) + "`"
    if r.stdout and r.stdout != "/dev/null":
        text += f" > `{r.stdout}`"
    for e in r.extra:
        when = f"`{e.if_on_path}` is on PATH" if e.if_on_path else f"`{e.if_exists}` exists"
        text += f", and `{' '.join(e.argv[:1])} ...` when {when}"
    return _cell(text + f" ({duration(r.seconds)})")


def render_block(registry: Registry) -> str:
    rows = ["| writes | what | " + " | ".join(f"`just {r}`" for r in RECIPES) + " |", "|---|---|" + "---|" * len(RECIPES)]
    for s in registry.steps:
        writes = f"`{s.name}.*`" if s.experiment else _cell(s.writes or "")
        what = s.what + (f"; only when `{s.if_exists}` exists" if s.if_exists else "")
        rows.append(f"| {writes} | {_cell(what)} | " + " | ".join(_command(s, r) for r in RECIPES) + " |")
    totals = []
    for recipe in RECIPES:
        steps = registry.recipe_steps(recipe)
        total = sum(s.recipes[recipe].seconds for s in steps)
        totals.append(f"`just {recipe}` {len(steps)} steps, {duration(total)}")
    m = registry.measured
    rows += ["", f"Expected times (each step measured once, the corpus built): {'; '.join(totals)}; on "
             f"{m.get('cpu', '?')}, at {m.get('commit', '?')}. `just plan rfc` prints the plan for this machine."]
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("doc", help="docs/results-schema.md")
    ap.add_argument("--registry", default=str(REGISTRY))
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when the block is not current")
    a = ap.parse_args(argv)
    p = Path(a.doc)
    old = p.read_text()
    new = replace_block(old, render_block(load_registry(a.registry)), BEGIN, END)
    if a.check:
        if new != old:
            print(f"{p}: the experiments block is not current; run `just experiments-doc`", file=sys.stderr)
            return 1
        return 0
    p.write_text(new)
    print(f"updated {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
