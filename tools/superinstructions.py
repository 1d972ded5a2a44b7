#!/usr/bin/env python3
"""Superinstructions for the interpreter, chosen from measured pair frequencies.

Two steps, both deterministic from files in the repository:

  profile   runs `dlab wasm profile` (the counting engine, lowering fold+fuse) on every workload
            kernel and writes the consecutive-op pair counts to interpreter/src/engines/handlers/superinstructions.pairs.csv
  generate  picks the most frequent pairs whose two ops both keep to the top-of-stack vocabulary
            (TOS-kind entries of handlers.def, including every NUM/MEM/BINOP/CMPOP/LOADOP form)
            and whose first op can go on to the second (its body has a NEXT: never unreachable),
            and writes interpreter/src/engines/handlers/superinstructions.def: one SUPER(name, first, second,
            (first body), (second body)) entry per pair, the bodies taken from handlers.def through
            the C preprocessor (so generated forms such as i32_add_ri have their real bodies).
            In the first body every NEXT / NEXT_KEEP becomes a step into the second body
            (DLW_STEP / DLW_STEP_KEEP, handlers.def) instead of a dispatch. --check compares
            instead of writing (a ctest runs it, so a handlers.def change cannot leave the
            generated file stale).

The lowering's `super` technique rewrites a pair's first op word into the superinstruction and
keeps the second's words in place (skipped at run time), so branch offsets do not move.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "interpreter" / "src"  # includes are written from here ("engines/handlers/numeric.def")
HANDLERS = SRC / "engines" / "handlers.def"
PAIRS = SRC / "engines" / "handlers" / "superinstructions.pairs.csv"
REGISTER_PAIRS = SRC / "engines" / "handlers" / "superinstructions_register.pairs.csv"
# The register IR's code with its superinstructions: how often a pair superinstruction is followed
# by an op (profile-register --triples), what the triples are chosen from.
REGISTER_TRIPLES = SRC / "engines" / "handlers" / "superinstructions_register_triples.pairs.csv"
OUT = SRC / "engines" / "handlers" / "superinstructions.def"

# The profile's inputs: the workloads of interpreter/workloads/workloads.def with a profile size
# (the kernels, the selection set), each at that size: pair frequencies, not timings, so the size
# only has to reach the steady state of each kernel's loops.
sys.path.insert(0, str(ROOT / "analysis"))
from dispatchlab_analysis.workloads import corpus_selection_sizes, profile_sizes  # noqa: E402

PROFILE_SIZES = profile_sizes()
DEFAULT_COUNT = 64
DEFAULT_REGISTER_TRIPLES = 128  # measured against none and 256 only (docs/interpreter/register-ir.md)
DEFAULT_REGISTER_COUNT = 600  # chosen on the selection programs (docs/interpreter/register-ir.md, "Register-IR superinstructions")

# handlers.def's FUEL() is the budget's charge (budget.h, defined per engine): kept as written.
FUEL_TEXT = "DLW_CHARGE()"
PAIRS_COLUMNS = ["workload", "first", "second", "count", "dispatches"]


PROGRAMS_LIST = ROOT / "interpreter" / "programs" / "programs.json"


def programs_cache() -> Path:
    """Where tools/fetch-programs put the whole programs (its --cache default)."""
    env = os.environ.get("DLAB_PROGRAMS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "dispatchlab" / "programs"


def selection_programs() -> list[dict]:
    """programs.json's whole programs whose role is selection (never a held-out one)."""
    try:
        listed = json.loads(PROGRAMS_LIST.read_text())["programs"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"{PROGRAMS_LIST}: cannot read its programs ({e})")
    return [p for p in listed if p.get("role") == "selection"]


PROFILE_TIMEOUT = 1800  # seconds: a profile of the selection programs takes seconds; a hang is an error


def run_profile(argv: list[str], **kwargs) -> None:
    """One `dlab wasm profile`, its wait bounded; a failure is one line naming the command and
    the end of what it said, not a traceback."""
    try:
        subprocess.run(argv, check=True, capture_output=True, text=True, timeout=PROFILE_TIMEOUT, **kwargs)
    except subprocess.CalledProcessError as e:
        sys.exit(f"{' '.join(argv)}: exited with status {e.returncode}: {' '.join((e.stderr or '').split())[-600:]}")
    except subprocess.TimeoutExpired:
        sys.exit(f"{' '.join(argv)}: still running after {PROFILE_TIMEOUT} s, stopped")
    except OSError as e:
        sys.exit(f"{argv[0]}: cannot run it ({e.strerror}); give --dlab")


def pair_rows(workload: str, js: Path) -> list[tuple]:
    """The pairs a profile's --json file counted, as rows of the pairs CSV for `workload`."""
    doc = json.loads(js.read_text())
    return [(workload, p["from"], p["to"], p["count"], doc["dispatches"]) for p in doc["pairs"]]


def profile_program(dlab: str, program: dict, lowering: str, js: Path) -> None:
    """One whole WASI program of the selection in the counting engine, as `dlab wasm programs`
    runs it: its arguments and stdin, its folder's input files in a scratch folder it may write."""
    check_fetched(program)
    folder = programs_cache() / program["name"]
    module = folder / "module.wasm"
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(folder, scratch, dirs_exist_ok=True, ignore=shutil.ignore_patterns("module.wasm", ".fetched"))
        try:
            stdin = open(Path(scratch) / program["stdin"], "rb") if program.get("stdin") else subprocess.DEVNULL
        except OSError as e:
            sys.exit(f"{folder}: {program['name']}'s stdin {program['stdin']} cannot be read ({e.strerror}): fetch it again")
        try:
            run_profile([dlab, "wasm", "profile", "--ir", "register", "--lowering", lowering, "--json", str(js),
                         "--dir-rw", f"{scratch}::/", str(module), "--", *program.get("args", [])], cwd=scratch, stdin=stdin)
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()


def check_fetched(program: dict) -> None:
    folder = programs_cache() / program["name"]
    if not (folder / ".fetched").exists() or not (folder / "module.wasm").exists():
        sys.exit(f"{folder}: the selection program {program['name']} is not fetched: run tools/fetch-programs --only "
                 f"{program['name']} (or set DLAB_PROGRAMS_CACHE to where it is)")


def profile(dlab: str, module: str, out: Path, sizes: dict[str, int] | None = None, ir: str = "stack",
            programs: list[dict] | None = None, kernels: tuple[str, dict[str, int]] | None = None,
            lowering: str | None = None, keep=lambda first, second: True) -> None:
    """Pair counts per workload into `out`. `lowering`: every technique but super by default (acc
    and elide change the register IR only); `keep` chooses the rows written."""
    lowering = lowering or ("fold+fuse+acc+elide" if ir == "register" else "fold+fuse")
    for program in programs or []:
        check_fetched(program)  # before minutes of the others' profiles
    rows = []
    sizes = PROFILE_SIZES if sizes is None else sizes
    if not sizes:
        sys.exit("no workload to profile (the register IR's come from the corpus's selection programs: interpreter/corpus/corpus.def)")
    # (workload as the CSV names it, module, export, size): the module's workloads, then the kernels'
    kernels_module, kernel_sizes = kernels if kernels else ("", {})
    invocations = [(w, module, w, size) for w, size in sizes.items()]
    invocations += [(f"kernels/{k}", kernels_module, k, size) for k, size in kernel_sizes.items()]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (workload, mod, export, size) in enumerate(invocations):
            js = Path(tmp) / f"{i}.json"
            run_profile([dlab, "wasm", "profile", "--ir", ir, "--lowering", lowering, "--json", str(js), "--invoke", export,
                         mod, str(size)])
            rows += pair_rows(workload, js)
        for program in programs or []:
            js = Path(tmp) / f"program-{program['name']}.json"
            profile_program(dlab, program, lowering, js)
            rows += pair_rows(program["name"], js)
    with out.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(PAIRS_COLUMNS)
        rows = [row for row in rows if keep(row[1], row[2])]
        w.writerows(rows)
    print(f"wrote {out} ({len(rows)} pairs over {len(invocations) + len(programs or [])} workloads)")


def entries(clang: str, handlers: Path) -> dict[str, tuple[str, str]]:
    """Every op of handlers.def: name -> (kind OP|TOS, body), bodies macro-expanded except the
    dispatch and placement vocabulary (NEXT, NEXT_KEEP, GOTO, TRAP, TOP_VALUE, SET_TOP, PUSH_VALUE),
    which stays as written so each dispatch mode and placement expands it its own way."""
    # DLW_REGISTER_IR: the register forms' real bodies (placement.h sets it per engine; where it is
    # 0 a form traps, and so does every SUPER_R, so the text read here is only compiled where it is 1).
    probe = ("#define DLW_NO_SUPERINSTRUCTIONS 1\n#define DLW_REGISTER_IR 1\n"
             "#define OP(name, ...) DLW_ENTRY OP name DLW_BEGIN __VA_ARGS__ DLW_END\n"
             "#define TOS(name, ...) DLW_ENTRY TOS name DLW_BEGIN __VA_ARGS__ DLW_END\n"
             '#include "engines/operand_layout.h"\n'
             f'#include "{handlers}"\n')
    with tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False) as f:
        f.write(probe)
        path = f.name
    try:
        out = subprocess.run([clang, "-std=c++20", "-E", "-P", f"-I{SRC}", path], check=True, capture_output=True, text=True).stdout
    except OSError as e:
        sys.exit(f"{clang}: cannot run it to read {handlers} ({e.strerror}); give --clang")
    except subprocess.CalledProcessError as e:
        sys.exit(f"{handlers}: {clang} cannot preprocess it: {' '.join(e.stderr.split())[:1000]}")
    finally:
        Path(path).unlink()
    found = {}
    for m in re.finditer(r"DLW_ENTRY (OP|TOS) (\w+) DLW_BEGIN (.*?) DLW_END", out, re.S):
        found[m.group(2)] = (m.group(1), " ".join(m.group(3).replace(FUEL_TEXT, "FUEL()").split()))
    if not found:
        sys.exit(f"{handlers}: no entries found through the preprocessor")
    return found


def integer(column: str, text: str) -> int:
    # int() would also take " 7", "+7" and "1_000": a count is digits, as the profile writes it.
    if not re.fullmatch(r"-?[0-9]+", text):
        raise ValueError(f"{column} {text!r} is not an integer")
    return int(text)


def pair_row(row: list[str], ops: dict | None) -> tuple[str, str, str, int, int]:
    """One row of the pairs CSV, checked whole: (workload, first, second, count, dispatches), or a
    ValueError saying what is wrong with it. With `ops`, both op names must be entries of handlers.def."""
    if len(row) != len(PAIRS_COLUMNS):
        raise ValueError(f"{len(row)} fields, the header has {len(PAIRS_COLUMNS)}")
    for column, text in zip(PAIRS_COLUMNS, row):
        if not text.strip():
            raise ValueError(f"{column} is empty")
    workload, first, second = row[:3]
    count, dispatches = integer("count", row[3]), integer("dispatches", row[4])
    if count < 0 or dispatches <= 0 or count > dispatches:
        raise ValueError(f"count {count} of {dispatches} dispatches")
    for op in (first, second) if ops is not None else ():
        if op not in ops:
            raise ValueError(f"op {op!r} is not in handlers.def (re-run `tools/superinstructions.py profile`)")
    return workload, first, second, count, dispatches


def read_pairs(path: Path, only: set[str] | None = None, ops: dict | None = None) -> list[tuple[str, str, float]]:
    """(first, second, mean share of dispatches over the workloads (over groups of them: below), or
    over `only`), most frequent first. Every row is checked, chosen or not: one malformed row means the file is not a profile."""
    # A workload named GROUP/NAME is one of a group (the kernels: kernels/fib, ...): the group's
    # share of a pair is its mean over the group's workloads, and the mean is over groups, so that
    # twelve small kernels weigh as one program does.
    share: dict[str, dict[tuple[str, str], float]] = defaultdict(lambda: defaultdict(float))
    grouped: dict[str, set[str]] = defaultdict(set)
    workloads = set()
    try:
        with path.open(newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header != PAIRS_COLUMNS:
                sys.exit(f"{path}:1: the header is {','.join(header) if header else 'missing (empty file)'}, "
                         f"expected {','.join(PAIRS_COLUMNS)}")
            for row in reader:
                if not row:
                    continue  # the csv module's blank line
                try:
                    workload, first, second, count, dispatches = pair_row(row, ops)
                except ValueError as e:
                    sys.exit(f"{path}:{reader.line_num}: malformed row ({e})")
                if only is None or workload in only:
                    group = workload.split("/")[0]
                    share[group][(first, second)] += count / dispatches
                    grouped[group].add(workload)
                    workloads.add(workload)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"{path}: cannot read it ({e})")
    if only is not None and only - workloads:
        sys.exit(f"{path}: no pairs for workload(s) {', '.join(sorted(only - workloads))}")
    if not workloads:
        sys.exit(f"{path}: no pairs (re-run `tools/superinstructions.py profile`)")
    mean: dict[tuple[str, str], float] = defaultdict(float)
    for group, pairs in share.items():
        for pair, s in pairs.items():
            mean[pair] += s / len(grouped[group]) / len(grouped)
    return sorted(((a, b, s) for (a, b), s in mean.items()), key=lambda t: (-t[2], t[0], t[1]))


def step(body: str, name: str) -> str:
    body = re.sub(r"\bNEXT_KEEP\(", f"DLW_STEP_KEEP({name}, ", body)
    return re.sub(r"\bNEXT\(", f"DLW_STEP({name}, ", body)


def steps_on(body: str) -> bool:
    """Whether a handler can go on to the op after it (a NEXT / NEXT_KEEP): one that only traps or
    jumps (unreachable, br) never runs its successor, so a pair starting with it is no superinstruction,
    whatever the profile counted for it."""
    return re.search(r"\bNEXT(_KEEP)?\(", body) is not None


def eligible(first: str, second: str, ops: dict[str, tuple[str, str]]) -> bool:
    if ops[first][0] != "TOS" or ops[second][0] != "TOS":
        return False  # a slot-working (OP) handler needs the cached top flushed around it
    return steps_on(ops[first][1])


def register_eligible(first: str, second: str, ops: dict[str, tuple[str, str]]) -> bool:
    """A pair of the register IR's code: built only in the sp placement (no cached top), where an
    OP entry composes as a TOS one does; the first must step on to the second."""
    return steps_on(ops[first][1])


def super_rows(path: Path) -> list[tuple[str, str, str, bool]]:
    """(name, first, second, register IR's) of every row of a generated superinstructions.def."""
    if not path.exists():
        return []
    return [(m.group(2), m.group(3), m.group(4), m.group(1) == "SUPER_R")
            for m in re.finditer(r"^(SUPER|SUPER_R)\((\w+), (\w+), (\w+),", path.read_text(), re.M)]


def triples_profile_filter(path: Path):
    """What profile-register --triples keeps: a row whose first is one of the register IR's pair
    superinstructions and whose second is no superinstruction. It profiles a binary built from
    `path` with pairs only: one built with triples runs them, so their (pair, third) rows would be
    missing and the next generate would drop them."""
    rows = super_rows(path)
    names = {name for name, *_ in rows}
    pairs = {name for name, first, second, register in rows if register and first not in names}
    if any(register and first in names for _, first, _, register in rows):
        sys.exit(f"{path} has triples already, and a dlab built from it runs them: first `tools/superinstructions.py "
                 "generate --register-triples 0`, rebuild dlab, then profile-register --triples, generate, and rebuild")
    if not pairs:
        sys.exit(f"{path} has no register-IR pair superinstructions to extend: run generate first")
    return lambda first, second: first in pairs and second not in names


def read_triples(path: Path, pairs: dict[str, tuple[str, str]], ops: dict) -> list[tuple[str, str, float]]:
    """(pair superinstruction, op after it, mean share), most frequent first, from the profile of the
    code with superinstructions; every row checked, and only the pairs chosen now are kept (the
    profile may be older than the pair list)."""
    if path.read_text().count("\n") <= 1:
        sys.exit(f"{path}: no pairs (re-run `tools/superinstructions.py profile-register --triples`, or generate with "
                 "--register-triples 0)")
    kept = []
    for first, second, share in read_pairs(path, None, None):
        if second not in ops:
            sys.exit(f"{path}: op {second!r} is not in handlers.def (re-run `tools/superinstructions.py profile-register --triples`)")
        if first in pairs:
            kept.append((first, second, share))
    return kept


def generate(clang: str, count: int, only: set[str] | None = None, register_count: int = DEFAULT_REGISTER_COUNT,
             register_triples: int = DEFAULT_REGISTER_TRIPLES) -> str:
    ops = entries(clang, HANDLERS)
    pairs = read_pairs(PAIRS, only, ops)
    chosen = [(first, second, share) for first, second, share in pairs if eligible(first, second, ops)][:count]
    if not chosen:
        sys.exit(f"{PAIRS}: none of its {len(pairs)} pairs is two top-of-stack ops the first of which steps on "
                 "to the second: no superinstruction to generate")
    taken = {f"{first}__{second}" for first, second, _ in chosen}
    register = []
    if register_count and REGISTER_PAIRS.exists():
        register = [(first, second, share) for first, second, share in read_pairs(REGISTER_PAIRS, None, ops)
                    if register_eligible(first, second, ops) and f"{first}__{second}" not in taken][:register_count]
    lines = ["// Generated by tools/superinstructions.py from handlers.def and superinstructions.pairs.csv: do not edit.",
             "// SUPER(name, first, second, (first body), (second body)): the most frequent consecutive pairs of",
             "// top-of-stack handlers over the workload kernels' profiles (lowering fold+fuse), each with",
             "// its mean share of dispatches. The first body steps into the second instead of dispatching.",
             f"// Chosen from: {', '.join(sorted(only)) if only else 'every workload'}; {count} pairs at most.", ""]
    for first, second, share in chosen:
        name = f"{first}__{second}"
        lines.append(f"// {share * 100:.2f}% of dispatches")
        lines.append(f"SUPER({name}, {first}, {second}, ({step(ops[first][1], name)}), ({ops[second][1]}))")
    if register:
        with REGISTER_PAIRS.open(newline="") as f:  # read_pairs has checked every row
            workloads = sorted({row[0] for row in csv.reader(f) if row} - {PAIRS_COLUMNS[0]})
        lines += ["", "// SUPER_R(name, first, second, (first body), (second body)): the most frequent consecutive pairs",
                  "// of the register IR's code over the corpus's selection programs' profiles (--ir register, lowering",
                  f"// fold+fuse+acc+elide; {REGISTER_PAIRS.name}), each with its mean share of dispatches. Chosen from: "
                  f"{', '.join(workloads)}; {register_count} pairs at most.", ""]
        for first, second, share in register:
            name = f"{first}__{second}"
            lines.append(f"// {share * 100:.2f}% of dispatches")
            lines.append(f"SUPER_R({name}, {first}, {second}, ({step(ops[first][1], name)}), ({ops[second][1]}))")
        made = {f"{first}__{second}": (first, second) for first, second, _ in register}
        triples = []
        if register_triples and REGISTER_TRIPLES.exists():
            triples = [t for t in read_triples(REGISTER_TRIPLES, made, ops)
                       if steps_on(ops[made[t[0]][1]][1]) and f"{t[0]}__{t[1]}" not in made][:register_triples]
        if triples:
            lines += ["", "// Triples: SUPER_R(name, pair, third, (pair body), (third body)), a pair superinstruction above",
                      "// and the op after it, the most frequent such over the same programs' profiles with the",
                      f"// superinstructions ({REGISTER_TRIPLES.name}); {register_triples} at most. The pair's body is its",
                      "// two bodies, the first stepping to a label before the second (DLW_SUPER_<name>_1).", ""]
            names = [f"{p}__{t}" for p, t, _ in triples] + list(made) + list(taken)
            labels = {f"{p}__{t}_1" for p, t, _ in triples}
            if len(set(names)) != len(names) or labels & set(names):
                sys.exit("two superinstructions would have one name or label: the pairs' and triples' names collide")
            for pair, third, share in triples:
                name = f"{pair}__{third}"
                a, b = made[pair]
                body = f"{{{step(ops[a][1], name + '_1')}}} DLW_SUPER_{name}_1: {{{step(ops[b][1], name)}}}"
                lines.append(f"// {share * 100:.2f}% of dispatches")
                lines.append(f"SUPER_R({name}, {pair}, {third}, ({body}), ({ops[third][1]}))")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("profile", help="measure pair frequencies into superinstructions.pairs.csv")
    p.add_argument("--dlab", default=str(ROOT / "build" / "release" / "dlab"))
    p.add_argument("--module", default=str(ROOT / "build" / "release" / "interpreter" / "workloads" / "kernels.wasm"))
    r = sub.add_parser("profile-register", help="measure the register IR's pair frequencies on the selection programs "
                       "(the corpus's, programs.json's whole programs, fetched by tools/fetch-programs, and the workload "
                       "kernels as one group) into superinstructions_register.pairs.csv")
    r.add_argument("--dlab", default=str(ROOT / "build" / "release" / "dlab"))
    r.add_argument("--module", default=str(ROOT / "build" / "release" / "interpreter" / "corpus" / "corpus.wasm"))
    r.add_argument("--triples", action="store_true",
                   help="profile the code with its superinstructions instead, into superinstructions_register_triples.pairs.csv: "
                   "how often each pair superinstruction is followed by each op (what the triples are chosen from)")
    r.add_argument("--kernels", default=str(ROOT / "build" / "release" / "interpreter" / "workloads" / "kernels.wasm"),
                   help="the workload kernels' module, profiled at their profile sizes as the group kernels/NAME")
    g = sub.add_parser("generate", help="write superinstructions.def from the pairs")
    g.add_argument("--clang", default="clang++-19")
    g.add_argument("--count", type=int, default=DEFAULT_COUNT, help="superinstructions (1..200)")
    g.add_argument("--register-count", type=int, default=DEFAULT_REGISTER_COUNT,
                   help="superinstructions of the register IR (0..1000), from superinstructions_register.pairs.csv")
    g.add_argument("--register-triples", type=int, default=DEFAULT_REGISTER_TRIPLES,
                   help="triples of the register IR (0..400): a pair superinstruction and the op after it, from "
                   "superinstructions_register_triples.pairs.csv")
    g.add_argument("--workloads", help="choose from these workloads' pairs only (comma-separated; default all), e.g. to "
                   "measure the superinstructions on workloads they were not chosen from")
    g.add_argument("--check", action="store_true", help="compare with the committed file instead of writing it")
    a = ap.parse_args(argv)
    if a.cmd == "profile":
        profile(a.dlab, a.module, PAIRS)
        return 0
    if a.cmd == "profile-register":
        if a.triples:
            keep = triples_profile_filter(OUT)
            profile(a.dlab, a.module, REGISTER_TRIPLES, corpus_selection_sizes(), "register", selection_programs(),
                    (a.kernels, PROFILE_SIZES), "fold+fuse+super+acc+elide", keep)
        else:
            profile(a.dlab, a.module, REGISTER_PAIRS, corpus_selection_sizes(), "register", selection_programs(),
                    (a.kernels, PROFILE_SIZES))
        return 0
    if not 1 <= a.count <= 200:
        ap.error("--count must be 1..200")
    if not 0 <= a.register_count <= 1000:
        ap.error("--register-count must be 0..1000")
    if not 0 <= a.register_triples <= 400:
        ap.error("--register-triples must be 0..400")
    only = set(a.workloads.split(",")) if a.workloads else None
    text = generate(a.clang, a.count, only, a.register_count, a.register_triples)
    if a.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is not current: run tools/superinstructions.py generate", file=sys.stderr)
            return 1
        print(f"{OUT} is current")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
