"""tools/fuzz_differential.py (`just fuzz SECONDS differential`): dlab's engine configurations
against binaryen's interpreter and each other on modules made by `wasm-opt -ttf`.

A bounded run with a fixed seed over every configuration this build has (it runs in `just test`:
about 15 s on a 2-vCPU guest, most of it binaryen's JavaScript build), disagreements planted with
a fake dlab (between two configurations, and with binaryen) that must be reported with a
reproducer and exit 1, a missing wasm-opt as a clear error, and the comparisons' rules on values
binaryen printed."""
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "fuzz_differential.py"
sys.path.insert(0, str(TOOL.parent))
import fuzz_differential as fd  # noqa: E402
import fuzz_differential_wasm as fw  # noqa: E402

needs_binaryen = pytest.mark.skipif(shutil.which("wasm-opt") is None,
                                    reason="wasm-opt not found: run ./tools/bootstrap (binaryen from npm)")


def run_tool(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def fake_dlab(tmp_path, real, when: str) -> Path:
    """A dlab that is the real one, except that in the configurations whose arguments contain
    `when` every i32 a probe prints gains a leading 1 (a planted wrong answer)."""
    fake = tmp_path / "dlab"
    fake.write_text(f"""#!/bin/bash
case " $* " in
  *"{when}"*)
    "{real}" "$@" | sed -E 's/got i32:([0-9]+)/got i32:1\\1/'; exit ${{PIPESTATUS[0]}};;
esac
exec "{real}" "$@"
""")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return fake


# ---------------------------------------------------------------------------------------------
# The bounded run and the planted disagreements (dlab and binaryen).

@needs_binaryen
def test_a_bounded_run_over_every_configuration_agrees(dlab_bin, tmp_path):
    # Seed 3's first three modules log, return values of every type, trap, throw and call back
    # through call-export; every configuration of `dlab wasm engines` x IR x lowering runs them.
    out = run_tool("--seed", "3", "--modules", "3", "--batch", "3", "--reduce-seconds", "0",
                   "--dlab", str(dlab_bin), "--out", str(tmp_path / "out"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "fuzz-differential: seed 3 " in out.stdout
    done = re.search(r"done: batches 1, modules 3 \(compared (\d+), not compared \d+\), calls compared (\d+), "
                     r"log entries (\d+), configurations (\d+)", out.stdout)
    assert done, out.stdout
    compared, calls, entries, configs = map(int, done.groups())
    assert compared >= 2 and calls > 10 and entries > 0
    # As many configurations as the build has: at least every built row of `dlab wasm engines` in
    # the stack IR with the plain and the default lowering.
    rows = [line.split() for line in subprocess.run([str(dlab_bin), "wasm", "engines"], capture_output=True,
                                                     text=True).stdout.splitlines()[1:]]
    built = sum(1 for r in rows if len(r) >= 6 and r[5] == "built")
    assert configs >= 2 * built
    assert "no disagreement" in out.stdout
    assert not (tmp_path / "out" / "run-3").exists()   # the scratch folder goes when nothing was found


@needs_binaryen
def test_b_a_planted_disagreement_between_configurations_is_reported_reduced(dlab_bin, tmp_path):
    fake = fake_dlab(tmp_path, dlab_bin, "--ir register --lowering plain")
    out = run_tool("--seed", "3", "--only", "0", "--reduce-seconds", "10", "--dlab", str(fake),
                   "--out", str(tmp_path / "out"),
                   "--config", "tail/sp/none/check/register/fold+fuse+super+acc+elide",
                   "--config", "tail/sp/none/check/register/plain")
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-2000:]
    assert "DISAGREEMENT (configs) in module 0 of seed 3" in out.stdout
    assert "tail/sp/none/check/register/plain:" in out.stdout
    folder = tmp_path / "out" / "3-0"
    assert f"reproducer: {folder}/README.txt" in out.stdout
    readme = (folder / "README.txt").read_text()
    assert "--seed 3 --only 0" in readme and "check module.wasm" in readme
    assert (folder / "module.wasm").exists() and (folder / "script" / "module.bin.wast").exists()
    # The reduced module is smaller and still disagrees; the real dlab agrees on it.
    reduced = folder / "reduced.wasm"
    assert reduced.exists(), readme
    assert reduced.stat().st_size < (folder / "module.wasm").stat().st_size
    configs = ["--config", "tail/sp/none/check/register/plain", "--config", "tail/sp/none/check/register/fold+fuse+super+acc+elide"]
    bad = run_tool("check", str(reduced), "--dlab", str(fake), *configs)
    assert (bad.returncode, bad.stdout) == (1, "DISAGREE\n"), bad.stderr
    good = run_tool("check", str(reduced), "--dlab", str(dlab_bin), *configs)
    assert (good.returncode, good.stdout) == (0, "AGREE\n"), good.stderr


@needs_binaryen
def test_b_a_planted_disagreement_with_binaryen_is_reported(dlab_bin, tmp_path):
    # Every configuration gives the same wrong i32s: they agree with each other, not with binaryen.
    fake = fake_dlab(tmp_path, dlab_bin, "--lowering")
    out = run_tool("--seed", "3", "--only", "0", "--reduce-seconds", "0", "--dlab", str(fake),
                   "--out", str(tmp_path / "out"), "--config", "tail/sp/none/check/stack/plain")
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-2000:]
    assert "DISAGREEMENT (binaryen) in module 0 of seed 3" in out.stdout
    readme = (tmp_path / "out" / "3-0" / "README.txt").read_text()
    assert "--binaryen" in readme and "binaryen" in readme.splitlines()[1]


def test_c_a_missing_wasm_opt_is_a_clear_error(dlab_bin, tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))
    out = run_tool("--seed", "1", "--modules", "1", "--dlab", str(dlab_bin), "--out", str(tmp_path / "out"), env=env)
    assert out.returncode == 2
    assert "wasm-opt not found: run ./tools/bootstrap" in out.stderr
    assert "Traceback" not in out.stderr


def test_c_a_missing_dlab_and_a_campaign_without_an_end_are_usage_errors(tmp_path):
    out = run_tool("--seed", "1", "--modules", "1", "--dlab", str(tmp_path / "nothing"))
    if shutil.which("wasm-opt"):
        assert out.returncode == 2 and "dlab not found" in out.stderr and "just build" in out.stderr
    out = run_tool("--seed", "1")
    assert out.returncode == 2 and "give --seconds, --modules or --only" in out.stderr


# ---------------------------------------------------------------------------------------------
# The rules, on values as binaryen prints them and dlab's probes say them.

def test_floats_agree_bit_for_bit_and_quiet_nans_as_any_quiet_nan():
    f32 = fw.ValType("f32", b"\x7d")
    f64 = fw.ValType("f64", b"\x7c")
    assert fd.value_agrees(f32, "0.10000000149011612", "f32:0x3dcccccd")
    assert fd.value_agrees(f32, "-0", "f32:0x80000000") and not fd.value_agrees(f32, "-0", "f32:0x0")
    assert fd.value_agrees(f32, "9.99994610111476e-41", "f32:0x116c2")
    assert fd.value_agrees(f64, "-inf", "f64:0xfff0000000000000")
    # binaryen's quiet NaN: any quiet NaN, any sign and payload; never a number or a signalling NaN.
    assert fd.value_agrees(f32, "-nan:0x400000", "f32:0x7fc00001")
    assert not fd.value_agrees(f32, "nan:0x400000", "f32:0x7f800001")
    assert not fd.value_agrees(f32, "nan:0x400000", "f32:0x3f800000")
    # A signalling NaN binaryen gives came through unchanged: its bits are exact.
    assert fd.value_agrees(f64, "-nan:0x1", "f64:0xfff0000000000001")
    assert not fd.value_agrees(f64, "-nan:0x1", "f64:0xfff8000000000001")


def test_integers_vectors_and_references():
    i32, i64 = fw.ValType("i32", b"\x7f"), fw.ValType("i64", b"\x7e")
    ref = fw.ValType("ref", b"\x6e", True, "any")
    v128 = fw.ValType("v128", b"\x7b")
    assert fd.value_agrees(i32, "-1", "i32:4294967295") and not fd.value_agrees(i32, "-1", "i32:1")
    assert fd.value_agrees(i64, "-9223372036854775808", "i64:9223372036854775808")
    assert fd.value_agrees(v128, "i32x4 0x00000001 0xffffffff 0x7fc00000 0x00000000",
                           "v128:0x000000007fc00001ffffffff00000001")
    # A lane that is a quiet NaN in both (as f32) may differ in payload; an integer lane may not.
    assert fd.value_agrees(v128, "i32x4 0x00000001 0x00000002 0x7fc00000 0x00000000",
                           "v128:0x00000000ffc0000000000002" + "00000001")
    assert not fd.value_agrees(v128, "i32x4 0x00000001 0x00000002 0x00000003 0x00000000",
                               "v128:0x00000000000000040000000200000001")
    # References: null or not, and an i31's value.
    assert fd.value_agrees(ref, "null", "ref.null") and not fd.value_agrees(ref, "null", "ref.struct")
    assert fd.value_agrees(ref, "object(null)", "ref.struct") and not fd.value_agrees(ref, "function", "ref.null")
    assert fd.value_agrees(ref, "i31ref(-5)", "ref.i31 2147483643")
    assert not fd.value_agrees(ref, "i31ref(5)", "ref.i31 6")


def test_log_entries_against_binaryens_lines():
    assert fd.log_agrees("-105 -1", ["i32:2", "i64:18446744073709551511", "i64:0"])
    assert not fd.log_agrees("-105 0", ["i32:2", "i64:18446744073709551511", "i64:0"])
    assert fd.log_agrees("externref(105)", ["i32:8", "i64:105", "i64:0"])
    assert fd.log_agrees("jserror", ["i32:8", "i64:2989", "i64:0"])
    assert fd.log_agrees("i31ref(-5)", ["i32:7", "i64:18446744073709551611", "i64:0"])
    assert fd.log_agrees("object(null)", ["i32:9", "i64:0", "i64:0"])
    assert not fd.log_agrees("function", ["i32:6", "i64:0", "i64:0"])
    # binaryen names its imported extern globals' references by their names.
    assert fw.extern_payload("__fuzz_import", "extern$") == 105


def test_binaryen_output_parsed_per_export():
    text = """[LoggingExternalInterface logging 7]
[fuzz-exec] export g
[LoggingExternalInterface logging -nan:0xfffffff934e6f]
[fuzz-exec] export f
[LoggingExternalInterface logging 1 0]
[fuzz-exec] note result: f => 1
2.5
i31ref(3)
[fuzz-exec] export t
[trap unreachable]
[fuzz-exec] export e
[exception thrown: imported-js-tag jserror]
[fuzz-exec] export v
"""
    runs = fd.parse_fuzz_exec(text)
    assert [r.name for r in runs] == [fw.START, "g", "f", "t", "e", "v"]
    assert runs[0].logs == ["7"]
    assert runs[1].logs == ["-nan:0xfffffff934e6f"]
    assert runs[2].logs == ["1 0"] and runs[2].outcome == ("return", ["1", "2.5", "i31ref(3)"])
    assert runs[3].outcome == ("trap", "unreachable")
    assert runs[4].outcome[0] == "exception"
    assert runs[5].outcome == () and runs[5].logs == []


def test_trap_kinds_compare_where_both_are_known():
    assert fd.trap_kind("i32.div_s by 0", 0) == fd.trap_kind("integer divide by zero", 1) == "divide"
    assert fd.trap_kind("truncUFloat of nan", 0) == fd.trap_kind("invalid conversion to integer", 1)
    assert fd.trap_kind("final > memory: 4294967209 > 1048554", 0) == fd.trap_kind("out of bounds memory access", 1)
    assert fd.trap_kind("null ref", 0) == fd.trap_kind("null i31 reference", 1)
    assert fd.trap_kind("cast error", 0) != fd.trap_kind("unreachable", 1)


def test_support_and_linker_modules_of_a_module_with_every_import(wat, dlab_bin, tmp_path):
    """A hand-written module importing all of binaryen's fuzzing host: the modules written for it
    validate in dlab, and its probes say what binaryen's host would (call-export's JavaScript rules,
    throw's two tags, table-get, sleep, the host references)."""
    if shutil.which("wasm-opt") is None:
        pytest.skip("wasm-opt not found: run ./tools/bootstrap")
    src = tmp_path / "host.wat"
    src.write_text(HOST_WAT)
    wasm = tmp_path / "host.wasm"
    subprocess.run(["wasm-opt", str(src), *fd.features(False), "-o", str(wasm)], check=True, capture_output=True)
    verdict = fd.check_module(wasm, [fd.Config("tail", "sp", "none", "check", "stack", "plain")], str(dlab_bin),
                              "wasm-opt", False)
    assert not isinstance(verdict, str), verdict
    assert verdict.findings == [], [f.detail for f in verdict.findings]
    assert verdict.calls == 6 and verdict.entries >= 20


HOST_WAT = """
(module
 (type $s (struct (field i32)))
 (import "fuzzing-support" "log-i32" (func $log (param i32)))
 (import "fuzzing-support" "log-f64" (func $logd (param f64)))
 (import "fuzzing-support" "log-i64" (func $logj (param i64)))
 (import "fuzzing-support" "log-v128" (func $logv (param v128)))
 (import "fuzzing-support" "log-externref" (func $loge (param externref)))
 (import "fuzzing-support" "log-anyref" (func $loga (param anyref)))
 (import "fuzzing-support" "log-funcref" (func $logfn (param funcref)))
 (import "fuzzing-support" "call-export-catch" (func $cec (param i32) (result i32)))
 (import "fuzzing-support" "call-ref-catch" (func $crc (param funcref) (result i32)))
 (import "fuzzing-support" "table-get" (func $tget (param i32) (result funcref)))
 (import "fuzzing-support" "throw" (func $throw (param i32)))
 (import "fuzzing-support" "sleep" (func $sleep (param i32 i32) (result i32)))
 (import "fuzzing-support" "wasmtag" (tag $wt (param i32)))
 (import "fuzzing-support" "jstag" (tag $jt (param externref)))
 (import "__fuzz_import" "extern$" (global $g (ref extern)))
 (table $t 3 funcref)
 (elem (table $t) (i32.const 0) func $ok $i64p)
 (global $gg (mut i32) (i32.const 7))
 (func $ok (export "ok") (param i32 f32 (ref null $s)) (call $log (i32.const 100)))
 (func $i64p (export "i64p") (param i64) (call $log (i32.const 101)))
 (func $v128r (export "v128r") (result v128) (call $log (i32.const 103)) (v128.const i32x4 1 2 3 4))
 (func $drv (export "drv")
   (call $log (call $cec (i32.const 0)))
   (call $log (call $cec (i32.const 1)))
   (call $log (call $cec (i32.const 2)))
   (call $log (call $cec (i32.const 1000)))
   (call $log (call $crc (ref.null func)))
   (call $log (call $crc (ref.func $ok)))
   (call $logfn (call $tget (i32.const 1)))
   (call $logfn (call $tget (i32.const 2)))
   (call $log (call $cec (i32.const 6)))
   (call $log (call $sleep (i32.const 10) (i32.const 42)))
   (call $loge (global.get $g))
   (call $loga (ref.i31 (i32.const -5)))
   (call $loge (extern.convert_any (struct.new $s (i32.const 1))))
   (call $logj (i64.const -2))
   (call $logd (f64.const 0.1))
   (call $logv (v128.const i32x4 1 -1 0x7fc00000 0))
   (call $log (block $b (result i32) (try_table (catch $wt $b) (call $throw (i32.const 9))) (i32.const -1)))
   (call $loge (block $b (result externref) (try_table (catch $jt $b) (call $throw (i32.const 0))) (ref.null extern))))
 (func (export "thr0") (call $throw (i32.const 0)))
 (func (export "multi") (result i32 f32 anyref funcref i64)
   (i32.const 1) (f32.const 2.5) (ref.i31 (i32.const 3)) (ref.func $ok) (i64.const -1))
 (export "table" (table $t))
 (export "gg" (global $gg))
)
"""


@needs_binaryen
def test_b_a_crash_in_one_configuration_is_a_finding(dlab_bin, tmp_path):
    fake = tmp_path / "dlab"
    fake.write_text(f"""#!/bin/bash
case " $* " in *" spec "*"--lowering plain "*) kill -SEGV $$;; esac
exec "{dlab_bin}" "$@"
""")
    fake.chmod(0o755)
    out = run_tool("--seed", "3", "--only", "1", "--reduce-seconds", "0", "--dlab", str(fake), "--out", str(tmp_path / "out"),
                   "--config", "tail/sp/none/check/stack/fold+fuse+super+acc+elide", "--config", "tail/sp/none/check/stack/plain")
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-2000:]
    assert "DISAGREEMENT (crash) in module 1 of seed 3" in out.stdout
    assert "tail/sp/none/check/stack/plain: dlab crashed (signal 11)" in out.stdout


# ---------------------------------------------------------------------------------------------
# Hostile inputs: bad numbers, a configuration dlab refuses, an unwritable --out, reproducer
# commands from another folder, SIGINT to the tool alone, terminal escapes from the tools.

def fake_wasm_opt(folder: Path, ttf: str = "exit 1") -> Path:
    """A wasm-opt on a PATH of its own: --version answers (with an escape sequence in it), the rest
    runs `ttf`."""
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / "wasm-opt"
    tool.write_text("#!/bin/bash\n"
                    "if [ \"$1\" = --version ]; then printf 'wasm-opt version 132 \\033]0;TITLE\\007\\033[2J\\n'; exit 0; fi\n"
                    f"{ttf}\n")
    tool.chmod(0o755)
    return folder


@pytest.mark.parametrize("bad", [["--seconds", "-5"], ["--seconds", "nan"], ["--modules", "-1"], ["--batch", "0"],
                                 ["--jobs", "0"], ["--reduce-seconds", "nan"], ["--progress-every", "-1"]])
def test_d_a_number_out_of_range_is_a_usage_error(dlab_bin, tmp_path, bad):
    # Before: --seconds -5 and --modules -1 compared nothing and said "no disagreement" (exit 0),
    # --seconds nan and --batch 0 never ended, --jobs 0 was a traceback.
    env = dict(os.environ, PATH=f"{fake_wasm_opt(tmp_path / 'bin')}:{os.environ['PATH']}")
    args = ["--seed", "1", "--dlab", str(dlab_bin), "--out", str(tmp_path / "out"), *bad]
    if bad[0] not in ("--seconds", "--modules"):
        args += ["--modules", "1"]
    out = run_tool(*args, env=env, timeout=30)
    assert out.returncode == 2, out.stdout + out.stderr
    assert bad[0] in out.stderr and "Traceback" not in out.stderr


def test_d_a_configuration_dlab_refuses_is_a_usage_error(dlab_bin, tmp_path):
    # Before: reported as a crash (exit 1, a reproducer) although nothing ran.
    env = dict(os.environ, PATH=f"{fake_wasm_opt(tmp_path / 'bin')}:{os.environ['PATH']}")
    out = run_tool("--seed", "1", "--only", "0", "--dlab", str(dlab_bin), "--out", str(tmp_path / "out"),
                   "--config", "nope/sp/none/check/stack/plain", env=env, timeout=60)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "fuzz_differential: error: --config nope/sp/none/check/stack/plain" in out.stderr
    assert "nope not in" in out.stderr and "DISAGREEMENT" not in out.stdout


def test_d_an_out_folder_that_cannot_be_made_is_a_usage_error(dlab_bin, tmp_path):
    # Before: a traceback (exit 1, a disagreement's status).
    env = dict(os.environ, PATH=f"{fake_wasm_opt(tmp_path / 'bin')}:{os.environ['PATH']}")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = run_tool("--seed", "1", "--only", "0", "--dlab", str(dlab_bin), "--out", str(blocker / "out"), env=env, timeout=60)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and str(blocker) in out.stderr


def test_d_terminal_escapes_from_the_tools_are_not_printed_and_nothing_compared_is_an_error(dlab_bin, tmp_path):
    # Before: wasm-opt's escape sequences reached the terminal, and a wasm-opt that made no module
    # gave "no disagreement", exit 0.
    ttf = "printf 'boom \\033[31mRED\\033]0;TITLE\\007\\n' >&2; exit 1"
    env = dict(os.environ, PATH=f"{fake_wasm_opt(tmp_path / 'bin', ttf)}:{os.environ['PATH']}")
    out = run_tool("--seed", "1", "--modules", "2", "--batch", "2", "--dlab", str(dlab_bin), "--out", str(tmp_path / "out"),
                   "--config", "tail/sp/none/check/stack/plain", env=env, timeout=60)
    assert "\x1b" not in out.stdout and "\x1b" not in out.stderr and "\x07" not in out.stdout + out.stderr
    assert "\\x1b" in out.stdout  # shown, escaped
    assert out.returncode == 2 and "no module was compared" in out.stderr


@needs_binaryen
def test_d_the_reproducers_commands_run_from_another_folder(dlab_bin, tmp_path):
    # `just fuzz` gives --dlab build/release/dlab (relative): the README's `(cd FOLDER && ... check
    # --dlab build/release/dlab)` found no dlab there; and a FOLDER with a space was not quoted.
    fake = tmp_path / "dlab"
    fake.write_text(f"""#!/bin/bash
case " $* " in *" spec "*"--verbose"*"--lowering plain "*) kill -SEGV $$;; esac
exec "{dlab_bin}" "$@"
""")
    fake.chmod(0o755)
    out = subprocess.run([sys.executable, str(TOOL), "--seed", "3", "--only", "1", "--reduce-seconds", "0", "--dlab", "./dlab",
                          "--out", "out dir", "--config", "tail/sp/none/check/stack/fold", "--config",
                          "tail/sp/none/check/stack/plain"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-2000:]
    readme = (tmp_path / "out dir" / "3-1" / "README.txt").read_text().splitlines()
    check = readme[readme.index(next(l for l in readme if l.startswith("check this module alone"))) + 1].strip()
    again = subprocess.run(["bash", "-c", check], capture_output=True, text=True, timeout=120, cwd="/")
    assert again.stdout.strip() == "DISAGREE", check + "\n" + again.stderr


@needs_binaryen
def test_d_sigint_to_the_tool_alone_stops_it_and_its_children_promptly(dlab_bin, tmp_path):
    # A SIGINT to the tool's process only (kill -INT, a supervisor): before, it waited for every
    # dlab run under way (up to 300 s each), which went on running.
    import signal
    import time
    started = tmp_path / "started"
    fake = tmp_path / "dlab"
    fake.write_text(f"""#!/bin/bash
case " $* " in *" --verbose "*) touch "{started}"; exec sleep 1000;; esac
exec "{dlab_bin}" "$@"
""")
    fake.chmod(0o755)

    def pre():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    proc = subprocess.Popen([sys.executable, str(TOOL), "--seed", "3", "--only", "0", "--reduce-seconds", "0", "--dlab", str(fake),
                             "--out", str(tmp_path / "out"), "--config", "tail/sp/none/check/stack/fold", "--config",
                             "tail/sp/none/check/stack/plain"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=pre, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert started.exists(), proc.communicate()
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < 30  # promptly: it waited up to 300 s per dlab before
        assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
        time.sleep(0.5)
        left = subprocess.run(["ps", "-o", "pid=,args=", "-g", str(proc.pid)], capture_output=True, text=True).stdout
        assert "sleep 1000" not in left, left
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
