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

struct IdealBound {
  std::optional<double> cycles_per_dispatch;
  // The same with every load ordered after every older store (llvm-mca -noalias=false): each
  // handler, repeated alone, carries its store-to-load round trips through memory. An upper bound
  // on what the memory dependences add (a handler's own slot is then a chain even where the
  // program interleaves copies whose slots differ); the measured time lies between the two where
  // mispredicts and flushes do not add to it.
  std::optional<double> ordered_cycles_per_dispatch;
  // From each handler's resource bound alone (llvm-mca's Block RThroughput): a lower bound.
  std::optional<double> resource_cycles_per_dispatch;
  std::string reason;  // why there is none
  size_t handlers = 0;  // distinct handlers the program dispatches to, each one llvm-mca region
};

// `mcpu`: llvm-mca's -mcpu (a CPU name, or native: the host as LLVM names it). Only where each
// handler is a function of its own (tail, tail_pn); the one-function modes have no per-handler
// code to give llvm-mca, and say so.
IdealBound ideal_bound(const ModelCase& c, const TracedBinary& binary, const std::string& mcpu);

}  // namespace dlab::models
