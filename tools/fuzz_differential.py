#!/usr/bin/env python3
"""Differential fuzzing of dlab's WebAssembly engines against binaryen's interpreter and against
each other (`just fuzz SECONDS differential`; docs/interpreter/fuzzing.md).

Each module: seeded random bytes -> `wasm-opt -ttf` (the WebAssembly 3.0 features dlab runs, see
FEATURES) -> binaryen's interpreter runs every export in order (`--fuzz-exec-before`) -> a
.bin.wast script of the module, a WebAssembly stand-in for binaryen's fuzzing host
(fuzz_differential_wasm.py) and one command per export call, log entry and exported global ->
`dlab wasm spec --verbose` in every engine configuration this build has (derived from `dlab wasm
engines` and `dlab wasm spec --help`). Every configuration must give the same outcome, bit for bit,
and the outcomes must be binaryen's (NaNs as the spec allows, references as null or not). The
first disagreement is written to build/fuzz-differential/ with the command that reproduces it, and
reduced by wasm-reduce (bounded in time).

    tools/fuzz_differential.py --seconds 600                 # a campaign; seed chosen and printed
    tools/fuzz_differential.py --seed 7 --modules 20         # a fixed run
    tools/fuzz_differential.py --seed 7 --only 13            # reproduce module 13 of seed 7
    tools/fuzz_differential.py check M.wasm --config A --config B   # one module (wasm-reduce's test)

Exit status: 0 no disagreement, 1 a disagreement (the reproducer's folder is printed), 2 a usage or
tool error (what to do is printed).
"""
from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_differential_wasm as fw  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# binaryen's features: what dlab runs (the WebAssembly 3.0 core suite's proposals, as `dlab wasm
# spec` passes them: SIMD, bulk memory, reference types, tail calls, multi-value, GC, exceptions
# (exnref: legacy try/catch translated by --emit-exnref), memory64, multi-memory, extended
# constants) on, the rest off. Relaxed SIMD is on only in "relaxed" modules (one in RELAXED_ONE_IN),
# whose results are implementation-defined: those are compared among dlab's configurations only.
FEATURES = ["--enable-sign-ext", "--enable-mutable-globals", "--enable-nontrapping-float-to-int",
            "--enable-simd", "--enable-bulk-memory", "--enable-bulk-memory-opt",
            "--enable-call-indirect-overlong", "--enable-exception-handling", "--enable-tail-call",
            "--enable-reference-types", "--enable-multivalue", "--enable-gc", "--enable-memory64",
            "--enable-extended-const", "--enable-multimemory",
            "--disable-threads", "--disable-strings", "--disable-stack-switching",
            "--disable-shared-everything", "--disable-fp16", "--disable-custom-descriptors"]
RELAXED_ONE_IN = 8
BYTES_MIN, BYTES_MAX = 256, 16_384   # random input per module
DLAB_TIMEOUT = 300                   # seconds per dlab run of a batch
BINARYEN_TIMEOUT = 60                # seconds per wasm-opt call

# A dlab outcome that says a resource ran out, never a wrong answer: the module is compared up to
# the step before it (the libFuzzer differential leaves "out of memory" out the same way).
RESOURCE_LIMITS = ("out of memory", "implementation limit", "call stack exhausted")


class ToolError(Exception):
    """A usage or tool error: exit status 2, with what to do."""


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text from a tool or a module (binaryen's output, dlab's messages, export names) made safe for
    a terminal: control characters (an escape sequence's ESC, BEL, ...) as \\xHH."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def say(msg: str) -> None:
    print(printable(msg), flush=True)


def warn(msg: str) -> None:
    print(printable(msg), file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Engine configurations, from what dlab says.

@dataclass(frozen=True)
class Config:
    dispatch: str
    placement: str
    budget: str
    bounds: str
    ir: str
    lowering: str

    def args(self) -> list[str]:
        return ["--dispatch", self.dispatch, "--placement", self.placement, "--budget", self.budget,
                "--bounds", self.bounds, "--ir", self.ir, "--lowering", self.lowering]

    def label(self) -> str:
        return f"{self.dispatch}/{self.placement}/{self.budget}/{self.bounds}/{self.ir}/{self.lowering}"

    @staticmethod
    def parse(text: str) -> "Config":
        parts = text.split("/")
        if len(parts) != 6:
            raise ToolError(f"--config {text!r}: expected dispatch/placement/budget/bounds/ir/lowering, "
                            "e.g. tail/sp/none/check/stack/plain")
        return Config(*parts)


def _choices(help_text: str, option: str) -> tuple[list[str], str]:
    """An option's choices and default from CLI11's help: `--opt TEXT:{a,b}=a`."""
    m = re.search(re.escape(option) + r"(?:,[-\w]+)*\s+TEXT:\{([^}]*)\}(?:=(\S+))?", help_text)
    if not m:
        raise ToolError(f"`dlab wasm spec --help` does not list {option} with its choices: is this dlab current? "
                        "(`just build`)")
    return m.group(1).split(","), m.group(2) or ""


@dataclass
class Matrix:
    configs: list[Config]
    notes: list[str]


def engine_rows(dlab: str) -> list[tuple[str, str, str, str, str, str]]:
    """`dlab wasm engines`: (name, dispatch, placement, budget, bounds, status) per engines.def row."""
    out = _run([dlab, "wasm", "engines"], timeout=60)
    if out.returncode != 0:
        raise ToolError(f"`{dlab} wasm engines` failed: {out.stderr.strip()[:300]}")
    rows = []
    for line in out.stdout.splitlines()[1:]:
        parts = line.split(None, 5)
        if len(parts) == 6:
            rows.append(tuple(parts))
    if not rows:
        raise ToolError(f"`{dlab} wasm engines` listed no engine")
    return rows


def derive_matrix(dlab: str, smoke_dir: Path, lowerings: str = "singles", jobs: int = 1) -> Matrix:
    """Every engine configuration to compare: each built engines.def row (dispatch mode x placement
    x budget x bounds) in each IR with the plain lowering and the default one; and, on each row
    without a budget, every single technique too (`lowerings="all"`: on every row; "ends": plain and
    the default only). Combinations dlab refuses (a technique of the other IR) are left out, each
    with a line saying so; rows this build has not, too."""
    helped = _run([dlab, "wasm", "spec", "--help"], timeout=60)
    if helped.returncode != 0:
        raise ToolError(f"`{dlab} wasm spec --help` failed ({helped.returncode}): "
                        f"{(helped.stderr.strip() or '(no message)')[:300]}: is this dlab current? (`just build`)")
    help_text = helped.stdout
    lowering_choices, default_lowering = _choices(help_text, "--lowering")
    irs, _ = _choices(help_text, "--ir")
    singles = [c for c in lowering_choices if "+" not in c and c != "plain"]
    notes: list[str] = []
    rows = []
    left_out: dict[str, list[str]] = {}
    for name, dispatch, placement, budget, bounds, status in engine_rows(dlab):
        if status != "built":
            # "tail_vec is not built in this build: <why>": one line per reason, naming the rows.
            left_out.setdefault(status.split(": ", 1)[-1], []).append(name)
        else:
            rows.append((name, dispatch, placement, budget, bounds))
    for why, names in left_out.items():
        notes.append(f"skipped {len(names)} engine(s) this build left out ({', '.join(names)}): {why}")
    candidates: list[Config] = []
    for name, dispatch, placement, budget, bounds in rows:
        for ir in irs:
            wanted = ["plain", default_lowering]
            if lowerings == "all" or (lowerings == "singles" and budget == "none" and bounds == "check"):
                wanted += singles
            for lowering in dict.fromkeys(wanted):
                candidates.append(Config(dispatch, placement, budget, bounds, ir, lowering))
    # Ask dlab which combinations it runs: one trivial script per candidate.
    smoke_dir.mkdir(parents=True, exist_ok=True)
    (smoke_dir / "smoke.bin.wast").write_text('(module binary "\\00asm\\01\\00\\00\\00")\n')
    configs: list[Config] = []
    refused: dict[str, list[str]] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outs = list(pool.map(lambda c: _run([dlab, "wasm", "spec", "--suite", str(smoke_dir), *c.args()], timeout=60),
                             candidates))
    for c, out in zip(candidates, outs):
        if out.returncode == 0:
            configs.append(c)
        else:
            why = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
            why = re.sub(r"^dlab: error: ", "", why)
            refused.setdefault(why, []).append(c.label())
    for why, labels in refused.items():
        notes.append(f"skipped {len(labels)} configuration(s) dlab refuses ({why}): {', '.join(labels[:3])}"
                     + (" ..." if len(labels) > 3 else ""))
    if not configs:
        raise ToolError("dlab ran no engine configuration on an empty module: " + "; ".join(notes))
    return Matrix(configs, notes)


def check_configs(dlab: str, configs: list[Config], smoke_dir: Path) -> None:
    """A ToolError for a --config dlab refuses as a usage error (exit 2, its message), before any
    module: run, it would look like a crash. A configuration that crashes here is left to the run,
    where a crash is a finding."""
    smoke_dir.mkdir(parents=True, exist_ok=True)
    (smoke_dir / "smoke.bin.wast").write_text('(module binary "\\00asm\\01\\00\\00\\00")\n')
    for c in configs:
        out = _run([dlab, "wasm", "spec", "--suite", str(smoke_dir), *c.args()], timeout=60)
        if out.returncode == 2:
            why = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise ToolError(f"--config {c.label()}: dlab refuses it: {re.sub(r'^dlab: error: ', '', why)} "
                            "(`dlab wasm engines` lists this build's engines)")


# ---------------------------------------------------------------------------------------------
# Processes.

REAPPEAR_SECONDS = 180  # how long a program that went away mid-run (dlab being rebuilt) is waited for


# The programs running now (from every thread), so that an interrupt ends them at once: a worker
# thread waiting on a dlab run would otherwise hold the exit for up to DLAB_TIMEOUT.
_children: set[subprocess.Popen] = set()
_children_lock = threading.RLock()   # re-entrant: the SIGINT handler runs in the main thread, maybe holding it
_stopping = threading.Event()


def _stop_children() -> None:
    _stopping.set()
    with _children_lock:
        for p in list(_children):
            try:
                p.kill()
            except OSError:
                pass


def _run(cmd: list[str], timeout: float, **kw) -> subprocess.CompletedProcess:
    """A program's run, its output captured. A program that is missing, busy or half-written (a
    rebuild under way) is tried again every 5 s for REAPPEAR_SECONDS, then a ToolError. After an
    interrupt: KeyboardInterrupt, and no program started."""
    waited = 0
    while True:
        if _stopping.is_set():
            raise KeyboardInterrupt
        try:
            with _children_lock:
                if _stopping.is_set():
                    raise KeyboardInterrupt
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        errors="replace", **kw)
                _children.add(proc)
        except OSError as e:   # ENOENT, ETXTBSY, ENOEXEC, EACCES
            if waited >= REAPPEAR_SECONDS:
                raise ToolError(f"{cmd[0]}: {e.strerror} (waited {waited} s for it)")
            if waited == 0:
                warn(f"fuzz_differential: {cmd[0]}: {e.strerror}; waiting for it (a rebuild?)")
            if _stopping.wait(5):
                raise KeyboardInterrupt
            waited += 5
            continue
        try:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout} s")
            except BaseException:
                proc.kill()
                proc.wait()
                raise
        finally:
            with _children_lock:
                _children.discard(proc)
        if _stopping.is_set():
            raise KeyboardInterrupt
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def find_tools(dlab: str | None) -> tuple[str, str]:
    """dlab and wasm-opt, or a ToolError saying how to get each."""
    wasm_opt = shutil.which("wasm-opt")
    if not wasm_opt:
        raise ToolError("wasm-opt not found: run ./tools/bootstrap (it installs binaryen from npm)")
    dlab = dlab or os.environ.get("DLAB_BIN") or str(REPO / "build" / "release" / "dlab")
    # Absolute: the reproducer's commands run it from the reproducer's folder.
    dlab = os.path.abspath(dlab)
    if not Path(dlab).is_file():
        raise ToolError(f"dlab not found at {dlab}: run `just build` (or give --dlab PATH)")
    if not os.access(dlab, os.X_OK):
        raise ToolError(f"dlab at {dlab} is not executable: run `just build` (or give --dlab PATH)")
    version = _run([wasm_opt, "--version"], timeout=60)
    if version.returncode != 0:
        raise ToolError(f"`{wasm_opt} --version` failed: {version.stderr.strip()[:200]}: run ./tools/bootstrap")
    return dlab, wasm_opt


# ---------------------------------------------------------------------------------------------
# binaryen: the module and what its interpreter says.

def module_seed(seed: int, index: int) -> int:
    """Module `index` of a run seeded `seed`: its own seed, so one module is made again alone."""
    return random.Random(f"{seed}:{index}").getrandbits(63)


def is_relaxed(mseed: int) -> bool:
    return random.Random(mseed).randrange(RELAXED_ONE_IN) == 0


def features(relaxed: bool) -> list[str]:
    return FEATURES + (["--enable-relaxed-simd"] if relaxed else ["--disable-relaxed-simd"])


def make_module(wasm_opt: str, mseed: int, work: Path) -> tuple[Path | None, str]:
    """Random bytes of this seed -> `wasm-opt -ttf` -> work/m.wasm, and what binaryen's interpreter
    said running it (--fuzz-exec-before, in the same call: it runs before --emit-exnref translates
    legacy exception handling, so a disagreement with binaryen is confirmed on the module as
    written before it is reported). (None, why) when binaryen failed."""
    rng = random.Random(mseed)
    relaxed = is_relaxed(mseed)
    data = rng.randbytes(rng.randint(BYTES_MIN, BYTES_MAX))
    work.mkdir(parents=True, exist_ok=True)
    (work / "input.bin").write_bytes(data)
    wasm = work / "m.wasm"
    gen = _run([wasm_opt, str(work / "input.bin"), "-ttf", *features(relaxed), "--emit-exnref",
                "--fuzz-exec-before", "-q", "-o", str(wasm)], timeout=BINARYEN_TIMEOUT)
    if gen.returncode != 0 or not wasm.exists():
        return None, f"wasm-opt -ttf --fuzz-exec-before failed ({gen.returncode}): {gen.stderr.strip()[-200:]}"
    return wasm, gen.stdout


def fuzz_exec(wasm_opt: str, wasm: Path, relaxed: bool) -> tuple[str | None, str]:
    """binaryen's interpreter on the module: every export in order (its stdout), or (None, why)."""
    out = _run([wasm_opt, str(wasm), *features(relaxed), "--fuzz-exec-before", "-q"], timeout=BINARYEN_TIMEOUT)
    if out.returncode != 0:
        return None, f"wasm-opt --fuzz-exec-before failed ({out.returncode}): {(out.stderr or out.stdout).strip()[-200:]}"
    return out.stdout, ""


@dataclass
class Ran:
    """binaryen's account of one export."""
    name: str
    logs: list[str] = field(default_factory=list)
    outcome: tuple = ()       # ("return", [values]) | ("trap", text) | ("exception", text) | ()


def parse_fuzz_exec(text: str) -> list[Ran]:
    """What binaryen's interpreter did: first what the start function logged (a Ran named START),
    then the exports in the order it ran them, each with what it logged and how it ended (a
    function that returns nothing, or whose call hit one of binaryen's host limits, has no
    outcome)."""
    runs: list[Ran] = [Ran(fw.START)]
    in_result = False
    for line in text.splitlines():
        if line.startswith("[fuzz-exec] export "):
            runs.append(Ran(line[len("[fuzz-exec] export "):]))
            in_result = False
        elif line.startswith("[LoggingExternalInterface logging"):
            runs[-1].logs.append(line[len("[LoggingExternalInterface logging"):].strip().rstrip("]").strip())
            in_result = False
        elif line.startswith("[fuzz-exec] note result: "):
            value = line.split(" => ", 1)[1] if " => " in line else ""
            runs[-1].outcome = ("return", [value])
            in_result = True
        elif line.startswith("[trap "):
            runs[-1].outcome = ("trap", line[len("[trap "):].rstrip("]"))
            in_result = False
        elif line.startswith("[exception thrown"):
            runs[-1].outcome = ("exception", line.strip("[]"))
            in_result = False
        elif in_result and not line.startswith("["):
            runs[-1].outcome[1].append(line)
        else:
            in_result = False
    return runs


# ---------------------------------------------------------------------------------------------
# dlab: what each configuration gave for each command of the script.

FAILURE = re.compile(r"^\s+(\S+\.bin\.wast):(\d+): (.*)$")


def run_dlab(dlab: str, suite: Path, config: Config) -> dict[str, dict[int, str]]:
    """`dlab wasm spec --verbose` on every script of `suite` in one configuration: per script (its
    file name), per line, what dlab said. Every probe fails by design, so each says what its
    command gave; a line without a message ran no command (a module skipped, a script that did not
    load: its error is under line 0)."""
    out = _run([dlab, "wasm", "spec", "--suite", str(suite), "--verbose", *config.args()], timeout=DLAB_TIMEOUT)
    if out.returncode not in (0, 1):
        if suite.is_dir() and len(list(suite.glob("*.bin.wast"))) > 1:
            # A crash or a hang: each script alone, to find the one (a finding, at its line 0).
            said = {}
            for script in sorted(suite.glob("*.bin.wast")):
                alone = suite.parent / (suite.name + "-alone")
                shutil.rmtree(alone, ignore_errors=True)
                alone.mkdir()
                shutil.copy(script, alone / script.name)
                said.update(run_dlab(dlab, alone, config))
                shutil.rmtree(alone, ignore_errors=True)
            return said
        what = "hung (killed after {} s)".format(DLAB_TIMEOUT) if out.returncode == 124 else (
            f"crashed (signal {-out.returncode})" if out.returncode < 0 else f"exited {out.returncode}")
        return {script.name: {0: f"dlab {what}: {out.stderr.strip()[-300:]}"} for script in suite.glob("*.bin.wast")}
    said: dict[str, dict[int, str]] = {}
    for line in out.stdout.splitlines():
        m = FAILURE.match(line)
        if m:
            said.setdefault(Path(m.group(1)).name, {})[int(m.group(2))] = m.group(3)
    for line in (out.stdout + out.stderr).splitlines():
        for f in re.findall(r"(\S+\.bin\.wast)", line):
            if not FAILURE.match(line) and "error" in line.lower():
                said.setdefault(Path(f).name, {}).setdefault(0, line.strip())
    return said


VALUE = re.compile(r"(i32:\d+|i64:\d+|f32:0x[0-9a-f]+|f64:0x[0-9a-f]+|v128:0x[0-9a-f]+"
                   r"|ref\.extern \(ref\.(?:struct|array)\)|ref\.(?:i31|extern|host) \d+|ref\.\w+|ref)(?=\s|$)")


@dataclass
class Said:
    """One command's outcome in dlab."""
    kind: str                 # values, trap, exception, none (no message), other
    values: list[str] = field(default_factory=list)
    text: str = ""


def interpret(message: str | None) -> Said:
    if message is None:
        return Said("none")
    m = re.match(r"^.*: trapped \((.*)\) instead of returning$", message)
    if m:
        return Said("exception" if m.group(1) == "uncaught exception" else "trap", text=m.group(1))
    if "], got " in message:
        got = message.rsplit("], got ", 1)[1]
        return Said("values", VALUE.findall(got), got.strip())
    return Said("other", text=message)


# ---------------------------------------------------------------------------------------------
# Comparing with binaryen.

def float_bits(text: str, width: int) -> int | None:
    """binaryen's printed float as bits (None if it is not a float)."""
    t = text.strip()
    neg = t.startswith("-")
    body = t[1:] if neg or t.startswith("+") else t
    sign = 1 << (width - 1) if neg else 0
    exp = 0xFF << 23 if width == 32 else 0x7FF << 52
    mant = (1 << (23 if width == 32 else 52)) - 1
    if body.startswith("nan"):
        payload = int(body[6:], 16) if body.startswith("nan:0x") else (mant + 1) // 2
        return sign | exp | payload
    if body == "inf":
        return sign | exp
    try:
        value = float(t)
    except ValueError:
        return None
    if width == 32:
        try:
            return struct.unpack("<I", struct.pack("<f", value))[0]
        except OverflowError:
            return None
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def is_nan(bits: int, width: int) -> bool:
    exp = 0xFF << 23 if width == 32 else 0x7FF << 52
    mant = (1 << (23 if width == 32 else 52)) - 1
    return bits & exp == exp and bits & mant != 0


def quiet(bits: int, width: int) -> bool:
    return bool(bits & (1 << (22 if width == 32 else 51)))


def float_agrees(want: int, got: int, width: int) -> bool:
    """binaryen's bits `want`, dlab's `got`: equal; or, where binaryen has a quiet NaN, any quiet
    NaN (an arithmetic NaN's sign and payload are the implementation's choice; a NaN binaryen gives
    unquieted came through unchanged, from a constant, a load or a sign operation, so its bits are
    exact)."""
    if want == got:
        return True
    return is_nan(want, width) and quiet(want, width) and is_nan(got, width) and quiet(got, width)


def v128_agrees(want_lanes: list[int], got: int) -> bool:
    """Equal bits, or where they differ, NaNs in both as f32x4 or as f64x2 lanes (the lanes' shape
    is not known here)."""
    want = sum((lane & 0xFFFFFFFF) << (32 * i) for i, lane in enumerate(want_lanes))
    if want == got:
        return True
    for width in (32, 64):
        mask = (1 << width) - 1
        if all(float_agrees(want >> s & mask, got >> s & mask, width) for s in range(0, 128, width)):
            return True
    return False


def parse_v128(text: str) -> list[int] | None:
    parts = text.split()
    if len(parts) != 5 or parts[0] != "i32x4":
        return None
    return [int(p, 16) for p in parts[1:]]


def value_agrees(t: fw.ValType, want: str, got: str) -> bool:
    """One value: binaryen's printed `want` of type t against dlab's `got` ("i32:5", "ref.null")."""
    if t.kind in ("i32", "i64"):
        if not got.startswith(t.kind + ":"):
            return False
        try:
            w = int(want)
        except ValueError:
            return False
        mask = (1 << int(t.kind[1:])) - 1
        return w & mask == int(got[4:]) & mask
    if t.kind in ("f32", "f64"):
        width = int(t.kind[1:])
        bits = float_bits(want, width)
        return got.startswith(t.kind + ":") and bits is not None and float_agrees(bits, int(got[4:], 16), width)
    if t.kind == "v128":
        lanes = parse_v128(want)
        return got.startswith("v128:") and lanes is not None and v128_agrees(lanes, int(got[5:], 16))
    # A reference: null or not, and an i31's value (binaryen prints nothing else it keeps stable).
    if want == "null" or got == "ref.null":
        return want == "null" and got == "ref.null"
    m = re.match(r"i31ref\((-?\d+)\)$", want)
    if m:
        return got == f"ref.i31 {int(m.group(1)) & 0x7FFFFFFF}"
    return True


def log_agrees(want: str, got: list[str]) -> bool:
    """A log entry: binaryen's printed line against the support module's (kind, a, b)."""
    if len(got) != 3 or not all(g.startswith(("i32:", "i64:")) for g in got):
        return False
    kind, a, b = int(got[0][4:]), int(got[1][4:]), int(got[2][4:])
    if kind == fw.LOG_I32:
        return value_agrees(fw.ValType("i32", b""), want, f"i32:{a & 0xFFFFFFFF}")
    if kind == fw.LOG_I64:
        parts = want.split()
        if len(parts) != 2:
            return False
        return (int(parts[0]) & 0xFFFFFFFF) | (int(parts[1]) & 0xFFFFFFFF) << 32 == a
    if kind in (fw.LOG_F32, fw.LOG_F64):
        width = 32 if kind == fw.LOG_F32 else 64
        bits = float_bits(want, width)
        return bits is not None and float_agrees(bits, a, width)
    if kind == fw.LOG_V128:
        lanes = parse_v128(want)
        return lanes is not None and v128_agrees(lanes, a | b << 64)
    if kind == fw.LOG_NULL:
        return want == "null"
    if kind == fw.LOG_I31:
        m = re.match(r"i31ref\((-?\d+)\)$", want)
        return bool(m) and int(m.group(1)) == (a if a < 1 << 63 else a - (1 << 64))
    if kind == fw.LOG_HOST:
        return want == ("jserror" if a == fw.JSERROR else f"externref({a})")
    if kind == fw.LOG_OBJECT:
        return want.startswith("object(")
    if kind == fw.LOG_FUNCTION:
        return want == "function"
    return False


# Trap messages: binaryen's words and dlab's for the same trap, by kind (binaryen's as its
# interpreter words them: "i32.div_s by 0", "truncUFloat of nan", "final > memory: ..."). Two
# messages of known, different kinds disagree; a message of no kind is compared as a trap only.
TRAP_KINDS = {
    "unreachable": (("unreachable",), ("unreachable",)),
    "null": (("null",), ("null",)),
    "cast": (("cast error",), ("cast failure",)),
    "divide": ((" by 0",), ("divide by zero",)),
    "overflow": (("div_s overflow", "float overflow"), ("integer overflow",)),
    "conversion": (("of nan",), ("invalid conversion",)),
    "memory": (("> memory", "segment access in memory"), ("out of bounds memory access",)),
}


def trap_kind(text: str, side: int) -> str | None:
    low = text.lower()
    for kind, words in TRAP_KINDS.items():
        if any(w in low for w in words[side]):
            return kind
    return None


# ---------------------------------------------------------------------------------------------
# One module, and the comparisons.

@dataclass
class Case:
    index: int
    mseed: int
    relaxed: bool
    work: Path
    wasm: Path | None = None
    module: fw.Module | None = None
    runs: list[Ran] = field(default_factory=lambda: [Ran(fw.START)])
    binaryen: str = ""
    script: fw.Script | None = None
    skipped: str = ""         # why this module was not compared (binaryen failed, an import the host has not)

    @property
    def name(self) -> str:
        return f"m{self.index:06d}.bin.wast"


@dataclass
class Finding:
    """A disagreement: at a script line, between configurations or with binaryen."""
    case: Case
    kind: str                 # configs, binaryen, harness
    line: int
    detail: str
    configs: list[Config] = field(default_factory=list)   # the bad one first, then the one it differs from


def log_counts(m: fw.Module, runs: list[Ran]) -> list[int]:
    """After each export (by position), how many entries binaryen has logged in all (the start
    function's first)."""
    by_pos = aligned_runs(m, runs)
    counts, total = [], len(runs[0].logs)
    for pos, ex in enumerate(m.exports):
        r = by_pos.get(pos)
        if r is not None and ex.kind == 0:
            total += len(r.logs)
        counts.append(total)
    return counts


def aligned_runs(m: fw.Module, runs: list[Ran]) -> dict[int, Ran]:
    """binaryen's runs by export position (it runs the function and global exports in order; runs[0]
    is the start function's logging)."""
    positions = [pos for pos, ex in enumerate(m.exports) if ex.kind in (0, 3)]
    out = {}
    for pos, r in zip(positions, runs[1:]):
        if m.exports[pos].name != r.name:
            break
        out[pos] = r
    return out


def prepare(case: Case, wasm_opt: str) -> Case:
    """The module, binaryen's run of it and the probe script (or case.skipped, saying why not)."""
    wasm, text = make_module(wasm_opt, case.mseed, case.work)
    if wasm is None:
        case.skipped = text
        return case
    return prepare_wasm(case, wasm_opt, wasm, text)


def prepare_wasm(case: Case, wasm_opt: str | None, wasm: Path, text: str | None = None) -> Case:
    """The case of a module file: binaryen's run of it (`text`, or a run of wasm-opt; none without
    wasm_opt) and its probe script."""
    case.wasm = wasm
    data = wasm.read_bytes()
    try:
        case.module = fw.read_module(data)
    except fw.WasmFormatError as e:
        case.skipped = f"unreadable module: {e}"
        return case
    if wasm_opt:
        if text is None:
            text, why = fuzz_exec(wasm_opt, wasm, case.relaxed)
            if text is None:
                case.skipped = why
                return case
        case.binaryen = text
        case.runs = parse_fuzz_exec(text)
        (case.work / "binaryen.txt").write_text(text)
    try:
        case.script = fw.write_script(data, case.module, log_counts(case.module, case.runs) if wasm_opt else None,
                                      len(case.runs[0].logs) if wasm_opt else 0, comments=[f"module seed {case.mseed}" + (" (relaxed SIMD)" if case.relaxed else "")])
    except fw.Unsupported as e:
        case.skipped = f"not hosted: {e}"
    return case


def ordered_lines(case: Case) -> list[int]:
    """Line 0 (the script's own error, a crash) first, then the modules' and the probes' lines."""
    s = case.script
    return [0] + sorted(list(s.module_lines.values()) + [st.line for st in s.steps])


def brief(message: str | None) -> str:
    """What a probe's message says the command gave, without the impossible expectation."""
    if message is None:
        return "(no outcome: the command did not run)"
    m = re.match(r"^(.*?): expected \[.*\], got (.*)$", message)
    return f"{m.group(1)}: got {m.group(2).strip() or 'nothing'}" if m else message


def limited(message: str | None) -> bool:
    return message is not None and any(w in message for w in RESOURCE_LIMITS)


def compare_configs(case: Case, said: dict[Config, dict[int, str]], configs: list[Config]) -> Finding | str | None:
    """The first script line where a configuration's outcome differs from the first one's (bit for
    bit), a note (str) when a resource ran out first, or None."""
    ref = configs[0]
    for line in ordered_lines(case):
        want = said[ref].get(line)
        for c in configs[1:]:
            got = said[c].get(line)
            if got != want:
                if limited(got) or limited(want):
                    return f"resource limit at line {line}"
                return Finding(case, "configs", line, f"{c.label()}: {brief(got)}\n{ref.label()}: {brief(want)}", [c, ref])
        if limited(want):
            return f"resource limit at line {line}"
    return None


def compare_binaryen(case: Case, said: dict[int, str], config: Config) -> tuple[Finding | None, str, int]:
    """dlab's outcomes in `config` against binaryen's: (the first disagreement, a note on where the
    comparison stopped if it stopped early, calls compared)."""
    m, s = case.module, case.script
    by_pos = aligned_runs(m, case.runs)

    def finding(line: int, detail: str, kind: str = "binaryen") -> tuple[Finding, str, int]:
        return Finding(case, kind, line, detail, [config]), "", calls

    calls = 0
    main_msg = said.get(s.module_lines["main"])
    # The support module always instantiates; the linker does once the module has.
    for part in ("support", "linker"):
        msg = said.get(s.module_lines[part])
        if msg is not None and (part == "support" or main_msg is None):
            return finding(s.module_lines[part], f"the {part} module: {msg}", "harness")
    ran_any = len(case.runs) > 1
    has_runnable = any(ex.kind in (0, 3) for ex in m.exports)
    if main_msg is not None:
        if limited(main_msg):
            return None, "dlab ran out of a resource instantiating the module", calls
        if has_runnable and ran_any:
            return finding(s.module_lines["main"], f"binaryen instantiated the module and ran its exports; dlab: {main_msg}")
        return None, "", calls
    if has_runnable and not ran_any:
        return finding(s.module_lines["main"], "binaryen ran no export (its instantiation trapped or hit a host limit); "
                       "dlab instantiated the module")
    logs = case.runs[0].logs + [log for pos, r in sorted(by_pos.items()) if m.exports[pos].kind == 0 for log in r.logs]
    expected_count = log_counts(m, case.runs)
    for st in s.steps:
        pos = next((i for i, ex in enumerate(m.exports) if ex.name == st.export), -1)
        run = case.runs[0] if st.export == fw.START else by_pos.get(pos)
        got = interpret(said.get(st.line))
        if run is None:
            return None, f"binaryen did not run {st.export}", calls
        if got.kind in ("trap", "other") and limited(got.text):
            return None, f"dlab ran out of a resource at line {st.line}", calls
        if st.kind == "global":
            t = m.globals[m.exports[pos].index]
            if not run.logs or got.kind != "values" or len(got.values) != 1 or not value_agrees(t, run.logs[0], got.values[0]):
                return finding(st.line, f"global {st.export}: binaryen {run.logs[:1]}, dlab {got.text or got.kind}")
        elif st.kind == "call":
            if st.skipped:
                continue
            calls += 1
            out = run.outcome
            if not out:
                if st.results:
                    return None, f"binaryen hit a host limit in {st.export}", calls
                if not (got.kind == "values" and not got.values):
                    return finding(st.line, f"{st.export}: binaryen returned, dlab {got.kind} {got.text}")
            elif out[0] == "return":
                vals = out[1]
                if got.kind != "values" or len(got.values) != len(vals) or not all(
                        value_agrees(t, w, g) for t, w, g in zip(st.result_types, vals, got.values)):
                    return finding(st.line, f"{st.export}: binaryen returned {vals}, dlab {got.kind} {got.text}")
            elif out[0] == "trap":
                if got.kind != "trap":
                    return finding(st.line, f"{st.export}: binaryen trapped ({out[1]}), dlab {got.kind} {got.text}")
                kb, kd = trap_kind(out[1], 0), trap_kind(got.text, 1)
                if kb and kd and kb != kd:
                    return finding(st.line, f"{st.export}: binaryen trapped ({out[1]}), dlab trapped ({got.text})")
            elif out[0] == "exception":
                if got.kind != "exception":
                    return finding(st.line, f"{st.export}: binaryen: {out[1]}; dlab {got.kind} {got.text}")
        elif st.kind == "count":
            logged = len(case.runs[0].logs) if st.export == fw.START else expected_count[pos]
            if got.kind != "values" or got.values != [f"i32:{logged}"]:
                return finding(st.line, f"after {st.export}: binaryen logged {logged} in all, dlab {got.text}")
        elif st.kind == "entry":
            if st.entry >= len(logs) or got.kind != "values" or not log_agrees(logs[st.entry], got.values):
                want = logs[st.entry] if st.entry < len(logs) else "nothing"
                return finding(st.line, f"log entry {st.entry} (in {st.export}): binaryen {want!r}, dlab {got.text}")
    return None, "", calls


# ---------------------------------------------------------------------------------------------
# Running batches.

def run_configs(dlab: str, suite: Path, configs: list[Config], jobs: int) -> dict[Config, dict[str, dict[int, str]]]:
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda c: run_dlab(dlab, suite, c), configs))
    return dict(zip(configs, results))


def dlab_log_counts(case: Case, said: dict[int, str]) -> tuple[list[int], int]:
    """After each export, and after the start function, the log's length as dlab gave it (for a
    script written without binaryen's counts)."""
    counts, last = [], 0
    by_export = {st.export: st for st in case.script.steps if st.kind == "count"}

    def count(name: str) -> int:
        got = interpret(said.get(by_export[name].line)) if name in by_export else Said("none")
        if got.kind == "values" and got.values and got.values[0].startswith("i32:"):
            return int(got.values[0][4:])
        return last
    start = last = count(fw.START)
    for ex in case.module.exports:
        last = count(ex.name)
        counts.append(last)
    return counts, start


@dataclass
class Verdict:
    findings: list[Finding]
    notes: list[str]
    calls: int = 0
    entries: int = 0


def judge(cases: list[Case], said: dict[Config, dict[str, dict[int, str]]], configs: list[Config],
          with_binaryen: bool = True) -> Verdict:
    v = Verdict([], [])
    for case in cases:
        if case.skipped or case.script is None:
            continue
        per = {c: said[c].get(case.name, {}) for c in configs}
        crashed = next((c for c in configs if per[c].get(0, "").startswith("dlab ")), None)
        if crashed is not None:
            v.findings.append(Finding(case, "crash", 0, f"{crashed.label()}: {per[crashed][0]}", [crashed]))
            continue
        found = compare_configs(case, per, configs)
        if isinstance(found, Finding):
            v.findings.append(found)
            continue
        if isinstance(found, str):
            v.notes.append(f"{case.name}: {found}")
        v.entries += sum(1 for st in case.script.steps if st.kind == "entry")
        if with_binaryen and not case.relaxed:
            finding, note, calls = compare_binaryen(case, per[configs[0]], configs[0])
            v.calls += calls
            if finding:
                v.findings.append(finding)
            elif note:
                v.notes.append(f"{case.name}: {note}")
        else:
            v.calls += sum(1 for st in case.script.steps if st.kind == "call" and not st.skipped)
    return v


def write_suite(cases: list[Case], suite: Path) -> None:
    if suite.exists():
        shutil.rmtree(suite)
    suite.mkdir(parents=True)
    for case in cases:
        if not case.skipped and case.script is not None:
            (suite / case.name).write_text(case.script.text)


# ---------------------------------------------------------------------------------------------
# A disagreement: the reproducer, and its reduction.

def self_command() -> list[str]:
    return [sys.executable, str(Path(__file__).resolve())]


def check_command(wasm: str, finding: Finding, dlab: str, relaxed: bool) -> list[str]:
    cmd = self_command() + ["check", wasm, "--dlab", dlab]
    for c in finding.configs:
        cmd += ["--config", c.label()]
    if finding.kind in ("binaryen", "harness"):
        cmd.append("--binaryen")
    if relaxed:
        cmd.append("--relaxed")
    return cmd


def shell(cmd: list[str]) -> str:
    return " ".join(a if re.fullmatch(r"[\w@%+=:,./-]+", a) else "'" + a.replace("'", "'\\''") + "'" for a in cmd)


def write_reproducer(finding: Finding, out: Path, dlab: str, seed: int, wasm_opt: str, reduce_seconds: float) -> Path:
    case = finding.case
    folder = out / f"{seed}-{case.index}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copy(case.wasm, folder / "module.wasm")
    if (case.work / "input.bin").exists():
        shutil.copy(case.work / "input.bin", folder / "input.bin")
    if case.binaryen:
        (folder / "binaryen.txt").write_text(case.binaryen)
    suite = folder / "script"
    suite.mkdir()
    (suite / "module.bin.wast").write_text(case.script.text)
    check = check_command("module.wasm", finding, dlab, case.relaxed)
    lines = [f"disagreement ({finding.kind}) at script line {finding.line} of script/module.bin.wast:",
             finding.detail, "",
             f"module {case.index} of seed {seed} (module seed {case.mseed}{', relaxed SIMD' if case.relaxed else ''})",
             "", "reproduce the whole finding (binaryen again, every configuration):",
             "  " + shell(self_command() + ["--seed", str(seed), "--only", str(case.index), "--dlab", dlab, "--reduce-seconds", "0"]),
             "check this module alone (prints DISAGREE, exit 1, while it disagrees):",
             f"  (cd {shell([str(folder.resolve())])} && {shell(check)})",
             "what each configuration gives (every probe fails on purpose and prints its outcome):"]
    for c in finding.configs:
        lines.append("  " + shell([dlab, "wasm", "spec", "--verbose", "--suite", str(suite), *c.args()]))
    if reduce_seconds > 0:
        before = case.wasm.stat().st_size
        reduced = reduce(finding, folder, dlab, wasm_opt, reduce_seconds)
        if reduced:
            lines += ["", f"reduced ({before} -> {reduced.stat().st_size} bytes, in at most {reduce_seconds:g} s): {reduced}",
                      "  (cd " + shell([str(folder.resolve())]) + " && " + shell(check_command(reduced.name, finding, dlab, case.relaxed)) + ")",
                      f"  its probe script (no log entries read back): {folder / 'reduced.bin.wast'}"]
        else:
            lines += ["", f"not reduced: no smaller module disagreed the same way within {reduce_seconds:g} s"]
    (folder / "README.txt").write_text("\n".join(lines) + "\n")
    return folder


def nan_dependent(finding: Finding, out: Path, seed: int, dlab: str, wasm_opt: str) -> Path | None:
    """A disagreement (between configurations, compared bit for bit, or with binaryen) that is gone
    once binaryen's --denan pass has turned every NaN into 0: an arithmetic NaN's sign and payload
    are the implementation's choice (which of two NaN operands an x86 instruction passes on depends
    on their order), seen as a result or reaching an integer (a reinterpretation, a store). Kept,
    not reported, in out/nan-dependent/<seed>-<module>/ (the folder), or None when it does not go
    away (--strict-nan: never asked)."""
    case = finding.case
    with tempfile.TemporaryDirectory(prefix="fuzzdiff-denan-") as tmp:
        denan = Path(tmp) / "denan.wasm"
        made = _run([wasm_opt, str(case.wasm), *features(case.relaxed), "--denan", "-o", str(denan)], timeout=BINARYEN_TIMEOUT)
        if made.returncode != 0 or not denan.exists():
            return None
        verdict = check_module(denan, finding.configs, dlab, wasm_opt if finding.kind == "binaryen" else None, case.relaxed)
        if isinstance(verdict, str) or verdict.findings:
            return None
        folder = out / "nan-dependent" / f"{seed}-{case.index}"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        shutil.copy(case.wasm, folder / "module.wasm")
        shutil.copy(denan, folder / "denan.wasm")
    (folder / "binaryen.txt").write_text(case.binaryen)
    (folder / "module.bin.wast").write_text(case.script.text)
    (folder / "README.txt").write_text(
        f"module {case.index} of seed {seed}: disagreement ({finding.kind}) at line {finding.line} of "
        f"module.bin.wast:\n{finding.detail}\n\nbut none on denan.wasm (wasm-opt --denan: every NaN a float "
        "operation makes becomes 0), so the difference is a NaN's sign or payload, which the spec leaves to the "
        "implementation for arithmetic NaNs.\nCheck it: "
        + f"(cd {shell([str(folder.resolve())])} && {shell(check_command('module.wasm', finding, dlab, case.relaxed))})\n")
    return folder


# binaryen passes the reducer tries, each kept when the module gets smaller and still disagrees
# (semantics-preserving rewrites: what they remove was not needed for the disagreement).
REDUCE_PASSES = [["--remove-unused-module-elements"], ["--dce", "--vacuum"], ["--inlining-optimizing"],
                 ["--simplify-locals"], ["--remove-unused-brs"], ["--merge-blocks"], ["--precompute"],
                 ["--coalesce-locals"], ["--dae-optimizing"], ["--simplify-globals-optimizing"],
                 ["--remove-unused-types"], ["-O1"], ["-O2"], ["-Os"], ["-Oz"]]


def reduce(finding: Finding, folder: Path, dlab: str, wasm_opt: str, seconds: float) -> Path | None:
    """The module made smaller while it still disagrees the same way (the same kind, between the
    same configurations, or with binaryen), for at most `seconds`: exports after the one that
    disagrees dropped, then each earlier one where it can go, then binaryen's passes, each step kept
    while the module shrinks and still disagrees (binaryen 132's wasm-reduce from npm cannot run a
    command: its JavaScript build has no processes). reduced.wasm and reduced.bin.wast (its probe
    script), or None when nothing could go."""
    case = finding.case
    deadline = time.monotonic() + seconds
    binaryen = wasm_opt if finding.kind in ("binaryen", "harness") else None
    current = case.wasm.read_bytes()
    work = folder / "reduce-try.wasm"

    def disagrees(data: bytes) -> bool:
        work.write_bytes(data)
        verdict = check_module(work, finding.configs, dlab, binaryen, case.relaxed)
        return not isinstance(verdict, str) and any(f.kind == finding.kind for f in verdict.findings)

    def smaller(candidate: bytes) -> bool:
        nonlocal current
        if time.monotonic() >= deadline or len(candidate) >= len(current) and candidate != current:
            return False
        if candidate != current and disagrees(candidate):
            current = candidate
            return True
        return False

    tried = 0
    step = next((st for st in case.script.steps if st.line == finding.line), None)
    names = [ex.name for ex in case.module.exports]
    if finding.kind != "harness" and (step is None or step.export == fw.START or step.export in names):
        # The exports up to the one that disagrees (none when instantiation or the start function did).
        upto = names.index(step.export) if step is not None and step.export in names else -1
        keep = names[:upto + 1]
        if smaller(fw.keep_exports(current, set(keep))):
            names = keep
        for name in reversed(names[:-1] if upto >= 0 else []):
            if time.monotonic() >= deadline:
                break
            trial = [n for n in names if n != name]
            tried += 1
            if smaller(fw.keep_exports(current, set(trial))):
                names = trial
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for passes in REDUCE_PASSES:
            if time.monotonic() >= deadline:
                break
            work.write_bytes(current)
            out = folder / "reduce-pass.wasm"
            made = _run([wasm_opt, str(work), *features(case.relaxed), *passes, "-o", str(out)], timeout=BINARYEN_TIMEOUT)
            tried += 1
            if made.returncode == 0 and out.exists() and len(out.read_bytes()) < len(current):
                if smaller(out.read_bytes()):
                    progress = True
    for f in (work, folder / "reduce-pass.wasm"):
        f.unlink(missing_ok=True)
    if current == case.wasm.read_bytes():
        return None
    reduced = folder / "reduced.wasm"
    reduced.write_bytes(current)
    try:
        m = fw.read_module(current)
        (folder / "reduced.bin.wast").write_text(fw.write_script(current, m).text)
    except (fw.WasmFormatError, fw.Unsupported):
        pass
    return reduced


# ---------------------------------------------------------------------------------------------
# The commands.

@dataclass
class Stats:
    modules: int = 0
    compared: int = 0
    calls: int = 0
    entries: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    stopped_early: int = 0
    translation: int = 0      # binaryen's -ttf run and its run of the written module differed
    nan_dependent: int = 0    # disagreements with binaryen that --denan makes go away
    batches: int = 0


def progress(stats: Stats, configs: int, start: float, final: bool = False) -> str:
    el = time.monotonic() - start
    skipped = sum(stats.skipped.values())
    return (f"[{int(el) // 60:02d}:{int(el) % 60:02d}] {'done: ' if final else ''}batches {stats.batches}, modules {stats.modules} "
            f"(compared {stats.compared}, not compared {skipped}), calls compared {stats.calls}, "
            f"log entries {stats.entries}, configurations {configs}")


def campaign(args) -> int:
    dlab, wasm_opt = find_tools(args.dlab)
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    out = Path(args.out)
    scratch = out / f"run-{seed}"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    again = self_command() + ["--seed", str(seed)]
    again += ["--seconds", f"{args.seconds:g}"] if args.seconds else []
    again += ["--modules", str(args.modules)] if args.modules else []
    again += ["--only", str(args.only)] if args.only is not None else []
    again += ["--lowerings", args.lowerings] if args.lowerings != "singles" else []
    for c in args.config or []:
        again += ["--config", c]
    say(f"fuzz-differential: seed {seed} (again: {shell(again)}"
        + ("; one module of it: --only N)" if args.only is None else ")"))
    if args.config:
        configs = [Config.parse(c) for c in args.config]
        check_configs(dlab, configs, scratch / "smoke")
    else:
        matrix = derive_matrix(dlab, scratch / "smoke", args.lowerings, args.jobs)
        for note in matrix.notes:
            say(f"  {note}")
        configs = matrix.configs
    say(f"  {len(configs)} engine configurations (the reference: {configs[0].label()}); binaryen: "
        f"{_run([wasm_opt, '--version'], timeout=60).stdout.strip()}")
    start = time.monotonic()
    stats = Stats()
    indices = [args.only] if args.only is not None else None
    next_index = 0
    last_report = 0.0
    while True:
        if indices is not None:
            if not indices:
                break
            batch_idx, indices = indices, []
        else:
            if args.modules and next_index >= args.modules:
                break
            if args.seconds and time.monotonic() - start >= args.seconds:
                break
            n = args.batch if not args.modules else min(args.batch, args.modules - next_index)
            batch_idx = list(range(next_index, next_index + n))
            next_index += n
        cases = []
        for i in batch_idx:
            ms = module_seed(seed, i)
            cases.append(Case(i, ms, is_relaxed(ms), scratch / f"m{i:06d}"))
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            cases = list(pool.map(lambda c: prepare(c, wasm_opt), cases))
        suite = scratch / "suite"
        write_suite(cases, suite)
        said = run_configs(dlab, suite, configs, args.jobs)
        verdict = judge(cases, said, configs)
        stats.modules += len(cases)
        stats.batches += 1
        for case in cases:
            if case.skipped:
                reason = re.sub(r"\d+", "N", case.skipped)[:90]
                stats.skipped[reason] = stats.skipped.get(reason, 0) + 1
            else:
                stats.compared += 1
        stats.calls += verdict.calls
        stats.entries += verdict.entries
        stats.stopped_early += len(verdict.notes)
        if args.verbose:
            for note in verdict.notes:
                say(f"  note: {note}")
        findings = []
        for finding in verdict.findings:
            if finding.kind == "binaryen":
                # Seen in the -ttf call's own run (before --emit-exnref): binaryen again on the
                # module as written.
                again = check_module(finding.case.wasm, finding.configs, dlab, wasm_opt, finding.case.relaxed)
                if isinstance(again, str) or not again.findings:
                    stats.translation += 1
                    say(f"  module {finding.case.index}: binaryen's run of the module as written agrees with dlab "
                        f"(its -ttf run did not: {finding.detail.splitlines()[0][:120]}); not a dlab disagreement")
                    continue
            if finding.kind in ("binaryen", "configs") and not args.strict_nan:
                kept = nan_dependent(finding, out, seed, dlab, wasm_opt)
                if kept:
                    stats.nan_dependent += 1
                    say(f"  module {finding.case.index}: {'the configurations differ' if finding.kind == 'configs' else 'dlab and binaryen differ'} "
                        f"only while NaNs are left in (wasm-opt --denan makes them agree): a NaN's sign and payload, "
                        f"which the spec leaves free; set aside in {kept}")
                    continue
            findings.append(finding)
        if findings:
            finding = findings[0]
            say(progress(stats, len(configs), start))
            say(f"DISAGREEMENT ({finding.kind}) in module {finding.case.index} of seed {seed}, script line {finding.line}:")
            for line in finding.detail.splitlines():
                say(f"  {line}")
            if args.reduce_seconds > 0:
                say(f"  reducing it (at most {args.reduce_seconds:g} s) ...")
            folder = write_reproducer(finding, out, dlab, seed, wasm_opt, args.reduce_seconds)
            say(f"reproducer: {folder}/README.txt")
            return 1
        now = time.monotonic()
        if now - last_report >= args.progress_every or indices == []:
            say(progress(stats, len(configs), start))
            last_report = now
        for case in cases:
            if case.work.exists():
                shutil.rmtree(case.work)
    say(progress(stats, len(configs), start, final=True))
    if stats.skipped:
        say("  not compared: " + "; ".join(f"{n} x {why}" for why, n in sorted(stats.skipped.items(), key=lambda kv: -kv[1])))
    if stats.nan_dependent or stats.translation:
        say(f"  set aside: {stats.nan_dependent} that differ in a NaN's bits only (kept in {out / 'nan-dependent'}), "
            f"{stats.translation} where only binaryen's -ttf run differed")
    if stats.stopped_early:
        say(f"  {stats.stopped_early} module(s) compared up to a resource limit or a binaryen host limit only")
    if stats.modules and not stats.compared:
        raise ToolError(f"no module was compared ({stats.modules} made, none run in dlab: "
                        + "; ".join(stats.skipped) + "): is wasm-opt binaryen 132? (./tools/bootstrap)")
    say("no disagreement")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def check_module(wasm_file: Path, configs: list[Config], dlab: str, wasm_opt: str | None, relaxed: bool) -> Verdict | str:
    """One module file in these configurations, and with binaryen's run of it when wasm_opt is
    given: the verdict, or why it was not compared."""
    with tempfile.TemporaryDirectory(prefix="fuzzdiff-check-") as tmp:
        work = Path(tmp)
        wasm = work / "m.wasm"
        shutil.copy(wasm_file, wasm)
        case = prepare_wasm(Case(0, 0, relaxed, work), wasm_opt, wasm)
        if case.skipped:
            return case.skipped
        suite = work / "suite"
        if not wasm_opt:
            # The log's entries: as many as the first configuration logged (a first run says).
            write_suite([case], suite)
            first = run_dlab(dlab, suite, configs[0]).get(case.name, {})
            counts, start = dlab_log_counts(case, first)
            case.script = fw.write_script(wasm.read_bytes(), case.module, counts, start)
        write_suite([case], suite)
        said = run_configs(dlab, suite, configs, 1)
        return judge([case], said, configs, with_binaryen=wasm_opt is not None)


def check(args) -> int:
    """One module (wasm-reduce's test): prints DISAGREE (exit 1), AGREE (exit 0) or NOT COMPARED
    (exit 3), nothing else on stdout."""
    dlab, wasm_opt = find_tools(args.dlab)
    configs = [Config.parse(c) for c in args.config]
    if not configs:
        raise ToolError("check: give at least one --config")
    if not Path(args.wasm).is_file():
        raise ToolError(f"check: no module {args.wasm}")
    verdict = check_module(Path(args.wasm), configs, dlab, wasm_opt if args.binaryen else None, args.relaxed)
    if isinstance(verdict, str):
        if args.verbose:
            warn(verdict)
        print("NOT COMPARED")
        return 3
    if args.verbose:
        for f in verdict.findings:
            warn(f"{f.kind} at line {f.line}: {f.detail}")
    print("DISAGREE" if verdict.findings else "AGREE")
    return 1 if verdict.findings else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "check":
        p = argparse.ArgumentParser(prog="fuzz_differential.py check", description=check.__doc__)
        p.add_argument("wasm")
        p.add_argument("--config", action="append", default=[], help="dispatch/placement/budget/bounds/ir/lowering")
        p.add_argument("--binaryen", action="store_true", help="compare the first configuration with binaryen too")
        p.add_argument("--relaxed", action="store_true", help="the module uses relaxed SIMD (binaryen's features)")
        p.add_argument("--dlab")
        p.add_argument("--verbose", action="store_true")
        args = p.parse_args(argv[1:])
        run = check
    else:
        p = argparse.ArgumentParser(prog="fuzz_differential.py", description=__doc__.split("\n\n")[0],
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--seconds", type=float, default=0, help="stop starting modules after this long (0: no limit)")
        p.add_argument("--modules", type=int, default=0, help="stop after this many modules (0: no limit)")
        p.add_argument("--seed", type=int, help="the run's seed (default: a random one, printed)")
        p.add_argument("--only", type=int, help="run only module ONLY of the seed (a finding's reproduction)")
        p.add_argument("--batch", type=int, default=8, help="modules per dlab run (default 8)")
        p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes at once (default: the cores)")
        p.add_argument("--lowerings", choices=("ends", "singles", "all"), default="singles",
                       help="ends: plain and the default lowering on every engine; singles (default): also each "
                            "single technique on the engines without a budget or guard pages; all: on every engine")
        p.add_argument("--config", action="append", help="only this configuration (repeatable; the first is the reference)")
        p.add_argument("--out", default=str(REPO / "build" / "fuzz-differential"), help="where reproducers go")
        p.add_argument("--reduce-seconds", type=float, default=120, help="wasm-reduce's time on a finding (0: none)")
        p.add_argument("--progress-every", type=float, default=10, help="seconds between progress lines")
        p.add_argument("--dlab", help="the dlab binary (default: $DLAB_BIN, else build/release/dlab)")
        p.add_argument("--keep", action="store_true", help="keep the scratch folder (the last batch's scripts)")
        p.add_argument("--strict-nan", action="store_true",
                       help="report a difference that --denan makes go away (a NaN's bits) as a disagreement too")
        p.add_argument("--verbose", action="store_true", help="say where each module's comparison stopped early")
        args = p.parse_args(argv)
        for name in ("seconds", "reduce_seconds", "progress_every"):
            value = getattr(args, name)
            if not math.isfinite(value) or value < 0:
                p.error(f"--{name.replace('_', '-')} {value:g}: give a number of seconds, 0 or more")
        if args.modules < 0:
            p.error(f"--modules {args.modules}: give 0 (no limit) or more")
        if args.batch < 1 or args.jobs < 1:
            p.error(f"--batch {args.batch} --jobs {args.jobs}: each must be 1 or more")
        if not args.seconds and not args.modules and args.only is None:
            p.error("give --seconds, --modules or --only (a campaign needs an end)")
        run = campaign
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        # An interrupt ends the programs running now first, so that no worker thread holds the exit
        # (a SIGINT to this process alone reaches none of them).
        def interrupted(signum, frame):
            _stop_children()
            raise KeyboardInterrupt
        signal.signal(signal.SIGINT, interrupted)
    try:
        return run(args)
    except ToolError as e:
        warn(f"fuzz_differential: error: {e}")
        return 2
    except OSError as e:   # --out not writable, a full disk
        warn(f"fuzz_differential: error: {e.filename or ''}: {e.strerror or e} (check --out and the disk)")
        return 2
    except KeyboardInterrupt:
        _stop_children()
        warn("fuzz_differential: interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
