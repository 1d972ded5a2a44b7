#include "dispatchlab/models/case_simulation.h"

#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"
#include "dispatchlab/models/models.h"

namespace dlab::models {

CaseSimulation simulate_case(const ModelCase& c, const TracedBinary& binary, uint64_t reps, const predictors::PredictorSelection& rows,
                             uint32_t window, double timeout_s, uint32_t load_addresses, uint64_t warmup_dispatches) {
  const ModelEntry& entry = find_entry(c.model, c.placement, c.dispatch);
  CaseSimulation out;
  out.code = binary.code_of(entry.symbol);
  predictors::BranchSites sites;
  // The warm-up is counted in indirect jumps, one a dispatch in every mode (a mode that ran another
  // per repetition, on its way in, would end the warm-up that many dispatches early, and the count
  // below would be as many too large: a few in tens of thousands). The sites are needed for it.
  if (!rows.branch.empty() || warmup_dispatches) sites = binary.sites_in(out.code);
  out.branch_sites = sites.size();
  std::vector<uint32_t> windows;
  if (!rows.memory.empty()) windows.push_back(window);
  predictors::TraceSimulation sim(rows, windows, std::move(sites), out.code.lo, out.code.hi,
                                  predictors::load_address_shifts(load_addresses));
  sim.set_warmup(warmup_dispatches);

  std::vector<std::string> argv = {binary.path()};
  for (auto& a : c.exec_args()) argv.push_back(a);
  argv.insert(argv.end(), {"--reps", std::to_string(reps)});
  predictors::TracedRun r = predictors::run_traced(argv, out.code, sim, timeout_s, c.name());
  out.trace_instructions = r.trace_instructions;
  // "<case> checksum <hex> dispatches <n>": the last word.
  std::string last = r.output.substr(r.output.find_last_of(' ') == std::string::npos ? 0 : r.output.find_last_of(' ') + 1);
  while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
  try {
    size_t used = 0;
    out.dispatches = std::stoull(last, &used);
    if (used != last.size() || out.dispatches == 0) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("{}: dlab-model-exec printed no dispatch count: '{}'", c.name(), dlab::escape_input(r.output.substr(0, 200))));
  }
  if (out.dispatches <= warmup_dispatches)
    throw std::runtime_error(fmt::format("{}: {} dispatches traced, none after the warm-up's {}", c.name(), out.dispatches, warmup_dispatches));
  out.dispatches -= warmup_dispatches;
  for (size_t i = 0; i < sim.layouts(); ++i) out.layouts.push_back(sim.counts(i));
  return out;
}

}  // namespace dlab::models
