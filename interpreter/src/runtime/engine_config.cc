// EngineConfig: an engine as one value, named, checked, written into result rows and passed to
// child processes from the axes' own names (engines.def, lowerings.def), so no caller spells an
// engine out itself.
#include <fmt/format.h>

#include "dispatchlab/interpreter/engine_config.h"

namespace dlab::wasm {

std::string EngineConfig::engine_name() const { return wasm::engine_name(dispatch, placement, budget, bounds); }

std::string EngineConfig::name() const {
  std::string out;
  for (const auto& [key, value] : params()) out += (out.empty() ? "" : "/") + value;
  return out;
}

std::string EngineConfig::unavailable() const {
  if (std::string why = engine_unavailable(dispatch, placement, budget, bounds); !why.empty()) return why;
  return ir_unavailable(lowering.ir, dispatch, placement, budget, bounds);
}

std::vector<std::pair<std::string, std::string>> EngineConfig::params() const {
  return {{"dispatch", dispatch_name(dispatch)}, {"placement", placement_name(placement)}, {"budget", budget_name(budget)},
          {"bounds", bounds_name(bounds)},       {"lowering", lowering_name(lowering)},   {"ir", ir_name(lowering.ir)}};
}

std::vector<std::string> EngineConfig::argv() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : params()) {
    out.push_back("--" + key);
    out.push_back(value);
  }
  return out;
}

std::optional<EngineConfig> EngineConfig::parse(std::string_view dispatch, std::string_view placement, std::string_view budget,
                                                std::string_view bounds, std::string_view lowering, std::string_view ir,
                                                std::string* error) {
  auto fail = [&](const char* option, std::string_view value) -> std::optional<EngineConfig> {
    if (error) *error = fmt::format("--{}: '{}' is not one of its names", option, value);
    return std::nullopt;
  };
  EngineConfig c;
  auto d = parse_dispatch(dispatch);
  if (!d) return fail("dispatch", dispatch);
  auto p = parse_placement(placement);
  if (!p) return fail("placement", placement);
  auto b = parse_budget(budget);
  if (!b) return fail("budget", budget);
  auto x = parse_bounds(bounds);
  if (!x) return fail("bounds", bounds);
  auto l = parse_lowering(lowering);
  if (!l) return fail("lowering", lowering);
  auto i = parse_ir(ir);
  if (!i) return fail("ir", ir);
  c.dispatch = *d;
  c.placement = *p;
  c.budget = *b;
  c.bounds = *x;
  c.lowering = *l;
  c.lowering.ir = *i;
  return c;
}

std::string EngineConfig::handler_signature() const { return wasm::handler_signature(dispatch, placement, budget); }

}  // namespace dlab::wasm
