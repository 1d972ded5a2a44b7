"""Hostile command lines, table-driven: every bad option gets a clear one-line error naming what
is wrong, with exit status 2 for a wrong command line; a value outside an option's range says the
option, the value and the range, and an unknown name in a list is quoted escaped
(harness/cli/run_directory_options.cc's command_line_error, quote.h). Nothing hangs, crashes, or
writes a partial result; each case runs in well under a second. (The table's wasm bench rows are
the same rule for the interpreter's bench; its own refusals: interpreter/tests/cli/test_wasm_bench_refusals.py.)"""
import pytest

from dlab_cli import RAW_ONE_ERROR, run_dlab


# (arguments, exit status, text the error must contain)
USAGE_ERRORS = [
    (["calibrate", "--iterations", "0", "--no-save"], 2, "--iterations"),
    (["calibrate", "--iterations", "-1", "--no-save"], 2, "--iterations"),
    (["calibrate", "--iterations", "18446744073709551615", "--no-save"], 2, "--iterations"),
    (["calibrate", "--warmup", "-1", "--no-save"], 2, "--warmup"),
    (["calibrate", "--pin", "9999", "--no-save"], 2, "is not one this process may run on"),
    (["calibrate", "--results", ""], 2, "needs a directory"),
    (["new-run", "--results", ""], 2, "needs a directory"),
    (["models", "--dispatches", "-1", "--no-save"], 2, "--dispatches"),
    (["models", "--dispatches", "0", "--no-save"], 2, "--dispatches"),
    (["models", "--valgrind", "--valgrind-reps", "0", "--no-save"], 2, "--valgrind-reps"),
    (["models", "--copies", "abc", "--no-save"], 2, "'abc' is not an integer"),
    (["models", "--copies", "513", "--no-save"], 2, "--copies"),
    (["models", "--orders", "block8x", "--no-save"], 2, "block size must be a number"),
    (["models", "--dispatch", "tail,tail", "--model", "kcopy", "--no-save"], 2, "listed twice"),
    (["models", "--dispatch", "nope", "--model", "kcopy", "--no-save"], 2, "valid: tail, tail_pn, goto, goto_nodup, switch"),
    (["models", "--model", "stack", "--dispatch", "switch", "--no-save"], 2, "applies to the K-copy models"),
    (["models", "--model", "kcopy", "--statements", "64", "--no-save"], 2, "applies to the stack model"),
    (["models", "--model", "nope", "--no-save"], 2, "unknown 'nope'"),
    # sampling options that would do nothing are refused (issue 48, item 7)
    (["models", "--max-samples", "0", "--stop-half-width", "0.05", "--no-save"], 2, "--max-samples 0 takes exactly --samples"),
    (["models", "--max-samples", "3", "--no-save"], 2, "3 is not above --samples 11, its default"),
    (["models", "--quick", "--max-samples", "4", "--no-save"], 2, "4 is not above --samples 5, its default"),
    (["models", "--valgrind", "--max-samples", "20", "--no-save"], 2, "applies to the harness's rounds, not to --valgrind"),
    (["models", "--gbench", "--stop-half-width", "0.1", "--max-samples", "20", "--no-save"], 2, "not to --gbench"),
    (["models", "--placements", "foo", "--model", "stack", "--no-save"], 2, "unknown 'foo'"),
    # --predict: names from docs/predictors.md's two tables, a sweep of its own (issue 46, item 3)
    (["models", "--predict", "nope", "--no-save"], 2, "unknown predictor 'nope' (memory dependence: always_speculate,"),
    (["models", "--predict", "all", "--valgrind", "--no-save"], 2, "is a sweep of its own: not with --valgrind"),
    (["models", "--predict", "all", "--quick", "--no-save"], 2, "not with --quick"),
    (["models", "--predict-window", "32", "--no-save"], 2, "applies to --predict"),
    (["models", "--ideal-mcpu", "znver4", "--no-save"], 2, "applies to --predict"),
    (["models", "--predict", "store_sets", "--ideal-mcpu", "nope", "--no-save"], 2, "'nope' is not a recognized processor"),
    (["models", "--predict", "all", "--predict-window", "0", "--no-save"], 2, "--predict-window"),
    (["models", "--predict", "all", "--predict-dispatches", "0", "--no-save"], 2, "--predict-dispatches"),
    (["models", "--predict-warmup", "0", "--no-save"], 2, "applies to --predict"),
    (["models", "--predict", "store_sets", "--ideal-mcpu", "", "--no-save"], 2, "an empty CPU name"),
    (["models", "--predict", "all", "--predict-warmup", "-1", "--no-save"], 2, "--predict-warmup"),
    (["models", "--predict-load-addresses", "2", "--no-save"], 2, "applies to --predict"),
    (["models", "--predict", "all", "--predict-load-addresses", "0", "--no-save"], 2, "--predict-load-addresses"),
    (["wasm", "bench", "--predict", "nope", "--no-save"], 2, "unknown predictor 'nope' (memory dependence: always_speculate,"),
    # `wasm profile --predict`: the same names; its options only with it, checked before anything runs
    (["wasm", "profile", __file__, "--predict", "nope"], 2, "unknown predictor 'nope' (memory dependence: always_speculate,"),
    (["wasm", "profile", __file__, "--predict-window", "32"], 2, "--predict-window: applies only with --predict"),
    (["wasm", "profile", __file__, "--predict-sample", "1/10"], 2, "--predict-sample: applies only with --predict"),
    (["wasm", "profile", __file__, "--predict-load-addresses", "2"], 2, "--predict-load-addresses: applies only with --predict"),
    (["wasm", "profile", __file__, "--ideal-mcpu", "znver4"], 2, "--ideal-mcpu: applies only with --predict"),
    (["wasm", "bench", "--ideal-mcpu", "znver4", "--no-save"], 2, "--ideal-mcpu: applies only with --predict"),
    (["wasm", "bench", "--predict", "store_sets", "--workloads", "fib", "--ideal-mcpu", "nope", "--no-save"], 2, "'nope' is not a recognized processor"),
    (["wasm", "profile", __file__, "--predict", "btb_512x1", "--predict-sample", "10/10"], 2, "is not ON/PERIOD with 0 < ON < PERIOD"),
    (["wasm", "profile", __file__, "--predict", "btb_512x1", "--predict-sample", "x"], 2, "is not ON/PERIOD with 0 < ON < PERIOD"),
    (["wasm", "profile", __file__, "--predict", "btb_512x1", "--predict-sample", "5/-10"], 2, "is not ON/PERIOD with 0 < ON < PERIOD"),
    (["wasm", "profile", __file__, "--predict", "btb_512x1", "--predict-dispatch", "jit"], 2, "'jit' is not a dispatch mode"),
    (["wasm", "profile", __file__, "--predict", "btb_512x1", "--predict-dispatch", ","], 2, "--predict-dispatch: an empty list"),
    (["wasm", "profile", __file__, "--predict", "btb_512x1", "--predict-dispatch", "tail,tail"], 2, "'tail' listed twice"),
    (["wasm", "bench", "--predict", "all", "--valgrind", "--no-save"], 2, "--valgrind: does not apply with --predict"),
    (["wasm", "bench", "--predict", "all", "--quick", "--no-save"], 2, "--quick: does not apply with --predict"),
    (["wasm", "bench", "--predict-window", "32", "--no-save"], 2, "applies only with --predict"),
    (["wasm", "bench", "--predict", "all", "--predict-window", "0", "--no-save"], 2, "--predict-window"),
    (["wasm", "bench", "--predict-load-addresses", "4", "--no-save"], 2, "--predict-load-addresses: applies only with --predict"),
    (["wasm", "bench", "--predict", "all", "--predict-load-addresses", "65", "--no-save"], 2, "--predict-load-addresses"),
    (["probes", "--conventions", "foo", "--no-save"], 2, "unknown 'foo' (valid: default"),
    (["probes", "--placements", "foo", "--no-save"], 2, "unknown 'foo'"),
    (["probes", "--count", "0", "--no-save"], 2, "--count"),
    (["probes", "--count", "-1", "--no-save"], 2, "--count"),
    (["probes", "--count", "100000", "--no-save"], 2, "--count"),
    (["probes", "fit", "--args", ",".join(["u64"] * 5000)], 2, "at most 256"),
    (["wasm", "bench", "--workloads", "fib,foo", "--no-save"], 2, "unknown 'foo'"),
    (["wasm", "bench", "--dispatch", "tail,tail", "--no-save"], 2, "listed twice"),
    (["wasm", "bench", "--valgrind-calls", "9" * 300, "--no-save"], 2, "--valgrind-calls"),
    (["calibrate", "--samples", "9" * 300, "--no-save"], 2, "--samples"),
]


@pytest.mark.parametrize("args,status,text", USAGE_ERRORS, ids=[" ".join(a)[:60] for a, _, _ in USAGE_ERRORS])
def test_bad_options_get_a_clear_error_and_the_usage_status(dlab_bin, args, status, text):
    out = run_dlab(dlab_bin, args)
    assert out.returncode == status, (out.returncode, out.stderr[-500:])
    assert text in out.stderr, out.stderr[-500:]
    assert len(out.stderr.splitlines()) == 1, out.stderr[-500:]  # every error is one line (docs/errors.md)
    for raw in ("stoi", "stod", "basic_filebuf", "terminate called", "json.exception", "not in range", "Could not convert"):
        assert raw not in out.stderr


@pytest.mark.parametrize("args,text", [
    (["calibrate", "--samples", "abc", "--no-save"], "--samples: 'abc' is not an integer in 1..100000"),
    (["calibrate", "--warmup", "10001", "--no-save"], "--warmup: '10001' is not an integer in 0..10000"),
    (["calibrate", "--samples", "1e3", "--no-save"], "--samples: '1e3' is not an integer in 1..100000"),
    (["wasm", "bench", "--peer-timeout", "0", "--no-save"], "--peer-timeout: '0' is not a number in 1..86400"),
    (["fleet", __file__, "--forks", "0"], "--forks: '0' is not an integer in 1..1000"),
    (["knee", "--csv", "k.csv", "--seed", "abc"], "--seed: 'abc' is not a whole number (0 or more)"),
    (["calibrate", "--samples", "a\x1bb", "--no-save"], r"--samples: 'a\x1bb' is not an integer in 1..100000"),
])
def test_an_option_value_out_of_range_says_option_value_and_range(dlab_bin, args, text):
    out = run_dlab(dlab_bin, args)
    assert out.returncode == 2, out.stderr
    assert out.stderr == text + " (--help lists the options)\n", out.stderr  # one line, as every error
    for raw in RAW_ONE_ERROR:
        assert raw not in out.stderr, out.stderr


def test_an_unknown_name_in_an_option_is_quoted_escaped(dlab_bin):
    out = run_dlab(dlab_bin, ["wasm", "bench", "--workloads", "fib,f\x1bo", "--no-save"])
    assert out.returncode == 2, out.stderr
    assert r"unknown 'f\x1bo'" in out.stderr and "\x1b" not in out.stderr, out.stderr
