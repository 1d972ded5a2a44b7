// Where each handler's state lives in machine code: the models' stack-state placements (one copy
// per kind, models/generated/stack1_*) compiled for every target and calling convention, read
// per handler kind from the assembly.
#pragma once

#include <string>
#include <vector>

namespace dlab::probes {

struct HandlerPlacement {
  std::string placement, target, convention, kind;
  std::string status;  // "ok", "ignored", "error"
  std::string note;
  int instructions = 0;
  int callee_saved = 0;    // callee-saved registers the handler saves
  int stack_accesses = 0;  // instructions touching stack-pointer-relative memory (spills, stack args, saves)
  bool tail_jump = false;  // ends in a jump (dispatch is a tail call)
};

// Counts the callee-saved registers an instruction saves (push, stp/str of x19-x30 or d8-d15,
// sd/fsd of ra/s*/fs*) on the given architecture.
int callee_saved_in(const std::string& arch, const std::string& instruction);

// Analyses one compiled generated file (all kinds of one placement).
std::vector<HandlerPlacement> analyse_placement(const std::string& asm_text, const std::string& arch,
                                                const std::vector<std::string>& kinds);

// Compiles models/generated/stack1_<placement>_tail.cc for target and convention ("default" keeps
// the placement's own convention) and analyses it.
std::vector<HandlerPlacement> state_placement(const std::string& models_dir, const std::string& placement,
                                              const std::string& target, const std::string& convention,
                                              const std::vector<std::string>& kinds);

}  // namespace dlab::probes
