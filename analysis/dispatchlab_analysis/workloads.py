"""The workload suites of `dlab wasm bench --suite`, read from their one list.

interpreter/workloads/workloads.def is C preprocessor data (SUITE and WORKLOAD rows) that dlab
and the command build include; this reads the same rows for Python (tools/superinstructions.py's
profile, the tests), strictly: a row it cannot read is an error at its file:line. The corpus
suite's workloads are rows of interpreter/corpus/corpus.def (CORPUS_WORKLOAD).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS_DEF = ROOT / "interpreter" / "workloads" / "workloads.def"
CORPUS_DEF = ROOT / "interpreter" / "corpus" / "corpus.def"

# A row: NAME(args) alone on its line; a string argument is "..." with no embedded quote.
_ROW = re.compile(r"^(SUITE|WORKLOAD|CORPUS_WORKLOAD)\((.*)\)\s*$")
_ARG = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[A-Za-z_0-9.]+)\s*(?:,|$)')


@dataclass(frozen=True)
class Workload:
    suite: str      # the suite's id
    name: str
    size: int
    quick: int      # --quick's size; 0: a quarter of size
    profile: int    # superinstructions.py's profile size; 0: not profiled
    role: str       # the corpus's selection / held_out; "" elsewhere
    what: str


@dataclass
class Suite:
    id: str
    name: str       # what --suite takes
    module: str
    command: str    # "" when the suite has no WASI command module
    what: str
    workloads: list[Workload] = field(default_factory=list)


class DefError(ValueError):
    pass


def _args(text: str, where: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _ARG.match(text, pos)
        if not m or m.end() == pos:
            raise DefError(f"{where}: cannot read the arguments at column {pos + 1}: {text[pos:pos + 30]!r}")
        tok = m.group(1)
        out.append(tok[1:-1].replace('\\"', '"').replace("\\\\", "\\") if tok.startswith('"') else tok)
        pos = m.end()
    return out


def _rows(path: Path, kinds: dict[str, int]) -> list[tuple[str, list[str], str]]:
    rows = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.startswith(tuple(kinds)):
            continue
        where = f"{path}:{lineno}"
        m = _ROW.match(line)
        if not m or m.group(1) not in kinds:
            raise DefError(f"{where}: not a row: {line[:60]!r}")
        args = _args(m.group(2), where)
        if len(args) != kinds[m.group(1)]:
            raise DefError(f"{where}: {m.group(1)} takes {kinds[m.group(1)]} arguments, this row has {len(args)}")
        rows.append((m.group(1), args, where))
    return rows


def _int(text: str, where: str) -> int:
    if not text.isdigit():
        raise DefError(f"{where}: {text!r} is not a non-negative integer")
    return int(text)


def read_suites(workloads_def: Path = WORKLOADS_DEF, corpus_def: Path = CORPUS_DEF) -> dict[str, Suite]:
    """Every suite by --suite name, in the file's order, each with its workloads."""
    suites: dict[str, Suite] = {}
    by_id: dict[str, Suite] = {}
    for kind, a, where in _rows(workloads_def, {"SUITE": 5, "WORKLOAD": 6}):
        if kind == "SUITE":
            if a[0] in by_id or a[1] in suites:
                raise DefError(f"{where}: suite {a[0]} ({a[1]}) is listed twice")
            by_id[a[0]] = suites[a[1]] = Suite(*a)
            continue
        if a[0] not in by_id:
            raise DefError(f"{where}: workload {a[1]} names suite {a[0]}, which no SUITE row above declares")
        w = Workload(a[0], a[1], _int(a[2], where), _int(a[3], where), _int(a[4], where), "", a[5])
        if w.profile and w.suite != "kernels":
            raise DefError(f"{where}: {w.name} has a profile size, but superinstructions.py profiles the kernels module only")
        by_id[a[0]].workloads.append(w)
    if "corpus" in by_id and corpus_def.exists():
        for _, a, where in _rows(corpus_def, {"CORPUS_WORKLOAD": 5}):
            by_id["corpus"].workloads.append(Workload("corpus", a[0], _int(a[1], where), _int(a[2], where), 0, a[3], a[4]))
    names = [w.name for s in suites.values() for w in s.workloads]
    if dups := sorted({n for n in names if names.count(n) > 1}):
        raise DefError(f"{workloads_def}: workloads listed twice: {', '.join(dups)}")
    return suites


def profile_sizes(suites: dict[str, Suite] | None = None) -> dict[str, int]:
    """The selection set: every workload with a profile size, at that size (superinstructions.py)."""
    suites = read_suites() if suites is None else suites
    return {w.name: w.profile for s in suites.values() for w in s.workloads if w.profile}


def corpus_selection_sizes(suites: dict[str, Suite] | None = None) -> dict[str, int]:
    """The corpus's selection programs at their quick size: what the register IR's
    superinstructions are chosen from (superinstructions.py profile-register); never a held-out one."""
    suites = read_suites() if suites is None else suites
    corpus = suites.get("corpus")
    return {w.name: w.quick for w in corpus.workloads if w.role == "selection"} if corpus else {}
