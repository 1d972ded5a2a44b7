// A model case's memory-order flushes and branch mispredicts, simulated (predictors/): the case run
// in dlab-model-exec under valgrind's lackey, its trace streamed (never stored) through the
// predictors asked for, restricted to the case's handlers (its entry's code, from the entry's
// symbol to the next global one). What `dlab models --predict` runs. amd64 Linux only: the load
// address of a position-independent executable under valgrind is amd64's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatchlab/models/model_case.h"
#include "dispatchlab/predictors/binary_code.h"
#include "dispatchlab/predictors/trace_simulation.h"

namespace dlab::models {

// Where valgrind (3.x, amd64) loads a position-independent main executable: a pc in its trace is
// the binary's address plus this. Checked, not assumed: a case whose traced code range meets no
// load or store, or whose sites meet no branch, is an error (TraceSimulation::run).
inline constexpr uint64_t kValgrindPieLoadAddress = 0x108000;

// dlab-model-exec's symbols and branch sites (nm and objdump, from binutils), read once.
class TracedBinary {
 public:
  explicit TracedBinary(std::string exec);
  const std::string& path() const { return exec_; }
  uint64_t load_offset() const { return offset_; }  // a trace address minus the binary's
  // The entry's code in the trace's addresses, and the branch sites within it.
  predictors::CodeRange code_of(const std::string& symbol) const;
  predictors::BranchSites sites_in(predictors::CodeRange range) const;
  // objdump's disassembly of a range (trace addresses), and the functions whose code starts in it,
  // each to the next symbol: C++ names as their identifier (_ZL5h_u_3... is h_u_3).
  std::string disassembly(predictors::CodeRange range) const;
  struct Function {
    std::string name;
    predictors::CodeRange code;
  };
  std::vector<Function> functions_in(predictors::CodeRange range) const;

 private:
  std::string exec_;
  uint64_t offset_ = 0;   // trace address minus binary address
  std::string symbols_;  // nm -n --defined-only
};

struct CaseSimulation {
  std::vector<predictors::SimulatedCount> counts;
  uint64_t dispatches = 0;          // as dlab-model-exec counted them in the traced run
  uint64_t trace_instructions = 0;  // the whole process's, start-up included
  predictors::CodeRange code;       // the handlers' code, trace addresses
  size_t branch_sites = 0;          // branch sites in it
};

// Runs the case `reps` times under lackey (killed after `timeout_s`). std::runtime_error naming
// the case when valgrind, the program or the trace fails.
CaseSimulation simulate_case(const ModelCase& c, const TracedBinary& binary, uint64_t reps, const predictors::PredictorSelection& rows,
                             uint32_t window, double timeout_s);

}  // namespace dlab::models
