"""dlab-run, the default engine as a program of its own (interpreter/cli/run_main.cc): it gives the
output and exit status `dlab wasm run` gives on the same programs (standard input, files in a
preopened folder, the environment, proc_exit, a trap), passes every argument after the module to
the program, refuses a wrong command line with status 2, and its linker order file still covers
the functions an empty module runs (tools/startup_order.py --check, under callgrind)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXIT_WITH = ('(module (import "wasi_snapshot_preview1" "proc_exit" (func $e (param i32))) (memory (export "memory") 1)'
             ' (func (export "_start") (call $e (i32.const {code}))))')
TRAP = '(module (memory (export "memory") 1) (func (export "_start") unreachable))'


@pytest.fixture(scope="session")
def dlab_run_bin(dlab_bin):
    path = Path(dlab_bin).parent / "dlab-run"
    if not path.exists():
        pytest.skip(f"{path} not built: `just build` builds it beside dlab")
    return path


@pytest.fixture
def io_program(io_programs):
    return io_programs[0]


def both(dlab_bin, dlab_run_bin, options, module, program_args, stdin=b"", cwd=None):
    """The same run in `dlab wasm run` and in dlab-run: (dlab's, dlab-run's) CompletedProcess."""
    kw = dict(input=stdin, capture_output=True, timeout=120, cwd=cwd)
    dlab = subprocess.run([str(dlab_bin), "wasm", "run", *options, str(module), "--", *program_args], **kw)
    alone = subprocess.run([str(dlab_run_bin), *options, str(module), *program_args], **kw)
    return dlab, alone


def test_stdin_files_and_environment_as_dlab_wasm_run(dlab_bin, dlab_run_bin, io_program, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta gamma\n")
    (tmp_path / "sub").mkdir()
    cases = [([], ["stdin"], b"one two\nthree\n" * 500),
             (["--dir", f"{tmp_path}::."], ["cat", "a.txt"], b""),
             (["--dir", f"{tmp_path}::."], ["ls", "."], b""),
             (["--dir", f"{tmp_path}::."], ["cat", "missing.txt"], b""),
             (["--dir-rw", f"{tmp_path}::."], ["write", "new.txt", "written"], b"")]
    for options, args, stdin in cases:
        dlab, alone = both(dlab_bin, dlab_run_bin, options, io_program, args, stdin)
        assert (alone.returncode, alone.stdout) == (dlab.returncode, dlab.stdout), (args, alone.stderr)
        assert alone.stdout, args  # each case prints something: equal outputs are not two empty ones
    assert (tmp_path / "new.txt").read_text() == "written"


def test_arguments_after_the_module_are_the_programs_even_dashed(dlab_run_bin, io_program):
    # io.c's "args" command is not needed: an unknown command makes it print its usage with argv[1].
    out = subprocess.run([str(dlab_run_bin), str(io_program), "--help", "-x"], capture_output=True, timeout=60)
    assert b"dlab-run" not in out.stdout + out.stderr  # dlab-run took neither as its own option


@pytest.mark.parametrize("code,status", [(0, 0), (3, 3), (255, 255), (256, 1)])
def test_proc_exit_is_the_exit_status(dlab_run_bin, wat, code, status):
    out = subprocess.run([str(dlab_run_bin), str(wat(EXIT_WITH.format(code=code)))], capture_output=True, text=True, timeout=60)
    assert out.returncode == status, out.stderr
    assert ("outside 0..255" in out.stderr) == (code > 255)


HOST_IMPORT = ('(module (import "host" "bridge" (func $b (param i32) (result i32))) (memory (export "memory") 1)'
               ' (func (export "_start") {body}))')


@pytest.mark.parametrize("runner", ["dlab-run", "dlab wasm run"])
def test_an_unknown_import_links_as_a_trap_only_when_asked(dlab_bin, dlab_run_bin, wat, runner):
    argv = [str(dlab_run_bin)] if runner == "dlab-run" else [str(dlab_bin), "wasm", "run"]
    never_called, called = wat(HOST_IMPORT.format(body="nop"), "never"), wat(HOST_IMPORT.format(body="(drop (call $b (i32.const 1)))"), "called")
    out = subprocess.run([*argv, str(never_called)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "unknown import host.bridge" in out.stderr
    out = subprocess.run([*argv, "--trap-unknown-imports", str(never_called)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([*argv, "--trap-unknown-imports", str(called)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "trap: unknown import host.bridge called" in out.stderr


def test_a_trap_is_status_1_with_the_file_named(dlab_run_bin, wat):
    module = wat(TRAP)
    out = subprocess.run([str(dlab_run_bin), str(module)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr.startswith("dlab-run: error: ") and f"{module}: trap: unreachable" in out.stderr


@pytest.mark.parametrize("argv,text", [
    ([], "no module"),
    (["--bogus", "m.wasm"], "'--bogus' is not an option"),
    (["--bogus=1", "m.wasm"], "'--bogus' is not an option"),
    (["--engine=1"], "'--engine' takes no value"),
    (["--env=NOEQUALS", "m.wasm"], "is not KEY=VALUE"),
    (["--env", "NOEQUALS", "m.wasm"], "is not KEY=VALUE"),
    (["--dir"], "--dir needs a value"),
    (["--dir", "/no/such/folder", "m.wasm"], "no such folder"),
])
def test_a_wrong_command_line_is_status_2(dlab_run_bin, argv, text):
    out = subprocess.run([str(dlab_run_bin), *argv], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and text in out.stderr and "usage: dlab-run" in out.stderr, out.stderr


def test_a_missing_or_malformed_module_is_status_1(dlab_run_bin, tmp_path):
    out = subprocess.run([str(dlab_run_bin), str(tmp_path / "none.wasm")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "no such file" in out.stderr
    bad = tmp_path / "bad.wasm"
    bad.write_bytes(b"\0asm\x01\0\0\0\x01")
    out = subprocess.run([str(dlab_run_bin), str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "malformed at byte" in out.stderr


def test_engine_is_dlab_wasm_runs_default(dlab_bin, dlab_run_bin):
    out = subprocess.run([str(dlab_run_bin), "--engine"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    help_text = subprocess.run([str(dlab_bin), "wasm", "run", "--help"], capture_output=True, text=True, timeout=60).stdout
    dispatch = out.stdout.split("dispatch ")[1].split(",")[0]
    assert f"dispatch mode (default: {dispatch}," in " ".join(help_text.split())


def test_writing_to_a_full_disk_is_a_failure(dlab_run_bin, io_program):
    with open("/dev/full", "wb") as full:
        out = subprocess.run([str(dlab_run_bin), str(io_program), "stdin"], input=b"some text\n" * 100, stdout=full,
                             stderr=subprocess.PIPE, timeout=60)
    assert out.returncode != 0


def instructions(argv, tmp_path) -> int:
    """The instructions a run executes, as callgrind counts them (deterministic, unlike its time)."""
    out = tmp_path / "callgrind.out"
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *map(str, argv)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return int(next(line for line in out.read_text().splitlines() if line.startswith("summary:")).split()[1])


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is missing: ./tools/bootstrap installs it")
def test_an_exit_costs_no_sort_of_every_unwind_table(dlab_run_bin, wat, tmp_path):
    # proc_exit unwinds the interpreter as a C++ exception. Linked -static (not -static-pie), the
    # first exception made libgcc sort every frame description of the binary: 209 million
    # instructions (12 ms) on top of an empty module's 0.2 million.
    empty = instructions([dlab_run_bin, wat('(module (memory (export "memory") 1) (func (export "_start")))', "empty")], tmp_path)
    exiting = instructions([dlab_run_bin, wat(EXIT_WITH.format(code=0), "exit")], tmp_path)
    assert exiting < empty + 5_000_000, (empty, exiting)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is missing: ./tools/bootstrap installs it")
def test_the_order_file_covers_an_empty_modules_start_up(dlab_run_bin):
    out = subprocess.run([sys.executable, str(REPO / "tools" / "startup_order.py"), str(dlab_run_bin), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) is missing")
def test_only_the_engines_it_runs_are_linked_into_it(dlab_bin, dlab_run_bin):
    # dlab-run runs the default engine and its fallbacks (interpreter/CMakeLists.txt's
    # DLAB_RUN_ENGINES: four); every other engine is a stub there, its handlers left out by the
    # linker. A handler every engine has, counted by its copies: at most four in dlab-run, fewer than
    # in dlab (which links every engine it builds, the budgeted ones among them).
    def copies(binary):
        out = subprocess.run(["nm", "-C", str(binary)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return sum(1 for line in out.stdout.splitlines() if "::h_i32_add_k(" in line)
    in_run, in_dlab = copies(dlab_run_bin), copies(dlab_bin)
    assert 1 <= in_run <= 4 and in_run < in_dlab, (in_run, in_dlab)

    # The one-function engines have no handlers of their own to count: their run function is a stub
    # in dlab-run (a few bytes), the whole engine in dlab.
    def size_of(binary, function):
        out = subprocess.run(["nm", "-S", "-C", str(binary)], capture_output=True, text=True, timeout=120)
        sizes = [int(parts[1], 16) for parts in (line.split(maxsplit=3) for line in out.stdout.splitlines())
                 if len(parts) == 4 and parts[3].startswith(f"dlab::wasm::{function}(")]
        assert len(sizes) == 1, f"{function} in {binary}: {sizes}"
        return sizes[0]
    assert size_of(dlab_run_bin, "run_switch") < 64 < size_of(dlab_bin, "run_switch")


def test_it_runs_the_engine_dlab_wasm_run_picks(dlab_bin, dlab_run_bin):
    # Its engine by name: the default (tail_pn with guard pages) where dlab has it, not a fallback
    # that a stub in dlab-run's link would leave it on without a word.
    engines = subprocess.run([str(dlab_bin), "wasm", "engines"], capture_output=True, text=True, timeout=60).stdout
    built = {line.split()[0] for line in engines.splitlines()[1:] if line.split() and line.rstrip().endswith(" built")}
    name = subprocess.run([str(dlab_run_bin), "--engine"], capture_output=True, text=True, timeout=60).stdout.split()[0]
    for preferred in ("tail_pn_guard", "tail_pn", "tail_guard", "tail"):
        if preferred in built:
            assert name == preferred, (name, sorted(built))
            break
