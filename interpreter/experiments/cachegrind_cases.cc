#include "cachegrind_cases.h"

#include <future>
#include <thread>

#include <fmt/format.h>

#include "../../harness/cli/commands.h"
#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/result_rows.h"

namespace dlab::cli {

void run_cachegrind_cases(const std::vector<CachegrindCase>& cases, const std::optional<RunDirectory>& dir, const std::string& experiment) {
  const auto& cat = MetricCatalog::builtin();
  RunResult r = cachegrind_result(cat);
  std::vector<Variant> variants;
  fmt::print("{:<32} {:>14} {:>12} {:>12} {:>12}   (per repetition, cachegrind, 2N vs N repetitions)\n", "case", "instructions",
             "loads", "stores", "mispredicts");
  nlohmann::json repetitions = nlohmann::json::object();
  const bool parallel = std::thread::hardware_concurrency() > 1;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CachegrindCase& c = cases[i];
    const uint64_t n = c.repetitions;
    repetitions[c.name] = {n, 2 * n};
    fmt::print(stderr, "[cachegrind] {}/{} {}\n", i + 1, cases.size(), c.name);
    // The case's two runs at once where there is a second core: their counts are the simulator's,
    // whatever runs beside them, so this only halves the wall time of every cachegrind experiment.
    // A failed run throws; std::async hands that exception to get(), in this thread.
    std::future<CachegrindCounts> twice =
        std::async(parallel ? std::launch::async : std::launch::deferred, [&] { return run_cachegrind(c.argv(2 * n)); });
    CachegrindCounts once = run_cachegrind(c.argv(n));
    auto diff = difference(twice.get(), once);
    VariantSamples vs{c.name, {cachegrind_values(cat, diff)}};
    auto col = [&](const char* metric) {
      for (size_t m = 0; m < r.metrics.size(); ++m)
        if (r.metrics[m].name == metric && vs.samples[0][m].value)
          return fmt::format("{:.4g}", *vs.samples[0][m].value / static_cast<double>(n));
      return std::string("-");
    };
    fmt::print("{:<32} {:>14} {:>12} {:>12} {:>12}\n", c.name, col("cg_instructions"), col("cg_loads"), col("cg_stores"),
               col("cg_mispredicts"));
    r.variants.push_back(std::move(vs));
    variants.push_back({c.name, nullptr, static_cast<double>(n), c.unit, c.params, c.baseline});
  }
  if (!dir) return;
  auto t = experiment_tables(dir->run_id(), experiment, r, variants, this_machine());
  auto sidecar = sidecar_json(dir->run_id(), this_machine(), &r, {"summary", "samples"});
  sidecar["valgrind_repetitions"] = repetitions;  // per case: N and 2N
  if (!cases.empty()) sidecar["valgrind_calls"] = {cases.front().repetitions, 2 * cases.front().repetitions};
  write_experiment(*dir, experiment, t, sidecar);
  fmt::print(stderr, "wrote {}/{}.summary.csv\n", dir->path().string(), experiment);
}

}  // namespace dlab::cli
