"""The official WASI test suite's preview-1 tests (WebAssembly/wasi-testsuite, in
../shared/wasi-testsuite), run by an executor written from its doc/specification.md: every test
module with its .json specification (args, env, root, then the expected exit code, stdout and
stderr), on a copy of its folder (the shared one is read-only, and tests write), with the `*.cleanup`
artifacts removed first, in dlab's default engine and in one stack-IR engine.

A test that does not pass yet is listed in EXPECTED_FAILURES with why; the list must shrink to
none (a listed test that passes fails here, so it is taken off the list)."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SUITE = Path(os.environ.get("DLAB_WASI_TESTSUITE", REPO.parent / "shared" / "wasi-testsuite"))
LANGUAGES = ("c", "rust", "assemblyscript")

# The engines: `dlab wasm run`'s default (tail_pn, register IR, guard pages) and a stack-IR one.
ENGINES = {"default": [], "tail-stack": ["--dispatch", "tail", "--ir", "stack"]}

# test (language/name) -> why it does not pass yet. One place; it must shrink to none.
EXPECTED_FAILURES: dict[str, str] = {}


def suite_tests():
    if not SUITE.is_dir():
        return []
    found = []
    for lang in LANGUAGES:
        folder = SUITE / "tests" / lang / "testsuite" / "wasm32-wasip1"
        found += [f"{lang}/{w.stem}" for w in sorted(folder.glob("*.wasm"))]
    return found


def specification(wasm: Path) -> dict:
    """The test's operations, from its .json (legacy or operation-based) or the default."""
    spec_file = wasm.with_suffix(".json")
    spec = json.loads(spec_file.read_text()) if spec_file.exists() else {}
    if "operations" in spec:
        ops = spec["operations"]
    else:  # the legacy form, converted as the suite's own runner does (test_case.py): an output is
        # checked only where the specification names it
        ops = [{"type": "run", "args": spec.get("args", []), "env": spec.get("env", {}), "root": spec.get("root")}]
        ops += [{"type": "read", "id": s, "payload": spec[s]} for s in ("stdout", "stderr") if spec.get(s) is not None]
        ops.append({"type": "wait", "exit_code": spec.get("exit_code", 0)})
    proposals = spec.get("proposals", [])
    return {"operations": ops, "proposals": proposals}


def copy_of_test_folder(wasm: Path, tmp: Path) -> Path:
    """The test's folder copied (writable), its *.cleanup artifacts removed as the specification says."""
    dst = tmp / wasm.parent.name
    shutil.copytree(wasm.parent, dst, ignore=shutil.ignore_patterns("*.wasm"), symlinks=True)
    for p in dst.rglob("*"):
        if not p.is_symlink():
            p.chmod(0o755 if p.is_dir() else 0o644)
    for junk in dst.rglob("*.cleanup"):
        if junk.is_dir() and not junk.is_symlink():
            shutil.rmtree(junk)
        else:
            junk.unlink()
    return dst


def run_test(dlab_bin, wasm: Path, engine_args, tmp: Path):
    spec = specification(wasm)
    assert not spec["proposals"], f"needs proposals {spec['proposals']}: not preview 1"
    folder = copy_of_test_folder(wasm, tmp)
    run_op = next(op for op in spec["operations"] if op["type"] == "run")
    cmd = [str(dlab_bin), "wasm", "run", *engine_args]
    if run_op.get("root"):
        cmd += ["--dir-rw", f"{folder / run_op['root']}::/"]
    for k, v in run_op.get("env", {}).items():
        cmd += ["--env", f"{k}={v}"]
    cmd += [str(wasm), "--", *run_op.get("args", [])]
    r = subprocess.run(cmd, capture_output=True, timeout=20, cwd=folder, stdin=subprocess.DEVNULL)
    problems = []
    for op in spec["operations"]:
        if op["type"] == "read":
            got = (r.stdout if op.get("id", "stdout") == "stdout" else r.stderr).decode(errors="replace")
            if got != op.get("payload", ""):
                problems.append(f"{op.get('id', 'stdout')}: expected {op.get('payload', '')!r}, got {got[:500]!r}")
        elif op["type"] == "wait":
            if r.returncode != op.get("exit_code", 0):
                problems.append(f"exit code {r.returncode}, expected {op.get('exit_code', 0)}; stderr: {r.stderr.decode(errors='replace')[:500]}")
    return problems


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("test", suite_tests() or ["(no suite)"])
def test_wasi_testsuite(dlab_bin, tmp_path, test, engine):
    if not SUITE.is_dir():
        pytest.skip(f"no WASI test suite at {SUITE} (set DLAB_WASI_TESTSUITE)")
    lang, name = test.split("/")
    wasm = SUITE / "tests" / lang / "testsuite" / "wasm32-wasip1" / f"{name}.wasm"
    problems = run_test(dlab_bin, wasm, ENGINES[engine], tmp_path)
    if test in EXPECTED_FAILURES:
        assert problems, f"{test} passes now: take it off EXPECTED_FAILURES ({EXPECTED_FAILURES[test]})"
        pytest.xfail(EXPECTED_FAILURES[test])
    assert not problems, "; ".join(problems)


def test_the_expected_failures_are_tests_of_the_suite():
    if not SUITE.is_dir():
        pytest.skip(f"no WASI test suite at {SUITE}")
    unknown = set(EXPECTED_FAILURES) - set(suite_tests())
    assert not unknown, f"EXPECTED_FAILURES names tests the suite does not have: {sorted(unknown)}"
    assert len(suite_tests()) == 72, len(suite_tests())
