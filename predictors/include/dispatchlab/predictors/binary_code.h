#pragma once
// What a binary's own tools say about its code, for a trace of it: the branch sites objdump
// disassembles (lackey's trace does not say which instructions are branches) and the code range of
// one function from nm's symbols (to simulate only its loads and stores). Both read the tools'
// output as text, x86-64 AT&T syntax for objdump (`objdump -d --no-show-raw-insn`).
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "dispatchlab/predictors/branch_event.h"

namespace dlab::predictors {

// The instruction lines of `objdump -d --no-show-raw-insn` output ("  13adff:\tjmp    *%rax"): the
// address and the instruction text after the tab; every other line (headers, labels) skipped.
struct ObjdumpLine {
  uint64_t address = 0;
  std::string instruction;
};
std::vector<ObjdumpLine> read_objdump_lines(std::istream& in);

// The symbols of `nm -n --defined-only` output ("0000000000012340 T name"), in its order.
struct NmSymbol {
  uint64_t address = 0;
  char type = 0;
  std::string name;
};
std::vector<NmSymbol> read_nm_symbols(std::istream& in);

// Every branch of `objdump -d --no-show-raw-insn` output, its pc moved by `offset` (where the
// traced binary was loaded: valgrind puts a position-independent amd64 executable at 0x108000).
// Kinds: ret is a return; jmp and call are indirect with a '*' operand, else direct; any other j*
// and loop* is a conditional. Prefixes (bnd, notrack, rep, repz, cs, ds) are skipped.
BranchSites read_objdump_branch_sites(std::istream& in, uint64_t offset);

struct CodeRange {
  uint64_t lo = 0, hi = 0;  // [lo, hi)
};
// The code of global function `symbol` in `nm -n --defined-only` output: from its address to the
// next global text symbol's. std::runtime_error when the symbol is not there (naming `source`).
CodeRange symbol_code_range(std::istream& nm_output, const std::string& symbol, const std::string& source);

// The code of one source file's functions in a linked binary, from `readelf -sW` output of its
// .symtab: the FUNC symbols after the FILE entry `source_file` (its local functions: an engine's
// handlers), with the global function `global_symbol` (the engine's entry) beside them, from the
// lowest start to the highest end. `global_symbol` is a name, or the start of a C++ mangled name up
// to its parameters ("_ZN4dlab4wasm8run_tailE": any dlab::wasm::run_tail(...)).
// std::runtime_error naming `source` when the file or the symbol is not there, or when another
// function's code lies inside the range (the file's code is not one piece, and a range would take
// in code that is not its).
CodeRange elf_file_code_range(std::istream& readelf_output, const std::string& source_file, const std::string& global_symbol,
                              const std::string& source);

}  // namespace dlab::predictors
