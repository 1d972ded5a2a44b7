// The ideal bound of a model case (issue 46, item 5): each handler's machine code through
// llvm-mca-19 (LLVM's scheduling model of one CPU: no mispredicts, no memory-order flushes, no
// cache misses, every load independent of every store), weighted by how often the case's program
// dispatches to it: ideal cycles per dispatch. An estimate, never a measurement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/models/case_simulation.h"
#include "dispatchlab/models/model_case.h"

namespace dlab::models {

// Iterations llvm-mca runs each handler's code for (its steady state: the first one's start-up is
// a hundredth of the count).
inline constexpr uint64_t kMcaIterations = 100;

struct IdealBound {
  std::optional<double> cycles_per_dispatch;
  // The same with every load ordered after every older store (llvm-mca -noalias=false): each
  // handler, repeated alone, carries its store-to-load round trips through memory. An upper bound
  // on what the memory dependences add (a handler's own slot is then a chain even where the
  // program interleaves copies whose slots differ); the measured time lies between the two where
  // mispredicts and flushes do not add to it.
  std::optional<double> ordered_cycles_per_dispatch;
  std::string reason;  // why there is none
  size_t handlers = 0;  // distinct handlers the program dispatches to, each one llvm-mca region
};

// `mcpu`: llvm-mca's -mcpu (a CPU name, or native: the host as LLVM names it). Only where each
// handler is a function of its own (tail, tail_pn); the one-function modes have no per-handler
// code to give llvm-mca, and say so.
IdealBound ideal_bound(const ModelCase& c, const TracedBinary& binary, const std::string& mcpu);

// objdump's instruction lines as assembly llvm-mca reads (AT&T): without objdump's "# ..."
// comments and "<symbol+offset>" annotations, alignment padding left out, a direct branch's bare
// hex target given its 0x.
std::string mca_assembly(const std::vector<predictors::ObjdumpLine>& lines);

// Why llvm-mca-19 refuses this -mcpu (its first line of error: an unknown CPU), or "" when it
// accepts it or cannot be run at all (then each case's bound says why it is missing).
std::string llvm_mca_refuses(const std::string& mcpu);

// The host CPU as llvm-mca-19 names it ("Host CPU:" of its --version), "" when it cannot tell.
std::string llvm_mca_host_cpu();

}  // namespace dlab::models
