"""Files a user names (docs/errors.md, *Output files*; harness/src/files.cc): an input that is not a
regular file is refused, not read forever; an output is never a device replaced, a link's target
or an existing file (unless --force), and one in a missing folder or under a file names that
folder. Shown through `dlab wasm profile --json`, `dlab wasm decode|run` and `dlab knee`, which use
the one helper. Nothing here depends on this CPU, its counters or its speed."""
import os
import stat

import pytest

from dlab_cli import assert_clean, assert_one_error, run_dlab

ADD = '(module (func (export "f") (result i32) (i32.const 1)))'


# ---- inputs that are not regular files -------------------------------------------------------

@pytest.mark.parametrize("args,text", [
    (["wasm", "decode", "/dev/zero"], "cannot read /dev/zero: not a regular file"),
    (["knee", "--csv", "/dev/zero"], "cannot read /dev/zero: not a regular file"),
    (["wasm", "run", "/dev/zero"], "not a regular file"),
])
def test_a_device_is_refused_as_an_input_not_read_forever(dlab_bin, args, text):
    assert_clean(run_dlab(dlab_bin, args), 1, text)


# ---- outputs: never a device, a link's target or an existing file replaced -------------------

def test_profile_json_writes_into_dev_null_and_leaves_it_a_device(dlab_bin, wat):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", "/dev/null"])
    assert out.returncode == 0, out.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_profile_json_to_dev_full_fails_with_the_reason(dlab_bin, wat):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", "/dev/full"])
    assert_clean(out, 1, "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_profile_json_refuses_a_symlink_and_an_existing_file_unless_forced(dlab_bin, wat, tmp_path):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(link)])
    assert_clean(out, 1, "is a symbolic link")
    assert target.read_text() == "keep me\n" and link.is_symlink()
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(target)])
    assert_clean(out, 1, "exists: not replaced (give --force to replace it)")
    assert target.read_text() == "keep me\n"
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(target), "--force"])
    assert out.returncode == 0, out.stderr
    assert '"dispatches"' in target.read_text()


def test_profile_json_writes_into_dev_stdout_a_link_to_a_pipe(dlab_bin, wat, tmp_path):
    # /dev/stdout is a symbolic link (to /proc/self/fd/1): one to a stream is written into, as the
    # stream itself is; the link to a regular file above is still refused.
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", "/dev/stdout"])
    assert out.returncode == 0, out.stderr
    assert '"dispatches"' in out.stdout
    null_link = tmp_path / "to-null"
    null_link.symlink_to("/dev/null")
    out = run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", "--json", str(null_link)])
    assert out.returncode == 0 and null_link.is_symlink(), out.stderr


@pytest.mark.parametrize("args,text", [
    (["--force"], "--force: applies only with --json"),
    (["--json", ""], "--json: needs a file name"),
])
def test_profile_refuses_output_options_that_would_do_nothing(dlab_bin, wat, args, text):
    module = wat('(module (func (export "f") (result i32) (i32.const 1)))')
    assert_clean(run_dlab(dlab_bin, ["wasm", "profile", str(module), "--invoke", "f", *args]), 2, text)


# ---- output folders in messages --------------------------------------------------------------

def test_an_output_in_a_missing_directory_names_it(dlab_bin, tmp_path, wat):
    missing = tmp_path / "missing"
    out = run_dlab(dlab_bin, ["wasm", "profile", str(wat(ADD)), "--invoke", "f", "--json", str(missing / "x.json")])
    assert_one_error(out, 1, f"the directory {missing} does not exist (create it first)")
    assert not missing.exists()


def test_an_output_under_a_file_says_it_is_not_a_directory(dlab_bin, tmp_path, wat):
    (tmp_path / "file").write_text("")
    out = run_dlab(dlab_bin, ["wasm", "profile", str(wat(ADD)), "--invoke", "f", "--json", str(tmp_path / "file" / "x.json")])
    assert_one_error(out, 1, f"{tmp_path / 'file'} is not a directory")
