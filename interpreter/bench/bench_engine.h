// An engine as the bench's experiments run it (the workloads, the call path, cachegrind's cases):
// its configuration, the name its cases carry, its ratio's pair, the runtime it is timed in and
// the columns it writes into every row.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "dispatchlab/interpreter/engine_config.h"
#include "dispatchlab/interpreter/runtime.h"

namespace dlab::bench {

// An engine of a bench (the kernels, the call path, cachegrind's cases): its configuration, the
// suffix its cases are named by, and its ratio's pair.
struct BenchEngine {
  wasm::EngineConfig config;
  std::string name;      // "tail", "tail/vec" when several placements are compared, "tail/vec/plain" with lowerings...
  std::string baseline;  // with several budgets or bounds: the suffix of the same engine with the first built, its pair
};
// A runtime of `e` for timing: a budget that is counted but never reached (the bench measures what
// counting costs), so the deadline engine gets a deadline a day away and its epoch ticker runs
// as it would in use.
std::unique_ptr<wasm::Runtime> bench_runtime(const wasm::EngineConfig& e);
// A result row's params: the engine's columns (EngineConfig::params) and the row's own.
std::map<std::string, std::string> engine_params(const wasm::EngineConfig& e, std::map<std::string, std::string> row);

}  // namespace dlab::bench
