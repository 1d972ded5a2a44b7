#include "dispatchlab/models/ideal_bound.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "dispatchlab/models/handler_name.h"
#include "dispatchlab/models/models.h"
#include "dispatchlab/predictors/llvm_mca.h"

namespace dlab::models {

IdealBound ideal_bound(const ModelCase& c, const TracedBinary& binary, const std::string& mcpu) {
  IdealBound out;
  if (!dispatch_mode(c.dispatch).handlers_are_functions()) {
    out.reason = fmt::format("{} dispatch puts every handler in one function: no handler's own code for llvm-mca", c.dispatch);
    return out;
  }
  const ModelEntry& entry = find_entry(c.model, c.placement, c.dispatch);
  std::map<std::string, predictors::CodeRange> code;
  for (const auto& f : binary.functions_in(binary.code_of(entry.symbol))) code.emplace(f.name, f.code);
  std::map<uint32_t, std::string> handler_of;
  for (const KindLayout& k : layout(c.model))
    for (uint32_t i = 0; i < k.copies; ++i) handler_of[k.first_op + i] = handler_name(k.kind, static_cast<int>(i));
  handler_of[exit_op(c.model)] = "h_exit";
  // The program's dynamic profile: each instruction is one dispatch to its handler.
  std::map<std::string, uint64_t> dispatches;
  for (const DlInst& in : c.program()) ++dispatches[handler_of.at(in.op)];
  // One objdump over the entry's code (one per handler took most of a stack case's time), its
  // lines then given to the handler whose code holds their address.
  std::istringstream disassembly(binary.disassembly(binary.code_of(entry.symbol)));
  const std::vector<predictors::ObjdumpLine> lines = predictors::read_objdump_lines(disassembly);
  std::vector<predictors::McaRegion> regions;
  for (const auto& [name, n] : dispatches) {
    auto it = code.find(name);
    if (it == code.end()) {
      out.reason = fmt::format("no function {} in {}'s code", name, entry.symbol);
      return out;
    }
    // objdump's lines are in address order (binary addresses; the ranges are the trace's).
    auto at = [&](uint64_t trace_address) {
      return std::lower_bound(lines.begin(), lines.end(), trace_address - binary.load_offset(),
                              [](const predictors::ObjdumpLine& l, uint64_t a) { return l.address < a; });
    };
    regions.push_back({name, predictors::mca_assembly(std::vector<predictors::ObjdumpLine>(at(it->second.lo), at(it->second.hi)))});
  }
  // Twice: as LLVM's scheduling model assumes by default (every load independent of every store),
  // then with -noalias=false (a load waits for every older store): a handler repeated alone then
  // carries its store-to-load round trips through memory, the term the first run cannot see.
  auto weighted_cycles = [&](bool loads_after_stores) -> std::optional<double> {
    predictors::McaCycles mca = predictors::mca_region_cycles(regions, mcpu, loads_after_stores);
    if (!mca.error.empty()) {
      out.reason = mca.error;
      return std::nullopt;
    }
    double total = 0, weighted = 0, resources = 0;
    for (const auto& [name, n] : dispatches) {
      total += static_cast<double>(n);
      weighted += static_cast<double>(n) * mca.per_iteration.at(name);
      resources += static_cast<double>(n) * mca.resource_bound.at(name);
    }
    if (!loads_after_stores) out.resource_cycles_per_dispatch = resources / total;
    return weighted / total;
  };
  out.cycles_per_dispatch = weighted_cycles(false);
  if (!out.cycles_per_dispatch) return out;
  out.ordered_cycles_per_dispatch = weighted_cycles(true);
  out.handlers = dispatches.size();
  return out;
}

}  // namespace dlab::models
