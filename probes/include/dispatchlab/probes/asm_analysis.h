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
// Indirect branches: x86-64 `jmp *` / `call *`; arm64 `br` / `blr` and their pointer-authenticated
// forms (braa, blraaz, ...); riscv64 `jr` / `jalr`.
bool is_indirect_jump(const std::string& arch, const std::string& instruction);
bool is_indirect_call(const std::string& arch, const std::string& instruction);
// The machine stack pointer's name ("rsp", "sp").
std::string stack_pointer(const std::string& arch);

// The operands of an instruction, split at top-level commas ("8(%rsp,%rax,8), %rdx" has two;
// arm64's "[x1, #-8]!" is one, post-indexed "[x1], #8" two).
std::vector<std::string> split_operands(const std::string& instruction);
// Every name of one general-purpose register, at every width, without AT&T's '%' ("rdi" or "edi"
// gives rdi edi di dil; arm64 "x3" or "w3" gives x3 w3; "x29" also fp, "x30" lr). Unknown names
// give themselves.
std::vector<std::string> register_names(const std::string& arch, const std::string& reg);
// Whether the instruction names the register at any width.
bool names_register(const std::string& arch, const std::string& instruction, const std::string& reg);

// A memory operand: x86-64 AT&T "off(%base,%index,scale)", arm64 "[base, #off]", "[base, #off]!"
// (pre-indexed), "[base], #imm" (post-indexed: the access is at base), "[base, xI, lsl #3]".
struct MemoryOperand {
  int position = 0;       // among the instruction's operands, from 0
  std::string base;       // without '%'; "" when there is none ("sym(,%rax,8)")
  std::string index;      // "" when there is none
  long offset = 0;        // the access's displacement from base (0 when post-indexed)
  bool symbolic = false;  // the displacement names a symbol (":lo12:sym", "sym(%rip)")
  bool writeback = false; // pre- or post-indexed: base is updated
};
std::vector<MemoryOperand> memory_operands(const std::string& arch, const std::string& instruction);
// arm64: whether the instruction loads from / stores to memory (ld* / st* with a memory operand),
// and how many bytes it moves (ldp x8, x9: 16; ldrb: 1); 0 when it is neither.
bool arm64_loads(const std::string& instruction);
bool arm64_stores(const std::string& instruction);
int arm64_access_bytes(const std::string& instruction);
// How many bytes the instruction moves the machine stack pointer down (push, `sub $N, %rsp`,
// `stp x29, x30, [sp, #-16]!`, `sub sp, sp, #N`: positive; pop, add, post-indexed loads: negative).
long stack_growth(const std::string& arch, const std::string& instruction);

// The architecture of a target triple: "x86_64", "aarch64" (arm64, arm64_32) or "riscv64".
std::string arch_of_triple(const std::string& triple);

// Problems found; empty when every handler is a proper tail-calling handler. Handlers are the
// functions whose name contains "h_"; the one containing "h_exit" must end in a return instead.
std::vector<std::string> check_tail_handlers(const std::string& text, const std::string& arch, int* handlers_seen = nullptr);

}  // namespace dlab::probes
