"""Where the WebAssembly spec suite comes from (tools/spec-suite.cmake, tools/spec-suite): a
checkout with no suite beside it stops configuring at once with one line; DLAB_WASM_TESTSUITE from
the environment wins, is remembered and can be emptied; a fetched .cache/wasm-spec-3.0 is found;
`fetch` fails offline with one line and, from a local mirror of the spec repository, makes the
pinned suite byte for byte. The conversion of the shared suite itself is ctest's
interpreter.spec_conversion (tools/spec-suite check)."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "spec-suite"
SHARED = REPO.parent / "shared" / "wasm-spec-3.0"
# A script the configure step counts (its content is not read there).
SCRIPT = '(module binary "\\00asm\\01\\00\\00\\00")\n'


def env_without_suite(**extra):
    env = {k: v for k, v in os.environ.items() if k != "DLAB_WASM_TESTSUITE"}
    env.update(extra)
    return env


@pytest.fixture
def lonely(tmp_path):
    """A copy of the working tree (what git tracks or would, less results/) with no ../shared beside it."""
    repo = tmp_path / "lonely" / "repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in files:
        if not rel or rel.startswith("results/") or not (REPO / rel).is_file():
            continue
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, repo / rel)
    assert not (repo.parent / "shared").exists()
    return repo


def configure(repo, *args, **env):
    t0 = time.monotonic()
    r = subprocess.run(["cmake", "--preset", "release", *args], cwd=repo, capture_output=True, text=True,
                       env=env_without_suite(**env), timeout=300)
    return r, time.monotonic() - t0


def error_lines(stderr):
    """The lines of CMake's error message (below `CMake Error at ...:`, up to the blank line)."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("CMake Error at CMakeLists.txt"))
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        out.append(line.strip())
    return out


def suite_line(stdout):
    return next(line for line in stdout.splitlines() if line.startswith("-- WebAssembly spec suite:"))


def fake_suite(folder):
    folder.mkdir(parents=True)
    (folder / "x.bin.wast").write_text(SCRIPT)
    return folder


def test_a_checkout_without_a_suite_stops_at_once_with_one_line(lonely):
    r, took = configure(lonely)
    assert r.returncode != 0
    lines = error_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert "DLAB_WASM_TESTSUITE" in lines[0] and "tools/spec-suite fetch" in lines[0], lines[0]
    # before project(): no compiler was looked at
    assert "compiler identification" not in r.stdout + r.stderr
    assert took < 20, took
    # and `locate` says the same
    loc = subprocess.run([str(lonely / "tools" / "spec-suite"), "locate"], capture_output=True, text=True, env=env_without_suite())
    assert loc.returncode == 1 and loc.stdout == ""
    assert loc.stderr.count("\n") == 1 and "tools/spec-suite fetch" in loc.stderr, loc.stderr


def test_none_configures_without_a_suite_and_its_tests_fail_saying_so(lonely):
    # A machine that only measures (a fleet host): `just rfc` builds; `just test` can never pass.
    r, _ = configure(lonely, DLAB_WASM_TESTSUITE="none")
    assert r.returncode == 0, r.stderr
    assert suite_line(r.stdout).startswith("-- WebAssembly spec suite: none (DLAB_WASM_TESTSUITE=none")
    listed = subprocess.run(["ctest", "-N"], cwd=lonely / "build" / "release", capture_output=True, text=True).stdout
    assert "interpreter.spec_suite_not_configured" in listed
    assert "interpreter.spec_linking" not in listed and "interpreter.spec_tail" not in listed
    t = subprocess.run(["ctest", "-R", "spec_suite_not_configured", "--output-on-failure"], cwd=lonely / "build" / "release",
                       capture_output=True, text=True)
    assert t.returncode != 0 and "DLAB_WASM_TESTSUITE=none" in t.stdout


@pytest.mark.parametrize("kind", ["missing", "empty"])
def test_a_wrong_folder_fails_with_one_line(lonely, tmp_path, kind):
    folder = tmp_path / "suite"
    if kind == "empty":
        folder.mkdir()
        (folder / "README.md").write_text("no scripts\n")
    r, _ = configure(lonely, DLAB_WASM_TESTSUITE=str(folder))
    assert r.returncode != 0
    lines = error_lines(r.stderr)
    assert len(lines) == 1 and f"DLAB_WASM_TESTSUITE={folder}" in lines[0], r.stderr
    assert ("is not a folder" if kind == "missing" else "holds no .bin.wast or .wast scripts") in lines[0]


def test_the_environment_wins_is_remembered_and_can_be_emptied(lonely, tmp_path):
    a, b = fake_suite(tmp_path / "a"), fake_suite(tmp_path / "b")
    cache = lonely / "build" / "release" / "CMakeCache.txt"

    r, _ = configure(lonely, DLAB_WASM_TESTSUITE=str(a))
    assert r.returncode == 0, r.stderr[-2000:]
    assert suite_line(r.stdout) == f"-- WebAssembly spec suite: {a}, from the environment variable DLAB_WASM_TESTSUITE"
    assert f"DLAB_WASM_TESTSUITE_RESOLVED:INTERNAL={a}\n" in cache.read_text()

    # a changed environment variable is noticed, over the cache entry
    r, _ = configure(lonely, DLAB_WASM_TESTSUITE=str(b))
    assert r.returncode == 0, r.stderr[-2000:]
    assert suite_line(r.stdout) == f"-- WebAssembly spec suite: {b}, from the environment variable DLAB_WASM_TESTSUITE, over the cache's {a}"
    # the tests and dlab's default --suite get it
    ctest = (lonely / "build" / "release" / "interpreter" / "tests" / "CTestTestfile.cmake").read_text()
    assert f'"--suite" "{b}"' in ctest and f'"{a}"' not in ctest

    # without it, the cache keeps the last value (ninja re-running CMake in another shell)
    r, _ = configure(lonely)
    assert r.returncode == 0, r.stderr[-2000:]
    assert suite_line(r.stdout).startswith(f"-- WebAssembly spec suite: {b}, from the CMake cache variable DLAB_WASM_TESTSUITE")
    loc = subprocess.run([str(lonely / "tools" / "spec-suite"), "locate"], capture_output=True, text=True, env=env_without_suite())
    assert loc.returncode == 0 and loc.stdout.splitlines()[0] == str(b) and "is configured with it" in loc.stdout, loc.stdout

    # emptied: back to the automatic choice, which finds nothing here
    r, _ = configure(lonely, "-DDLAB_WASM_TESTSUITE=")
    assert r.returncode != 0 and len(error_lines(r.stderr)) == 1 and "tools/spec-suite fetch" in r.stderr

    # ... until a suite is fetched into .cache/wasm-spec-3.0 (what `tools/spec-suite fetch` writes)
    fake_suite(lonely / ".cache" / "wasm-spec-3.0" / "binary")
    r, _ = configure(lonely)
    assert r.returncode == 0, r.stderr[-2000:]
    assert suite_line(r.stdout).startswith(f"-- WebAssembly spec suite: {lonely / '.cache' / 'wasm-spec-3.0'}, from .cache/wasm-spec-3.0")


def test_fetch_without_network_fails_with_one_line(tmp_path):
    # a repository that cannot be reached stands for the network (this test must not clone GitHub)
    r = subprocess.run([str(TOOL), "fetch", str(tmp_path / "dest"), "--repo", str(tmp_path / "no-such-repository")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("spec-suite: error: cannot clone"), r.stderr
    assert "network" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing left behind


@pytest.mark.reference_interpreter
@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is not here: no spec repository to mirror")
def test_fetch_from_a_mirror_makes_the_pinned_suite(tmp_path):
    """fetch's clone, checkout, layout, build, conversion and pin check, from a local repository laid
    out as WebAssembly/spec (test/core, interpreter/) holding the shared suite's sources."""
    mirror = tmp_path / "mirror"
    (mirror / "test").mkdir(parents=True)
    shutil.copytree(SHARED / "text", mirror / "test" / "core", copy_function=shutil.copyfile)
    shutil.copytree(SHARED / "reference-interpreter", mirror / "interpreter", copy_function=shutil.copyfile)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "a mirror"]):
        subprocess.run([*git, *cmd], cwd=mirror, check=True, capture_output=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=mirror, capture_output=True, text=True, check=True).stdout.strip()
    dest = tmp_path / "suite"
    r = subprocess.run([str(TOOL), "fetch", str(dest), "--repo", str(mirror), "--commit", sha[:9], "--verify"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "match the pinned suite" in r.stdout
    assert sorted(p.name for p in dest.iterdir()) == [".fetched", "README.md", "binary", "reference-interpreter", "text"]
    assert not (tmp_path / "suite.clone").exists() and not (tmp_path / "suite.partial").exists()
    for rel in (SHARED / "binary").rglob("*.bin.wast"):
        assert (dest / "binary" / rel.relative_to(SHARED / "binary")).read_bytes() == rel.read_bytes(), rel
    again = subprocess.run([str(TOOL), "fetch", str(dest), "--repo", str(mirror), "--commit", sha], capture_output=True, text=True)
    assert again.returncode == 0 and "is there already" in again.stdout


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"{SHARED} is not here")
def test_the_shared_suite_is_the_pinned_one():
    r = subprocess.run([str(TOOL), "verify", str(SHARED / "binary")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
