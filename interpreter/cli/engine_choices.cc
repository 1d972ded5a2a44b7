#include "engine_choices.h"

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/wasi.h"

namespace dlab::cli {

std::vector<std::string> dispatch_choices(bool with_all) {
  std::vector<std::string> out;
  if (with_all) out.push_back("all");
  for (auto d : wasm::dispatch_modes()) out.push_back(wasm::dispatch_name(d));
  return out;
}

std::vector<std::string> placement_choices(bool with_all) {
  std::vector<std::string> out;
  if (with_all) out.push_back("all");
  for (auto p : wasm::placements()) out.push_back(wasm::placement_name(p));
  return out;
}

std::vector<std::string> budget_choices() {
  std::vector<std::string> out;
  for (auto b : wasm::budgets()) out.push_back(wasm::budget_name(b));
  return out;
}

std::vector<std::string> lowering_choices() {
  std::vector<std::string> out;
  for (auto l : wasm::lowerings()) out.push_back(wasm::lowering_name(l));
  return out;
}

std::string default_lowering() { return wasm::lowering_name(wasm::Lowering{}); }

CLI::Validator clock_validator() {
  return CLI::Validator(
      [](std::string& t) {
        try {
          wasm::parse_clock(t);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "real|fixed:NS");
}

std::string join(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

}  // namespace dlab::cli
