"""`dlab probes fit --engines all` of a cross-built dlab (DLAB_BIN, e.g. the AArch64 build under
qemu-user in `just test-aarch64`) says the same as the host's build (DLAB_NATIVE_BIN) for the same
target: the engines' handler signatures are read from each build's own handler types, so the two
agree only if the arm64 engines take the arguments the host predicts for aarch64-linux-gnu."""
import os
import subprocess

import pytest


def built_engines(dlab):
    """The tail-call engines this dlab has (`dlab wasm engines`; the ones `probes fit` reads): a build
    may leave some out (engines.def's BUILD column), and CI's host build has the compared ones while
    the cross build has not."""
    r = subprocess.run([dlab, "wasm", "engines"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[1:]]
    return {row[0] for row in rows if row[5:6] == ["built"] and row[1] in ("tail", "tail_pn")}


def fit(dlab, target, engines):
    r = subprocess.run([dlab, "probes", "fit", "--engines", ",".join(sorted(engines)), "--targets", target],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("target", ["aarch64-linux-gnu", "x86_64-linux-gnu"])
def test_a_cross_build_predicts_what_the_host_predicts(dlab_bin, target):
    native = os.environ.get("DLAB_NATIVE_BIN")
    if not native or os.path.realpath(native) == os.path.realpath(str(dlab_bin)):
        pytest.skip("needs DLAB_NATIVE_BIN, a host build to compare DLAB_BIN with (just test-aarch64 sets it)")
    both = built_engines(str(dlab_bin)) & built_engines(native)
    assert {"tail", "tail_pn", "tail_fuel"} <= both
    assert fit(str(dlab_bin), target, both) == fit(native, target, both)
