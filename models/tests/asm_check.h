// Checks on compiler assembly output (`clang -S`, AT&T syntax on x86-64, GNU syntax on arm64):
// every tail-call handler ends in a jump and contains no call; only the exit handler returns.
#pragma once

#include <string>
#include <vector>

namespace dlab::models {

struct AsmFunction {
  std::string name;
  std::vector<std::string> instructions;  // mnemonics and operands, trimmed
};

std::vector<AsmFunction> parse_asm_functions(const std::string& text);

// Problems found; empty when every handler is a proper tail-calling handler. `arch` is
// "x86_64" or "aarch64". Handlers are the functions whose name contains "h_"; the one whose name
// contains "h_exit" must end in a return instead.
std::vector<std::string> check_tail_handlers(const std::string& text, const std::string& arch, int* handlers_seen = nullptr);

}  // namespace dlab::models
