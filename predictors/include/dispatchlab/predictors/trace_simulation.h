#pragma once
// One pass of a lackey trace through predictors of both tables at once: the memory-dependence rows
// (each in a window of every size asked for) see the loads and stores of one code range, the branch
// rows see the branch events of the sites given, all reading one global history. It is what
// dlab-predict-flushes, dlab-predict-branches and `dlab models --predict` run; nothing is stored.
#include <array>
#include <cstdint>
#include <istream>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatchlab/predictors/branch_event.h"
#include "dispatchlab/predictors/branch_predictor_table.h"
#include "dispatchlab/predictors/global_history.h"
#include "dispatchlab/predictors/lackey_trace.h"
#include "dispatchlab/predictors/predictor_table.h"

namespace dlab::predictors {

// Rows of the two tables named in one comma-separated list ("all": every row of both); a name in
// neither table is std::invalid_argument naming both tables' rows.
struct PredictorSelection {
  std::vector<const PredictorRow*> memory;
  std::vector<const BranchPredictorRow*> branch;
};
PredictorSelection select_any_predictors(const std::string& list);

// What one simulated row counted, in the terms results use: `quantity` is memory_order_flushes,
// indirect_mispredicts (indirect jumps and calls) or conditional_mispredicts; `window` is the
// memory rows' (0 for a branch row); `configuration` the predictor's whole configuration.
struct SimulatedCount {
  std::string predictor;
  std::string quantity;
  uint32_t window = 0;
  uint64_t count = 0;
  std::string configuration;
};

// The code shifts of `n` load addresses (1 to 64; std::invalid_argument otherwise): 0, the trace's
// own, then whole pages spread over 1 GiB (ASLR moves a position-independent executable by whole
// pages), the same on every run.
std::vector<uint64_t> load_address_shifts(uint32_t n);

class TraceSimulation {
 public:
  struct MemorySimulation {
    const PredictorRow* row;
    std::unique_ptr<MemoryDependencePredictor> predictor;
    std::unique_ptr<MemoryOrderWindow> window;
  };
  struct BranchSimulation {
    const BranchPredictorRow* row;
    std::unique_ptr<IndirectPredictor> indirect;
    std::unique_ptr<DirectionPredictor> direction;
    std::array<uint64_t, kBranchKinds> mispredicts{};
  };

  // Memory rows only see accesses of instructions in [pc_lo, pc_hi) (every instruction still counts
  // toward the window); branch rows only the sites given. Branch rows with no sites are an error.
  // `code_shifts`: the branch rows run once per shift, each on the trace's branches with every
  // address moved by it (the binary loaded that much higher, as ASLR moves a position-independent
  // executable from run to run), each with its own global history: tables indexed by a hash of
  // the address meet other conflicts at each. The first shift's are the counts(); 0 is the trace's own.
  TraceSimulation(const PredictorSelection& rows, const std::vector<uint32_t>& windows, BranchSites sites,
                  uint64_t pc_lo = 0, uint64_t pc_hi = std::numeric_limits<uint64_t>::max(),
                  std::vector<uint64_t> code_shifts = {0});
  TraceSimulation(const TraceSimulation&) = delete;
  TraceSimulation& operator=(const TraceSimulation&) = delete;

  // Reads the whole trace (`source` names it in errors), then ends the branch stream. A trace in
  // which no memory row saw an access, or no branch row a branch, is a std::runtime_error: the
  // range or the sites miss the traced code (another binary, another load address).
  LackeyTotals run(std::istream& in, const std::string& source);

  // Asked before run(): counts() leave out the first `jumps` indirect jumps at the sites (dispatches
  // of a tail or switch engine) and everything before the next: the predictors' warm-up, as a timed
  // run's warm-up rounds are left out of its samples (a flush is counted at its load, so the
  // boundary is as sharp for the memory rows). run() is a std::runtime_error when no jump ran
  // after the warm-up. branch_counts() stay whole.
  void set_warmup(uint64_t jumps) { warmup_jumps_ = jumps; }
  bool warmed_up() const { return warmup_jumps_ == 0 || warm_; }

  // Asked before run(): how often each instruction of [pc_lo, pc_hi) ran (its trace address), for
  // the ideal bound's path through each function (llvm_mca.h's hot_path). Off by default: a map
  // update per traced instruction.
  void count_executions() { counting_executions_ = true; }
  const std::unordered_map<uint64_t, uint64_t>& executions() const { return executions_; }

  const std::vector<MemorySimulation>& memory() const { return memory_; }
  const std::vector<BranchSimulation>& branches() const { return layouts_.front()->branches; }
  // Branches met at the sites given, by kind (whether or not a branch row was asked for).
  const std::array<uint64_t, kBranchKinds>& branch_counts() const { return branch_counts_; }
  // Branches whose target fell in a sampled trace's gap (dlabtrace --sample): neither counted nor
  // predicted.
  uint64_t branches_dropped_at_gaps() const { return dropped_at_gaps_; }
  // One entry per memory row and window, then one per branch row (the first code shift's).
  std::vector<SimulatedCount> counts() const { return counts(0); }
  // The same at the code shift `layout` (an index into code_shifts; the memory rows' are the same in each).
  std::vector<SimulatedCount> counts(size_t layout) const;
  size_t layouts() const { return layouts_.size(); }

 private:
  void on_branch(const BranchEvent& b);
  std::vector<SimulatedCount> whole_counts(size_t layout) const;

  // The branch rows at one code shift, with the global history of the shifted addresses (held
  // through a pointer: the rows' folds refer to it).
  struct Layout {
    uint64_t shift = 0;
    GlobalHistory history{kPathBitsPerIndirect};
    std::vector<BranchSimulation> branches;
  };

  std::vector<MemorySimulation> memory_;
  std::vector<std::unique_ptr<Layout>> layouts_;
  BranchSites sites_;
  uint64_t dropped_at_gaps_ = 0;
  BranchEventStream stream_;
  std::array<uint64_t, kBranchKinds> branch_counts_{};
  uint64_t pc_lo_, pc_hi_;
  bool counting_executions_ = false;
  uint64_t warmup_jumps_ = 0;
  bool warm_ = false;
  std::vector<std::vector<SimulatedCount>> at_warm_;  // counts(layout) when the warm-up ended
  std::unordered_map<uint64_t, uint64_t> executions_;
};

}  // namespace dlab::predictors
