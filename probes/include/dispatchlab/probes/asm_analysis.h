// Reading compiler assembly (`clang -S`) for ELF (x86-64 AT&T, arm64, riscv64), Mach-O and COFF:
// split it into functions, and answer the questions the probes and the model checks ask of them.
#pragma once

#include <string>
#include <vector>

namespace dlab::probes {

struct AsmFunction {
  std::string name;                       // as in the file ("_probe_3" on Mach-O)
  std::vector<std::string> instructions;  // mnemonic and operands, comments stripped
};

// A function starts at a label that is not local (.L*, L*, l*) and ends at the next such label
// or at .Lfunc_end*/Lfunc_end*; directives are skipped.
std::vector<AsmFunction> parse_asm_functions(const std::string& text);
// The function named `name`, allowing Mach-O's leading underscore; nullptr when absent.
const AsmFunction* find_function(const std::vector<AsmFunction>& fns, const std::string& name);

std::string mnemonic(const std::string& instruction);
bool is_call(const std::string& arch, const std::string& mnemonic);
bool is_return(const std::string& arch, const std::string& mnemonic);
bool is_jump(const std::string& arch, const std::string& mnemonic);
// Whether the instruction reads or writes memory relative to the stack or frame pointer.
bool touches_stack(const std::string& arch, const std::string& instruction);
// The architecture of a target triple: "x86_64", "aarch64" (arm64, arm64_32) or "riscv64".
std::string arch_of_triple(const std::string& triple);

// Problems found; empty when every handler is a proper tail-calling handler. Handlers are the
// functions whose name contains "h_"; the one containing "h_exit" must end in a return instead.
std::vector<std::string> check_tail_handlers(const std::string& text, const std::string& arch, int* handlers_seen = nullptr);

}  // namespace dlab::probes
