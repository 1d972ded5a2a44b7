# dispatchlab tasks. `just` lists them; `./tools/bootstrap` installs what they need.
set shell := ["bash", "-euo", "pipefail", "-c"]

preset := env_var_or_default("DLAB_PRESET", "release")
build_dir := "build/" + preset
dlab := build_dir + "/dlab"
python := ".venv/bin/python"
# The recipes that publish numbers (rfc, models, flushes, pace) start their run directory with this:
# it refuses a source tree with uncommitted changes (a run from it could not be re-taken from any
# commit) unless DLAB_ALLOW_DIRTY=1, and then the run's name and every row's git_commit say dirty.
new_run := dlab + " new-run --results results" + if env_var_or_default("DLAB_ALLOW_DIRTY", "") == "1" { "" } else { " --require-clean" }

# list the recipes
default:
    @just --list --unsorted

# configure (once, and again whenever DLAB_WASM_TESTSUITE is set: the spec suite's folder) and build with a CMake preset: release (default) or asan
build:
    @[ -f {{build_dir}}/build.ninja ] && [ -z "${DLAB_WASM_TESTSUITE:-}" ] || cmake --preset {{preset}}
    cmake --build --preset {{preset}}

# every test: ctest (GoogleTest) and pytest, side by side; fails if either fails. Each phase's wall time goes to build/<preset>/test-phases.txt (tools/time_budget.py reports them)
test:
    #!/usr/bin/env bash
    set -uo pipefail
    now() { date +%s.%N; }
    since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
    phases={{build_dir}}/test-phases.txt
    t=$(now); just build || exit 1
    echo "build $(since "$t")" > "$phases"
    # Four pytest processes on any core count: the tests mostly wait (on dlab, clang, ssh and a
    # notebook kernel), so they overlap.
    parallel=()
    if {{python}} -c 'import xdist' 2>/dev/null; then parallel=(-n 4)
    else echo "(pytest-xdist is not installed: pytest runs in one process; ./tools/bootstrap installs it)"; fi
    # pytest runs beside ctest: alone, ctest keeps two cores busy (152 CPU-seconds in 79 s) while
    # pytest mostly waits (181 CPU-seconds in 153 s, its long pole the fleet test's SSH round trips);
    # side by side they took about 20 s less than one after the other (2-vCPU Zen 5 guest; the two
    # together are CPU-bound). pytest's output goes to a log, shown when it ends.
    # The folders are pytest.ini's testpaths: analysis (the analysis package's own tests),
    # interpreter/tests/cli and harness/tests/cli (dlab's command line); conftest.py has their fixtures.
    log={{build_dir}}/pytest.log
    t=$(now)
    set -m  # pytest in its own process group: Ctrl-C (the trap below) stops all of it
    ( t0=$(now); DLAB_BIN="$PWD/{{dlab}}" {{python}} -m pytest -q "${parallel[@]}" -m "not reference_interpreter" --junitxml={{build_dir}}/pytest-junit.xml > "$log" 2>&1
      rc=$?; echo "pytest $(since "$t0") within tests" > "$log.phase"; exit $rc ) &
    pytest_pid=$!
    set +m
    trap 'kill -- -$pytest_pid 2>/dev/null; exit 130' INT TERM
    echo "== pytest runs beside ctest (its output: $log, shown here when it ends)"
    # -LE reference_interpreter: the spec suite's conversion check builds the OCaml reference
    # interpreter on a new machine (about 2 min, cached after); `just build-compared` runs it.
    t0=$(now); ctest --preset {{preset}} -LE reference_interpreter; ctest_rc=$?
    ctest_s=$(since "$t0")
    kill -0 $pytest_pid 2>/dev/null && echo "== ctest done; waiting for pytest"
    wait $pytest_pid; pytest_rc=$?
    trap - INT TERM
    echo "== pytest"; cat "$log"
    { echo "tests $(since "$t")"; echo "ctest $ctest_s within tests"; cat "$log.phase" 2>/dev/null; } >> "$phases"
    echo "ctest exit $ctest_rc, pytest exit $pytest_rc (the time budget: tools/time_budget.py {{build_dir}})"
    [ "$ctest_rc" -eq 0 ] && [ "$pytest_rc" -eq 0 ]

# configure the build folder with the engines only the measurements compare (-DDLAB_COMPARED_ENGINES=ON: engines.def's COMPARED rows, goto among them, and the K-copy models in goto; the folder stays so), build them and run the spec suite in each, the models' checksums and the spec suite's conversion by the reference interpreter (ctest -L 'compared|reference_interpreter'); `just rfc`, `just models` and `just test-compared` start with it
build-compared:
    cmake --preset {{preset}} -DDLAB_COMPARED_ENGINES=ON > /dev/null
    cmake --build --preset {{preset}}
    ctest --preset {{preset}} -L 'compared|reference_interpreter'

# the tests of the engines a default build leaves out: `just build-compared`, then the command-line tests that need them and the reference interpreter's (pytest -m 'compared or reference_interpreter'; `just test` skips the first saying so and leaves out the second). CI runs it after `just test`
test-compared: build-compared
    DLAB_BIN="$PWD/{{dlab}}" {{python}} -m pytest -q -n 4 -m 'compared or reference_interpreter'

# the tests under ASan + UBSan
test-asan:
    DLAB_PRESET=asan just test

# Cross-built for AArch64 Linux (./tools/bootstrap aarch64 first): ctest and dlab's pytest files under qemu-user (emulated: never a measurement)
test-aarch64:
    #!/usr/bin/env bash
    set -uo pipefail
    command -v qemu-aarch64-static >/dev/null || { echo "no qemu-aarch64-static: run ./tools/bootstrap aarch64" >&2; exit 1; }
    [ -f build/aarch64/build.ninja ] && [ -z "${DLAB_WASM_TESTSUITE:-}" ] || cmake --preset aarch64 || exit 1
    cmake --build --preset aarch64 || exit 1
    ctest --preset aarch64 -E "$(grep -v -e '^#' -e '^$' tools/aarch64-ctest-exclude.txt | paste -sd '|')"; ctest_rc=$?
    # dlab as the tests start it: through qemu (no binfmt needed), beside its build's workloads.
    printf '#!/bin/sh\nexec qemu-aarch64-static -L / "%s/build/aarch64/dlab" "$@"\n' "$PWD" > build/aarch64/dlab-qemu
    chmod +x build/aarch64/dlab-qemu
    native=(); [ -x build/release/dlab ] && native=(DLAB_NATIVE_BIN="$PWD/build/release/dlab")
    env "${native[@]}" DLAB_BIN="$PWD/build/aarch64/dlab-qemu" {{python}} -m pytest -q -n 4 $(grep -v '^#' tools/aarch64-pytest.txt); pytest_rc=$?
    echo "aarch64 (emulated): ctest exit $ctest_rc, pytest exit $pytest_rc"
    [ "$ctest_rc" -eq 0 ] && [ "$pytest_rc" -eq 0 ]

# the main job (after `just build-compared`): fingerprint, counter availability, harness calibration, every experiment of tools/experiments.toml that rfc runs (quick sizes) and the report, in a new results/<cpu>/<run>/
rfc: build-compared
    #!/usr/bin/env bash
    set -euo pipefail
    run=$({{new_run}})
    echo "== run directory: $run"
    {{python}} -m dispatchlab_analysis.experiments rfc "$run" --dlab {{dlab}} --build-dir {{build_dir}}
    echo "== report"
    DLAB_BIN="$PWD/{{dlab}}" {{python}} -m dispatchlab_analysis.report "$run"

# the full model grid and the full interpreter benches (tools/experiments.toml's models steps), under the harness and under cachegrind, in a new run directory with its report; first builds and checks the models and engines a default build leaves out (-DDLAB_ALL_MODELS=ON -DDLAB_COMPARED_ENGINES=ON, kept in the build folder)
models:
    #!/usr/bin/env bash
    set -euo pipefail
    # The full grid's mode groups measure the stack machine's placements beyond sp in goto,
    # goto_nodup and switch, which a default build leaves out (DLAB_ALL_MODELS, models/CMakeLists.txt):
    # the build folder is configured to build them (and stays so), and they are checked before
    # anything is measured (every model's checksum in every mode, the asm checks).
    cmake --preset {{preset}} -DDLAB_ALL_MODELS=ON -DDLAB_COMPARED_ENGINES=ON > /dev/null
    cmake --build --preset {{preset}}
    ctest --preset {{preset}} -L 'models|compared'
    run=$({{new_run}})
    echo "== run directory: $run"
    {{python}} -m dispatchlab_analysis.experiments models "$run" --dlab {{dlab}} --build-dir {{build_dir}}
    DLAB_BIN="$PWD/{{dlab}}" {{python}} -m dispatchlab_analysis.report "$run"

# the pace table (docs/findings.md): the default engine of `dlab wasm run` against wasm3 (`just peers`) and the native build on the corpus (`just corpus`; lz4 and lua held out, sqlite the selection program) and the kernels, full sizes, 7 interleaved samples, and whole programs built by others (`just programs`) as processes in dlab-run and wasm3 with their start-up and peak memory (tools/experiments.toml's pace steps), in a new run directory with its report; refuses a dirty tree (DLAB_ALLOW_DIRTY=1 to run anyway)
pace: build peers corpus programs
    #!/usr/bin/env bash
    set -euo pipefail
    run=$({{new_run}})
    echo "== run directory: $run"
    {{python}} -m dispatchlab_analysis.experiments pace "$run" --dlab {{dlab}} --build-dir {{build_dir}}
    DLAB_BIN="$PWD/{{dlab}}" {{python}} -m dispatchlab_analysis.report "$run"

# print the steps of `just rfc`, `just models` or `just pace` (RECIPE), with their expected times, and run nothing
plan RECIPE="rfc":
    {{python}} -m dispatchlab_analysis.experiments {{RECIPE}} '$run' --dlab {{dlab}} --build-dir {{build_dir}} --dry-run

# figures and the executed overview notebook for a run directory (default: the newest run)
plots RUN="": build
    #!/usr/bin/env bash
    set -euo pipefail
    run="{{RUN}}"
    [ -n "$run" ] || run=$(ls -d results/*/*/ | grep -v '^results/probes' | sort -t/ -k3 | tail -n1)
    echo "== figures for $run"
    DLAB_BIN="$PWD/{{dlab}}" {{python}} -c "import sys; from pathlib import Path; from dispatchlab_analysis.results import load_run; from dispatchlab_analysis.figures import all_figures; run = load_run(sys.argv[1]); [print(p) for p in all_figures(run, run.path / 'figures', Path('results/probes/register_budget.csv'))]" "$run"
    echo "== notebooks"
    for nb in run_overview simulated; do
        DLAB_BIN="$PWD/{{dlab}}" DLAB_RUN="$PWD/$run" {{python}} -m nbconvert --to notebook --execute analysis/notebooks/$nb.ipynb --output-dir "$run/notebooks"
    done

# simulated memory-order flushes and branch mispredicts in a new run directory with its report and figures, every column simulated (docs/predictors.md): without ARGS the `flushes` steps of tools/experiments.toml (`dlab models --predict all`, 36 cases; `dlab wasm bench --predict all --predict-load-addresses 4` on the twelve kernels in switch, goto and tail, 36 cases; about 11 minutes on 2 cores); with ARGS, `dlab models --predict all ARGS` alone (e.g. --model kcopy --kinds p --copies 1,64 --orders random --dispatch switch,tail)
[positional-arguments]
flushes *ARGS: build-compared
    #!/usr/bin/env bash
    set -euo pipefail
    run=$({{new_run}})
    echo "== run directory: $run"
    if [ $# -eq 0 ]; then
        {{python}} -m dispatchlab_analysis.experiments flushes "$run" --dlab {{dlab}} --build-dir {{build_dir}}
    else
        DLAB_RECIPE=flushes DLAB_RECIPE_STEP=models_simulated {{dlab}} models --predict all "$@" --run-dir "$run"
    fi
    DLAB_BIN="$PWD/{{dlab}}" {{python}} -m dispatchlab_analysis.report "$run"

# fuzz the WebAssembly decoder, validator, instantiation and execution (under fuel) for SECONDS (default 60), seeded with the WebAssembly 3.0 suite's modules; `just fuzz SECONDS differential [--seed N ...]`: instead, random modules (binaryen's wasm-opt -ttf) in every engine configuration of the release build against binaryen's interpreter and each other, a disagreement reduced into build/fuzz-differential/ (tools/fuzz_differential.py)
[positional-arguments]
fuzz SECONDS="60" MODE="decoder" *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    # The arguments as the shell's own ($1 SECONDS, $2 MODE, then ARGS), each one intact: a folder
    # with a space stays one argument.
    seconds=$1 mode=$2; shift 2
    case "$mode" in
      decoder) [ $# -eq 0 ] || { echo "just fuzz: extra arguments are for the differential mode (just fuzz SECONDS differential ARGS)" >&2; exit 2; } ;;
      differential)
        just build  # the binary the modules run in is the current source's (a no-op when it is)
        exec {{python}} tools/fuzz_differential.py --seconds "$seconds" --dlab {{dlab}} "$@" ;;
      *) printf 'just fuzz: MODE is decoder (the default) or differential, not %q\n' "$mode" >&2; exit 2 ;;
    esac
    [ -f build/fuzz/build.ninja ] || cmake --preset fuzz
    cmake --build build/fuzz --target wasm_decode_fuzzer
    corpus=build/fuzz/corpus; mkdir -p "$corpus"
    if [ -z "$(ls -A "$corpus")" ]; then
      # every module of the WebAssembly 3.0 suite's binary scripts: the suite the release build
      # was configured with (`tools/spec-suite locate`), dlab's default --suite
      just build
      {{dlab}} wasm spec --modules-out "$corpus"
    fi
    mkdir -p build/fuzz/crashes
    build/fuzz/wasm_decode_fuzzer -max_total_time="$seconds" -artifact_prefix=build/fuzz/crashes/ "$corpus"

# the corpus of real programs (SQLite, LZ4, Lua from npm packages' C sources; interpreter/corpus/): fetch the sources (into ~/.cache/dispatchlab/corpus), then build corpus.wasm, corpus_cmd.wasm and libdlab_corpus_native.so into build/<preset>/interpreter/corpus/
corpus:
    ./tools/fetch-corpus
    @[ -f {{build_dir}}/build.ninja ] || cmake --preset {{preset}}
    cmake --build {{build_dir}} --target corpus

# whole WASI programs built by others with other toolchains (interpreter/programs/programs.json: Go's esbuild and pdfcpu, Rust's nitrogql, Flite, a Rust cowsay, the empty module), pinned npm packages fetched and checked, their inputs generated, into ~/.cache/dispatchlab/programs (DLAB_PROGRAMS_CACHE), for `dlab wasm programs` and `just pace`
programs:
    ./tools/fetch-programs

# the peer engine to beat, wasm3, into build/peers/wasm3/wasm3: built from ../shared/peers (pinned source, clang-19, seconds; and a build without -march=native for cachegrind in build/peers/wasm3-portable), or DLAB_WASM3=/path/to/wasm3 taken as it is; `just rfc` then times it beside dlab on the kernels
peers:
    #!/usr/bin/env bash
    set -euo pipefail
    out=build/peers/wasm3
    if [ -n "${DLAB_WASM3:-}" ]; then
      [ -x "$DLAB_WASM3" ] || { echo "DLAB_WASM3=$DLAB_WASM3 is not an executable file" >&2; exit 1; }
      mkdir -p "$out"; ln -sf "$(realpath "$DLAB_WASM3")" "$out/wasm3"
      echo "wasm3: $DLAB_WASM3 (taken as it is) -> $out/wasm3"
    elif [ -x ../shared/peers/build-wasm3 ]; then
      ../shared/peers/build-wasm3 "$out" >/dev/null
      echo "wasm3: built from ../shared/peers/wasm3 (commit $(sed -n 's/.*commit \([0-9a-f]\{40\}\).*/\1/p' ../shared/peers/README.md | head -n1)) -> $out/wasm3"
      # A second build without -march=native (wasm3's BUILD_NATIVE), for cachegrind: valgrind 3.19
      # cannot run AVX-512, which -march=native emits on CPUs that have it; dlab is built portable too.
      portable=build/peers/wasm3-portable
      cmake -S ../shared/peers/wasm3 -B "$portable" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_WASI=simple -DBUILD_NATIVE=OFF \
        -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 >/dev/null
      ninja -C "$portable" >/dev/null
      echo "wasm3 for cachegrind (no -march=native) -> $portable/wasm3"
    else
      echo "no ../shared/peers here and DLAB_WASM3 is not set: build wasm3 yourself (https://github.com/wasm3/wasm3 at commit" >&2
      echo "c9b579d8c048db71ce2322cf68a0d88ae81684d2: cmake -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_WASI=simple" >&2
      echo "-DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19, then ninja) and run DLAB_WASM3=/path/to/wasm3 just peers" >&2
      exit 1
    fi
    "$out/wasm3" --version | head -n1

# ABI register budget and the handlers' state placement for every target and convention, into results/probes
probes *ARGS: build
    {{dlab}} probes {{ARGS}}

# Google Benchmark view of every model entry (harness metrics as user counters); ARGS go to the benchmark binary
bench *ARGS: build
    {{build_dir}}/models_bench {{ARGS}}

# run a job (default `./tools/bootstrap && just rfc`) on every host of an Ansible INVENTORY over SSH and merge their runs into results/ (see README)
fleet INVENTORY *ARGS: build
    {{dlab}} fleet {{INVENTORY}} {{ARGS}}

# regenerate the committed generated files: models/generated and the generator's golden files from their specs, handlers.def's epilogue (the #undef of its macros) and the superinstructions (from the committed pair profile); a ctest fails for each while it is stale
generate: build
    {{build_dir}}/models/generate_models models/spec/handlers.json models/generated
    {{build_dir}}/models/generate_models models/tests/golden/tiny_spec.json models/tests/golden/expected
    cmake -DCXX=clang++-19 -DSRC=interpreter/src -DINCLUDE=interpreter/include -DOUT={{build_dir}}/handlers_epilogue -DMODE=write -P interpreter/src/engines/handlers_epilogue.cmake
    {{python}} tools/superinstructions.py generate --clang clang++-19

# print the machine fingerprint
machine: build
    {{dlab}} machine

# list every metric: backend, native event, available here or why not
counters: build
    {{dlab}} counters

# rewrite the generated schema block of results/README.md from `dlab schema`
schema-doc: build
    {{python}} -m dispatchlab_analysis.schema_doc results/README.md --dlab {{dlab}}

# rewrite the generated experiments table of docs/results-schema.md from tools/experiments.toml
experiments-doc:
    {{python}} -m dispatchlab_analysis.experiments_doc docs/results-schema.md

# remove build outputs (never results/)
clean:
    rm -rf build
