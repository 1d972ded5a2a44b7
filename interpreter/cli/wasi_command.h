// What `dlab wasm run` and `dlab-run` share when they run a WASI command: its --dir and --env
// values checked, the module read and
// checked with the file's name in every error, the engine run picks when no option names one, and
// the interpreter's ways of ending (an exit, a trap, an uncaught exception, a link error) turned
// into a process status or a one-line error. Free of CLI11 (and so of <iostream>): dlab-run
// links it, and an <iostream> in the program builds the C++ locale at every start-up.
#pragma once

#include <functional>
#include <string>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/wasi.h"

namespace dlab::cli {

// HOST[::GUEST] of --dir and --dir-rw (spelled as wasmtime spells them): HOST checked to be a
// folder; GUEST defaults to HOST as written. std::invalid_argument says what is wrong.
wasm::WasiPreopen parse_wasi_preopen(const std::string& spec, bool writable);
// "" when `entry` is KEY=VALUE (of --env), else why not.
std::string wasi_env_entry_error(const std::string& entry);

// The module in `file`, decoded and validated; std::runtime_error "FILE: malformed at byte N: ..."
// or "FILE: invalid: ..." otherwise (and "cannot read FILE: ..." for a file that is not one).
wasm::Module load_checked_module(const std::string& file);

// The engine `dlab wasm run` runs when no option names one, and the only one `dlab-run` has: tail_pn
// (tail where this build has no preserve_none), the sp placement, no budget, guard pages where the
// engine has them, every lowering technique and the register IR where the engine has it. Chosen on
// the corpus's selection program, measured on its held-out ones (docs/interpreter/register-ir.md).
wasm::EngineConfig default_run_engine();
wasm::Dispatch default_run_dispatch();
// The parts of that choice `dlab wasm run` makes for the dispatch mode, placement and budget its
// options name (default_run_engine composes them for its own): guard pages where that engine has
// them, else checked bounds; the register IR where it has it with those bounds, else the stack IR.
wasm::Bounds default_run_bounds(wasm::Dispatch d, wasm::Placement p, wasm::Budget b);
wasm::Ir default_run_ir(wasm::Dispatch d, wasm::Placement p, wasm::Budget b, wasm::Bounds bounds);
extern const char* const kDefaultRunEngineWhy;  // the choice in one clause, for --help

// Runs `body` (which instantiates and calls into `rt`) and returns the process status: 0 when it
// returns, the program's own status when it calls proc_exit (1, said on stderr, when that is outside
// 0..255: a process status has 8 bits). A trap, an uncaught wasm exception, a link error and an
// unsupported feature become std::runtime_error "FILE: trap: ...", etc.; `before_failure` runs first
// (dlab wasm profile writes what it counted). A wasm::Suspended is left to the caller, whose budget
// it is.
// `who` names the command in the one line said on stderr for an exit status outside 0..255.
int run_reporting_failures(const char* who, const std::string& file, const wasm::Runtime& rt, const std::function<void()>& body,
                           const std::function<void()>& before_failure = {});

}  // namespace dlab::cli
