#pragma once
// Valgrind lackey's memory trace (`valgrind --tool=lackey --trace-mem=yes`), read as a stream:
// "I  addr,size" an instruction, " L addr,size" a load, " S addr,size" a store and " M addr,size" a
// modify (a load and a store of one instruction), each data access belonging to the instruction
// before it. Lines of valgrind's own ("==pid== ...") are skipped. dlabtrace (traced_run.h) writes the
// same lines for its code range and "X count" for `count` instructions run outside it: they count
// toward the instructions (the memory-order window's clock), with no line of their own; and, in a
// sampled trace (dlabtrace --sample), "G count" for a gap of `count` untraced instructions, which
// count toward the instructions but advance the clock by at most `gap_clock` (read_lackey_trace):
// a gap's stores are all resolved, and a table cleared every N instructions is cleared every N
// traced ones, not once per gap. Nothing is stored: each access is handed on as it is read.
#include <cstdint>
#include <functional>
#include <istream>
#include <string>

#include "dispatchlab/predictors/memory_dependence.h"

namespace dlab::predictors {

struct LackeyTotals {
  uint64_t instructions = 0;  // every instruction the trace accounts for, gaps included
  uint64_t clock = 0;         // the accesses' instruction positions run to here (gaps shortened)
  uint64_t accesses = 0;
};

// Calls `on_access` for every load and store in order. A malformed line is a std::runtime_error
// naming `source` and its line number.
LackeyTotals read_lackey(std::istream& in, const std::string& source, const std::function<void(const MemoryAccess&)>& on_access);
// Calls `on_instruction` for every instruction ("I  addr,size") in order; the data accesses are
// checked as read_lackey checks them, and skipped. The branch simulation's source (branch_event.h).
LackeyTotals read_lackey_instructions(std::istream& in, const std::string& source, const std::function<void(uint64_t pc, uint32_t size)>& on_instruction);
// Both at once, in trace order: an instruction, then its data accesses; `on_gap` (when given) at
// each "X count" or "G count" line, where instructions ran untraced: outside the range, or in a
// sampled trace's gap (the instruction before it is then not followed by its successor). A "G" gap
// advances the accesses' clock by min(count, gap_clock) (0: by count).
LackeyTotals read_lackey_trace(std::istream& in, const std::string& source, const std::function<void(uint64_t pc, uint32_t size)>& on_instruction,
                               const std::function<void(const MemoryAccess&)>& on_access, const std::function<void()>& on_gap = {},
                               uint64_t gap_clock = 0);

}  // namespace dlab::predictors
