// The interpreter commands' choice lists (dispatch modes, stack placements, lowering sets), all
// from the runtime's registries (engines.def, lowerings.def): no command keeps a list of its own.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dlab::cli {

std::vector<std::string> dispatch_choices(bool with_all = false);   // this build's modes ("all" first when asked)
std::vector<std::string> placement_choices(bool with_all = false);  // every placement
std::vector<std::string> budget_choices();                           // none, fuel, fuel_machine, deadline
std::vector<std::string> lowering_choices();                        // every technique set, "plain" first
std::string default_lowering();                                     // every technique: "fold+fuse+super"
// --clock's check: real or fixed:NS (wasm::parse_clock's rule and message).
CLI::Validator clock_validator();
// "a, b, c" / "a,b,c".
std::string join(const std::vector<std::string>& names, const char* separator = ", ");

}  // namespace dlab::cli
