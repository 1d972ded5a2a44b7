#include "bench_engine.h"

#include <chrono>

namespace dlab::bench {

std::unique_ptr<wasm::Runtime> bench_runtime(const wasm::EngineConfig& e) {
  auto rt = std::make_unique<wasm::Runtime>(e);
  if (wasm::budget_needs_timer(e.budget)) rt->set_deadline(std::chrono::hours(24));
  return rt;
}

std::map<std::string, std::string> engine_params(const wasm::EngineConfig& e, std::map<std::string, std::string> row) {
  for (auto& [key, value] : e.params()) row[key] = value;
  return row;
}

}  // namespace dlab::bench
