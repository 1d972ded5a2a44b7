// A model case's memory-order flushes and branch mispredicts, simulated (predictors/): the case run
// in dlab-model-exec under valgrind (dlabtrace, predictors/traced_run.h), its trace streamed (never
// stored) through the predictors asked for, restricted to the case's handlers (its entry's code,
// from the entry's symbol to the next global one). What `dlab models --predict` runs. amd64 Linux
// only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatchlab/models/model_case.h"
#include "dispatchlab/predictors/binary_code.h"
#include "dispatchlab/predictors/trace_simulation.h"
#include "dispatchlab/predictors/traced_run.h"

namespace dlab::models {

using predictors::TracedBinary;

struct CaseSimulation {
  // The counts at each load address asked for, the trace's own first (the same rows in each).
  std::vector<std::vector<predictors::SimulatedCount>> layouts;
  uint64_t dispatches = 0;          // as dlab-model-exec counted them in the traced run, less the warm-up's
  uint64_t trace_instructions = 0;  // the whole process's, start-up included
  predictors::CodeRange code;       // the handlers' code, trace addresses
  size_t branch_sites = 0;          // branch sites in it
};

// Runs the case `reps` times under valgrind (killed after `timeout_s`), the branch rows at each of
// `load_addresses` load addresses (predictors::load_address_shifts), the first
// `warmup_dispatches` dispatches left out of the counts (TraceSimulation::set_warmup: whole
// repetitions, as the timed runs' warm-up rounds). std::runtime_error naming the case when
// valgrind, the program or the trace fails.
CaseSimulation simulate_case(const ModelCase& c, const TracedBinary& binary, uint64_t reps, const predictors::PredictorSelection& rows,
                             uint32_t window, double timeout_s, uint32_t load_addresses = 1, uint64_t warmup_dispatches = 0);

}  // namespace dlab::models
