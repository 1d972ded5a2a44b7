"""dlab wasm spec --modules-out (the fuzzer's seeds): every module of the suite's binary scripts
as a file, named by the script's path, so scripts of one name in two folders do not collide.

The suite is the one dlab was configured with (its default --suite: DLAB_WASM_TESTSUITE, else
../shared/wasm-spec-3.0, else .cache/wasm-spec-3.0; `tools/spec-suite locate`), in either layout:
../shared/wasm-spec-3.0 (scripts under binary/, so names start binary_) or a folder of converted
scripts (names start with the script's own path)."""
import re
import subprocess


def test_scripts_of_one_name_in_two_folders_get_their_own_files(dlab_bin, tmp_path):
    out = tmp_path / "corpus"
    run = subprocess.run([str(dlab_bin), "wasm", "spec", "--only", "memory_grow", "--modules-out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    names = sorted(p.name for p in out.iterdir())
    # <folders joined by _>memory_grow-<n>: the same script name in the suite's top folder and in multi-memory/
    prefixes = {m.group(1) for n in names if (m := re.match(r"^(.*?)memory_grow-", n))}
    top = {p for p in prefixes if "multi-memory" not in p}
    assert top, names[:5]
    assert any(p + "multi-memory_" in prefixes for p in top), sorted(prefixes)
    again = subprocess.run([str(dlab_bin), "wasm", "spec", "--only", "memory_grow", "--modules-out", str(out)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "is not an empty folder" in again.stderr
