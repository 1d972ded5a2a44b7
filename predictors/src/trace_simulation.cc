#include "dispatchlab/predictors/trace_simulation.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/predictors/row_selection.h"

namespace dlab::predictors {

PredictorSelection select_any_predictors(const std::string& list) {
  PredictorSelection out;
  if (list == "all") {
    out.memory = select_predictors("all");
    out.branch = select_branch_predictors("all");
    return out;
  }
  for (const std::string& name : list_names(list)) {
    bool found = false;
    for (const auto& r : memory_dependence_predictors())
      if (r.name == name) out.memory.push_back(&r), found = true;
    for (const auto& r : branch_predictors())
      if (r.name == name) out.branch.push_back(&r), found = true;
    if (!found) {
      std::string memory, branch;
      for (const auto& r : memory_dependence_predictors()) memory += (memory.empty() ? "" : ", ") + r.name;
      for (const auto& r : branch_predictors()) branch += (branch.empty() ? "" : ", ") + r.name;
      throw std::invalid_argument(fmt::format("unknown predictor '{}' (memory dependence: {}; branch: {}; or all)", name, memory, branch));
    }
  }
  return out;
}

std::vector<uint64_t> load_address_shifts(uint32_t n) {
  if (n < 1 || n > 64) throw std::invalid_argument(fmt::format("load addresses: 1 to 64, not {}", n));
  std::vector<uint64_t> out;
  // A page multiple by a large odd step through 2^18 pages (1 GiB): distinct for every n <= 64.
  for (uint64_t i = 0; i < n; ++i) out.push_back(((i * 0x9e37u) % (uint64_t{1} << 18)) << 12);
  return out;
}

TraceSimulation::TraceSimulation(const PredictorSelection& rows, const std::vector<uint32_t>& windows, BranchSites sites,
                                 uint64_t pc_lo, uint64_t pc_hi, std::vector<uint64_t> code_shifts)
    : sites_(std::move(sites)), stream_(sites_, [this](const BranchEvent& b) { on_branch(b); }), pc_lo_(pc_lo), pc_hi_(pc_hi) {
  if (pc_lo >= pc_hi) throw std::invalid_argument("the code range is empty: its start must be below its end");
  if (!rows.memory.empty() && windows.empty()) throw std::invalid_argument("a memory-dependence predictor needs at least one window");
  if (!rows.branch.empty() && sites_.empty())
    throw std::invalid_argument("branch predictors need the branch sites: the trace does not say which instructions are branches");
  for (const PredictorRow* row : rows.memory)
    for (uint32_t w : windows) {
      MemorySimulation s{row, row->make(), nullptr};
      s.window = std::make_unique<MemoryOrderWindow>(*s.predictor, w);
      memory_.push_back(std::move(s));
    }
  if (code_shifts.empty()) throw std::invalid_argument("at least one code shift (0: the trace's own addresses)");
  for (uint64_t shift : code_shifts) {
    auto layout = std::make_unique<Layout>();
    layout->shift = shift;
    for (const BranchPredictorRow* row : rows.branch)
      layout->branches.push_back(
          {row, row->make_indirect ? row->make_indirect() : nullptr, row->make_direction ? row->make_direction() : nullptr, {}});
    layouts_.push_back(std::move(layout));
  }
}

void TraceSimulation::on_branch(const BranchEvent& event) {
  const auto k = static_cast<size_t>(event.kind);
  ++branch_counts_[k];
  // The warm-up is the first warmup_jumps_ jumps: the counts start at the next, before it is predicted.
  if (!warm_ && warmup_jumps_ && event.kind == BranchKind::kIndirectJump && branch_counts_[k] == warmup_jumps_ + 1) {
    for (size_t i = 0; i < layouts_.size(); ++i) at_warm_.push_back(whole_counts(i));
    warm_ = true;
  }
  for (auto& layout : layouts_) {
    BranchEvent b = event;
    b.pc += layout->shift;
    b.target += layout->shift;
    for (auto& s : layout->branches) {
      if (s.indirect && (b.kind == BranchKind::kIndirectJump || b.kind == BranchKind::kIndirectCall)) {
        if (s.indirect->predict(b.pc, layout->history) != b.target) ++s.mispredicts[k];
        s.indirect->update(b.pc, layout->history, b.target);
      } else if (s.direction && b.kind == BranchKind::kConditional) {
        if (s.direction->predict(b.pc, layout->history) != b.taken) ++s.mispredicts[k];
        s.direction->update(b.pc, layout->history, b.taken);
      }
    }
    layout->history.record(b);
  }
}

LackeyTotals TraceSimulation::run(std::istream& in, const std::string& source) {
  // Instructions go to the branch stream only when there are sites (for a branch row, or for the
  // counts of branch_counts()): the stream's map lookup per instruction is most of a memory-only
  // run's time otherwise.
  const bool branches = !sites_.empty();
  // A sampled trace's gap moves the memory rows' clock past every window (all its stores resolved)
  // and no further: their periodic clearing runs on traced instructions.
  uint64_t gap_clock = 1;
  for (const auto& s : memory_) gap_clock = std::max<uint64_t>(gap_clock, s.window->window() + 1);
  LackeyTotals totals = read_lackey_trace(
      in, source,
      [&](uint64_t pc, uint32_t size) {
        if (branches) stream_.instruction(pc, size);
        if (counting_executions_ && pc >= pc_lo_ && pc < pc_hi_) ++executions_[pc];
      },
      [&](const MemoryAccess& a) {
        if (a.pc < pc_lo_ || a.pc >= pc_hi_) return;
        for (auto& s : memory_) s.window->access(a);
      },
      [&] {
        if (branches) dropped_at_gaps_ += stream_.gap();
      },
      gap_clock);
  if (in.bad()) throw std::runtime_error(fmt::format("reading the trace '{}' failed", source));
  stream_.finish();  // a branch that was the trace's last instruction has no target: not counted
  if (!memory_.empty() && memory_.front().window->counts().loads + memory_.front().window->counts().stores == 0)
    throw std::runtime_error(pc_lo_ == 0 && pc_hi_ == std::numeric_limits<uint64_t>::max()
                                 ? fmt::format("the trace '{}' ({} instructions) has no load or store", source, totals.instructions)
                                 : fmt::format("no load or store of the trace '{}' ({} instructions) lies in the code range {:x}-{:x}: "
                                               "check the range against the traced binary's load address",
                                               source, totals.instructions, pc_lo_, pc_hi_));
  if (!warmed_up())
    throw std::runtime_error(fmt::format("the trace '{}' ran {} indirect jumps at the sites, none after the {} of its warm-up", source,
                                         branch_counts_[static_cast<size_t>(BranchKind::kIndirectJump)], warmup_jumps_));
  uint64_t seen = 0;
  for (uint64_t n : branch_counts_) seen += n;
  if (!layouts_.front()->branches.empty() && seen == 0)
    throw std::runtime_error(fmt::format("no instruction of the trace '{}' ({} instructions) is at one of the {} branch sites: "
                                         "check the sites against the traced binary's load address", source, totals.instructions, sites_.size()));
  return totals;
}

std::vector<SimulatedCount> TraceSimulation::counts(size_t layout) const {
  std::vector<SimulatedCount> out = whole_counts(layout);
  if (warm_ && warmup_jumps_)
    for (size_t i = 0; i < out.size(); ++i) out[i].count -= at_warm_.at(layout)[i].count;
  return out;
}

std::vector<SimulatedCount> TraceSimulation::whole_counts(size_t layout) const {
  std::vector<SimulatedCount> out;
  for (const auto& s : memory_)
    out.push_back({s.row->name, "memory_order_flushes", s.window->window(), s.window->counts().flushes, s.predictor->name()});
  for (const auto& s : layouts_.at(layout)->branches) {
    if (s.indirect)
      out.push_back({s.row->name, "indirect_mispredicts", 0,
                     s.mispredicts[static_cast<size_t>(BranchKind::kIndirectJump)] + s.mispredicts[static_cast<size_t>(BranchKind::kIndirectCall)],
                     s.indirect->name()});
    if (s.direction)
      out.push_back({s.row->name, "conditional_mispredicts", 0, s.mispredicts[static_cast<size_t>(BranchKind::kConditional)], s.direction->name()});
  }
  return out;
}

}  // namespace dlab::predictors
