"""WebAssembly 3.0 exception handling at `dlab wasm run`'s boundary: an exception no handler
catches is reported with the name its tag is exported under and its payload, and a caught one is
an ordinary result. The semantics inside wasm are the spec suite's (ctest, every engine)."""
import subprocess

import pytest

# (module (type (func (param i32))) (type (func (param i32) (result i32)))
#   (tag $e (export "e") (type 0))
#   (func (export "throw_if") (type 1) (if (local.get 0) (then (throw $e (local.get 0)))) (i32.const 7)))
THROWER = bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
                 0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f,
                 0x03, 0x02, 0x01, 0x01,
                 0x0d, 0x03, 0x01, 0x00, 0x00,
                 0x07, 0x10, 0x02, 0x01, 0x65, 0x04, 0x00,
                 0x08, 0x74, 0x68, 0x72, 0x6f, 0x77, 0x5f, 0x69, 0x66, 0x00, 0x00,
                 0x0a, 0x0f, 0x01, 0x0d, 0x00, 0x20, 0x00, 0x04, 0x40, 0x20, 0x00, 0x08, 0x00, 0x0b, 0x41, 0x07, 0x0b])


@pytest.mark.parametrize("mode", ["switch", "tail", "tail_pn", pytest.param("goto", marks=pytest.mark.compared)])
def test_an_uncaught_exception_is_reported_with_its_tag_in_every_dispatch_mode(dlab_bin, tmp_path, mode):
    module = tmp_path / "thrower.wasm"
    module.write_bytes(THROWER)
    ok = subprocess.run([str(dlab_bin), "wasm", "run", "--dispatch", mode, "--invoke", "throw_if", str(module), "0"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout.strip() == "7", ok.stderr
    out = subprocess.run([str(dlab_bin), "wasm", "run", "--dispatch", mode, "--invoke", "throw_if", str(module), "5"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    assert 'uncaught exception of tag "e" (payload 0x5)' in out.stderr, out.stderr


def test_profile_reports_what_ran_before_an_uncaught_exception(dlab_bin, tmp_path):
    module = tmp_path / "thrower.wasm"
    module.write_bytes(THROWER)
    profile = tmp_path / "profile.json"
    out = subprocess.run([str(dlab_bin), "wasm", "profile", "--invoke", "throw_if", "--json", str(profile), str(module), "5"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and 'uncaught exception of tag "e" (payload 0x5)' in out.stderr, out.stderr
    import json
    counted = json.loads(profile.read_text())
    assert counted["ops"], counted  # the ops that ran before the throw, counted
