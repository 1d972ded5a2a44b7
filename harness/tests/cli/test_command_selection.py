"""dlab builds the options of the subcommand its command line names, and of no other (cli/commands.h's
command_selected: CLI11 builds its whole tree before parsing, a fifth of an empty module's start-up):
every listing and every named command still has all of what it had."""
import subprocess

from dlab_cli import TIMEOUT


def dlab(dlab_bin, *args):
    return subprocess.run([str(dlab_bin), *args], capture_output=True, text=True, timeout=TIMEOUT)


def test_the_top_listing_names_every_command(dlab_bin):
    out = dlab(dlab_bin, "--help").stdout
    for name in ("machine", "counters", "calibrate", "models", "probes", "wasm", "knee", "new-run", "fleet", "schema"):
        assert f"\n  {name} " in out, out


def test_a_listing_below_a_command_names_its_subcommands(dlab_bin):
    out = dlab(dlab_bin, "wasm", "--help").stdout
    for name in ("decode", "run", "profile", "bench", "engines", "spec"):
        assert f"\n  {name} " in out, out


def test_a_named_subcommand_has_its_options(dlab_bin):
    out = dlab(dlab_bin, "wasm", "bench", "--help").stdout
    assert "--suite" in out and "--peer" in out, out
    # named with a parent's option before it: still the subcommand's own help
    r = dlab(dlab_bin, "probes", "--targets", "x86_64-linux-gnu", "fit", "--help")
    assert r.returncode == 0 and "dlab probes fit [OPTIONS]" in r.stdout, r.stdout + r.stderr


def test_a_misspelt_subcommand_or_option_is_still_an_error(dlab_bin):
    r = dlab(dlab_bin, "wasm", "bnech")
    assert r.returncode == 2, r.stdout + r.stderr
    r = dlab(dlab_bin, "wasm", "bench", "--bogus")
    assert r.returncode == 2 and "--bogus" in r.stderr, r.stderr
