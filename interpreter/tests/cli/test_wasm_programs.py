"""`dlab wasm programs`: whole WASI programs as processes (a list like interpreter/programs/programs.json,
here of io.c's commands and the empty module, in a cache folder laid out as tools/fetch-programs
lays it out): every engine's output checked against the list's sha256 before timing (standard output
or a file the program writes), a peer that cannot run a program said and left out, dlab-run failing
one is an error, the rows and sidecar the report's table reads; the list read strictly; the
fetch tool's inputs pinned by hash, and a list that would make it write outside its cache refused."""
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dispatchlab_analysis import report
from dispatchlab_analysis.results import load_run, with_params

REPO = Path(__file__).resolve().parents[3]
FETCH = REPO / "tools" / "fetch-programs"
TEXT = b"one two three\nfour five\n" * 200


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def program(name, role="held_out", args=(), stdin=None, output=None):
    p = {"name": name, "role": role, "what": f"the test's {name}", "toolchain": "clang-19 (the test's own)",
         "source": {"generated": "test"}, "args": list(args), "output": output}
    if stdin:
        p["stdin"] = stdin
    return p


@pytest.fixture
def programs(tmp_path, io_programs):
    """(list file, cache folder): io.c counting standard input, io.c writing a file, the empty module."""
    wasm, native = io_programs
    cache = tmp_path / "cache"
    for name in ("count", "writer"):
        (cache / name).mkdir(parents=True)
        shutil.copy(wasm, cache / name / "module.wasm")
    (cache / "count" / "input.txt").write_bytes(TEXT)
    (cache / "empty").mkdir()
    (cache / "empty" / "module.wasm").write_bytes(bytes.fromhex(
        "0061736d01000000010401600000030201000503010001071302066d656d6f72790200065f73746172740000" "0a040102000b"))
    counted = subprocess.run([str(native), "stdin"], input=TEXT, capture_output=True, check=True).stdout
    listed = [program("count", args=["stdin"], stdin="input.txt", output={"stdout_sha256": sha(counted)}),
              program("writer", role="selection", args=["write", "out.txt", "written"],
                      output={"file": "out.txt", "sha256": sha(b"written")}),
              program("empty", role="start_up", output={"stdout_sha256": sha(b"")})]
    path = tmp_path / "programs.json"
    path.write_text(json.dumps({"programs": listed}))
    return path, cache


def bench(dlab_bin, list_file, cache, *extra, timeout=300, cwd=None):
    return subprocess.run([str(dlab_bin), "wasm", "programs", "--list", str(list_file), "--cache", str(cache), "--samples", "2",
                           "--warmup", "0", *extra], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def test_programs_are_checked_timed_and_tabled_a_failing_peer_said(dlab_bin, programs, tmp_path):
    list_file, cache = programs
    run_dir = subprocess.run([dlab_bin, "new-run", "--results", tmp_path / "results"], check=True, capture_output=True,
                             text=True).stdout.strip()
    # the cache named relatively (each run starts in a folder of its own), a peer that fails, and one
    # that exits 0 having done nothing (its output checked, a file it never wrote said so)
    out = bench(dlab_bin, list_file.name, cache.name, "--peer", f"dlabproc={dlab_bin} wasm run --dir-rw .::/ {{module}} -- {{args}}",
                "--peer", "broken=false {module} {args}", "--peer", "idle=true {module} {args}", "--run-dir", run_dir, cwd=cache.parent)
    assert out.returncode == 0, out.stderr[-2000:]
    for name in ("count", "writer", "empty"):
        assert f"{name}: broken cannot run it: " in out.stderr
    assert "writer: idle cannot run it: it wrote no out.txt" in out.stderr
    assert "count: idle cannot run it: its output has sha256 e3b0c442" in out.stderr
    # the runs wrote into a scratch copy of the inputs: the cache is as the fetch left it
    assert not (cache / "writer" / "out.txt").exists() and sorted(p.name for p in (cache / "writer").iterdir()) == ["module.wasm"]
    run = load_run(run_dir)
    exp = run.experiments["programs"]
    rows = with_params(exp.summary)
    ticks = rows[rows["metric"] == "tsc_ticks"]
    assert set(zip(ticks["program"], ticks["engine"])) == ({(p, e) for p in ("count", "writer", "empty") for e in ("dlab-run", "dlabproc")}
                                                          | {("empty", "idle")})  # idle does all the empty module does
    assert (ticks["peak_rss_kb"].astype(float) > 0).all() if Path("/usr/bin/time").exists() else True
    notes = {g["program"]: g["engines"] for g in exp.sidecar["programs"]}
    assert notes["count"]["broken"]["runs"] is False and "exited with status 1" in notes["count"]["broken"]["why"]
    assert "tail" in exp.sidecar["dlab_run_engine"]
    md = report.experiment_markdown(exp)
    assert "| count | held out |" in md and "cannot run it: " in md
    assert "geometric mean, held out (1) |" in md  # count is the one held-out program dlabproc ran


def test_a_wrong_output_in_dlab_run_is_an_error(dlab_bin, programs):
    list_file, cache = programs
    listed = json.loads(list_file.read_text())
    listed["programs"][0]["output"] = {"stdout_sha256": "0" * 64}
    list_file.write_text(json.dumps(listed))
    out = bench(dlab_bin, list_file, cache, "--only", "count", "--no-save")
    assert out.returncode == 1
    assert "count: dlab-run: its output has sha256" in out.stderr and "not the expected 0000" in out.stderr


def test_a_program_not_fetched_says_how_to_fetch_it(dlab_bin, programs):
    list_file, cache = programs
    shutil.rmtree(cache / "empty")
    out = bench(dlab_bin, list_file, cache, "--only", "empty", "--no-save")
    assert out.returncode == 1 and "not fetched" in out.stderr and "tools/fetch-programs" in out.stderr


@pytest.mark.parametrize("change,text", [
    (lambda p: p.update(role="tuned"), "role 'tuned' is not held_out, selection or start_up"),
    (lambda p: p.update(name="Has Space"), "a name is lowercase letters"),
    (lambda p: p.update(output={"stdout_sha256": "xyz"}), "not 64 lowercase hex digits"),
    (lambda p: p.update(stdin="../secret"), "is not a file name in the program's folder"),
    (lambda p: p.pop("toolchain"), '"toolchain" must be a text'),
])
def test_the_list_is_read_strictly(dlab_bin, programs, change, text):
    list_file, cache = programs
    listed = json.loads(list_file.read_text())
    change(listed["programs"][0])
    list_file.write_text(json.dumps(listed))
    out = bench(dlab_bin, list_file, cache, "--no-save")
    assert out.returncode == 1 and "programs[0]" in out.stderr and text in out.stderr, out.stderr


def test_the_experiment_name_cannot_leave_the_run_directory(dlab_bin, programs, tmp_path):
    list_file, cache = programs
    out = bench(dlab_bin, list_file, cache, "--name", "../escaped", "--results", str(tmp_path / "results"))
    assert out.returncode == 2 and "lower-case letters, digits and '_' only" in out.stderr, out.stderr
    assert not (tmp_path / "results").exists()


def test_a_peer_needs_module_and_args(dlab_bin, programs):
    list_file, cache = programs
    out = bench(dlab_bin, list_file, cache, "--peer", "w=wasm3 {module}", "--no-save")
    assert out.returncode == 2 and "needs {module} and {args}" in out.stderr


def test_the_committed_list_is_valid_and_every_generated_input_is_pinned(dlab_bin, tmp_path):
    # The real list, read by dlab's own reader (nothing fetched: the error is the fetch one, not the list's).
    out = subprocess.run([str(dlab_bin), "wasm", "programs", "--cache", str(tmp_path / "none"), "--no-save"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1 and "not fetched" in out.stderr, out.stderr
    listed = json.loads((REPO / "interpreter" / "programs" / "programs.json").read_text())["programs"]
    assert {"held_out", "selection", "start_up"} >= {p["role"] for p in listed}
    assert sum(p["role"] == "held_out" for p in listed) > sum(p["role"] == "selection" for p in listed)
    sys.path.insert(0, str(REPO / "tools"))
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("fetch_programs", str(FETCH))
    spec = importlib.util.spec_from_loader("fetch_programs", loader)
    fetch = importlib.util.module_from_spec(spec)
    loader.exec_module(fetch)
    # Each input as its expected output was taken from: a generator that changes (a new seed, a
    # Python whose random differs) fails here, not as a checksum mismatch in a timed run.
    pinned = {"flite": "6bd253be6f0aa024ed1b0a9fadc21c1f8cf77441e3b07bbbbd183dcd7c3b9cf9",
              "esbuild": "ab76d7f932fea1a7a39d43cebd5a41b16c99df362adf6205fb4cf44b85015fe6",
              "nitrogql": "8823494a99039ce922d383d2d81ea57b889bcdca9b1fe409a23ba7d8781cdd4d",
              "pdfcpu": "98d8f49075c07eb102ba164195e4766a251e2a5e83c6b1995eb4753dc526fbfc",
              "icepack": "d156152fd6c458a47f3d8095f3311c6f6cd1be3bc73e45277f0163573685d449"}
    for p in listed:
        spec_in = dict(p.get("input") or {})
        if not spec_in:
            continue
        gen = fetch.GENERATORS[spec_in.pop("generator")]
        spec_in.pop("file", None)
        made = gen(**spec_in)
        if isinstance(made, dict):  # several files: each name and its bytes, in name order
            made = b"".join(name.encode() + b"\0" + data for name, data in sorted(made.items()))
        assert sha(made) == pinned.pop(p["name"]), p["name"]
    assert not pinned, f"pinned inputs of programs no longer listed: {pinned}"
    empty = tmp_path / "empty.wasm"
    empty.write_bytes(fetch.empty_command())
    decoded = subprocess.run([str(dlab_bin), "wasm", "decode", str(empty)], capture_output=True, text=True, timeout=60)
    assert decoded.returncode == 0 and "1 exports" not in decoded.stdout and "2 exports" in decoded.stdout


@pytest.mark.parametrize("change,text", [
    (lambda p: p["input"].update(density=2), "density 2 is not a fraction between 0 and 1"),
    (lambda p: p["input"].pop("seed"), "missing 1 required positional argument: 'seed'"),
])
def test_a_generators_parameters_are_checked_before_anything_is_fetched(tmp_path, change, text):
    listed = json.loads((REPO / "interpreter" / "programs" / "programs.json").read_text())
    change(next(p for p in listed["programs"] if p["name"] == "icepack"))
    (tmp_path / "list.json").write_text(json.dumps(listed))
    out = subprocess.run([sys.executable, str(FETCH), "--list", str(tmp_path / "list.json"), "--cache", str(tmp_path / "cache"),
                          "--only", "icepack"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "icepack: input" in out.stderr and text in out.stderr, out.stderr
    # Nothing downloaded or written for it: the inputs are made before the package is fetched.
    assert "Traceback" not in out.stderr and not (tmp_path / "cache" / "icepack").exists()
    assert not list((tmp_path / "cache").glob("tarballs/*")), list((tmp_path / "cache").rglob("*"))


@pytest.mark.parametrize("change,text", [
    (lambda p: p["input"].update(file="../../escaped.txt"), "is not a relative path inside the program's folder"),
    (lambda p: p["input"].update(file="/tmp/absolute.txt"), "is not a relative path inside the program's folder"),
    (lambda p: p.update(name="../up"), "lowercase letters, digits"),
    (lambda p: p["source"].update(version="github:someone/repo"), "is not an exact version"),
    (lambda p: p["source"].update(module="../module.wasm"), "is not a relative path inside the program's folder"),
    (lambda p: p["source"].pop("tarball_sha256"), "has no source.tarball_sha256"),
])
def test_the_fetch_tool_refuses_a_list_that_would_write_outside_its_cache(tmp_path, change, text):
    listed = json.loads((REPO / "interpreter" / "programs" / "programs.json").read_text())
    flite = next(p for p in listed["programs"] if p["name"] == "flite")
    change(flite)
    (tmp_path / "list.json").write_text(json.dumps(listed))
    out = subprocess.run([sys.executable, str(FETCH), "--list", str(tmp_path / "list.json"), "--cache", str(tmp_path / "cache"),
                          "--only", "empty"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and text in out.stderr, out.stderr
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "up").exists()
    assert not (tmp_path / "cache").exists()  # checked before anything is written
