// The interpreter commands' choice lists (dispatch modes, stack placements, lowering sets), all
// from the runtime's registries (engines.def, lowerings.def): no command keeps a list of its own.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::cli {

// Every mode of engines.def ("all" first when asked): one this build lacks is refused with why
// when it is run, not as an unknown word.
std::vector<std::string> dispatch_choices(bool with_all = false);
std::vector<std::string> built_dispatch_modes();  // the modes this build has (what "all" means)
// The option to name when engine_unavailable(d, p, b) refuses: the mode when this build has none of
// its engines, else the placement, else the budget (or the bounds).
const char* unavailable_engine_option(wasm::Dispatch d, wasm::Placement p, wasm::Budget b);
std::vector<std::string> placement_choices(bool with_all = false);  // every placement
std::vector<std::string> budget_choices();                           // none, fuel, fuel_machine, deadline
std::vector<std::string> bounds_choices();                           // check, guard
// What the bounds choices mean (--bounds on run and spec, the list on bench).
std::string bounds_help();
CLI::Option* add_bounds_option(CLI::App* app, std::string& bounds);
std::vector<std::string> lowering_choices();                        // every technique set, "plain" first
std::string default_lowering();                                     // every technique: "fold+fuse+super"
std::vector<std::string> ir_choices();                              // stack, register
// --ir IR (run, profile, spec, bench): which IR the lowering writes (runtime.h's Ir).
CLI::Option* add_ir_option(CLI::App* app, std::string& ir);
// --clock's check: real or fixed:NS (wasm::parse_clock's rule and message).
CLI::Validator clock_validator();
// --heap-limit BYTES (run, bench): the GC heap's limit, 64 KiB to 1 TiB; 0 (the default) leaves
// it unlimited. Past it an allocation the collector cannot make room for traps "out of memory".
CLI::Option* add_heap_limit_option(CLI::App* app, uint64_t& bytes);
// "N collections, X ms in the collector, ..." for --gc-stats.
std::string gc_summary(const wasm::GcStats& s);
// "a, b, c" / "a,b,c".
std::string join(const std::vector<std::string>& names, const char* separator = ", ");

}  // namespace dlab::cli
