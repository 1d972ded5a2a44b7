// Where each argument of a signature arrives, for one target and calling convention, measured
// from the compiler's output by two independent methods:
//  1. machine IR after instruction selection (`-stop-after=finalize-isel`) of a function that
//     uses every argument: its live-in registers and fixed stack objects (incoming stack args);
//  2. the assembly of one function per argument that only returns it: the instruction that
//     writes the return register either reads memory (the argument came on the stack) or copies
//     a register (that register), or there is none (it arrived in the return register).
// Counting loads in a large function is not used: callee-saved restores and paired loads fool it.
#pragma once

#include <string>
#include <vector>

#include "dispatchlab/probes/signature.h"

namespace dlab::probes {

struct ArgLocation {
  ArgType type;
  bool in_register = false;
  // Passed by reference: the value is in the caller's memory, its address in a register (Windows
  // regcall beyond 16 float registers). Neither in a register nor in the incoming stack area.
  bool indirect = false;
  std::string where;  // register name, the stack operand, or the memory operand of an indirect arg
};

struct MirFrame {
  bool found = false;
  std::vector<std::string> liveins;  // physical registers, without '$'
  int fixed_stack_objects = 0;
};
MirFrame parse_mir_function(const std::string& mir, const std::string& name);

// Location of argument `type` in a function whose body is `instructions` and that returns it.
ArgLocation locate_returned_arg(const std::string& arch, ArgType type, const std::vector<std::string>& instructions);

struct ProbeResult {
  std::string triple, convention;
  Signature signature;
  std::string status;  // "ok", "ignored" (clang ignored the convention here), "error"
  std::string note;    // the warning, the compiler error, or the methods' disagreement
  std::vector<ArgLocation> args;
  MirFrame mir;
  bool methods_agree = false;

  int in_registers(bool floats) const;
  int of_kind(bool floats) const;
  int on_stack() const;
  int indirect() const;
  std::string register_list() const;  // "rdi rsi ... - -" in argument order, "-" = stack, "&rcx" = by reference
};

std::string probe_source(const Signature& sig, const std::string& convention_attribute);
ProbeResult probe(const std::string& triple, const std::string& convention, const Signature& sig);

}  // namespace dlab::probes
