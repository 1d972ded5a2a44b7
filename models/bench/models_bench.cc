// Google Benchmark view of the models: one benchmark per generated entry at a representative
// size, with the harness's metrics as user counters per dispatch (Debian's Google Benchmark has
// no libpfm, so counters come from the harness Meter; unavailable metrics are simply absent and
// listed once on stderr). `dlab models --gbench` runs a grid's cases through it; for interleaved
// sweeps with confidence intervals in the result schema use `dlab models`.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/models/model_case.h"

namespace {

struct Harness {
  dlab::BackendSet backends = dlab::BackendSet::for_this_machine();
  dlab::CounterPlan plan = dlab::plan_counters(dlab::MetricCatalog::builtin(), backends, dlab::this_host_cpu());
  dlab::Meter meter{plan, backends};
  Harness() {
    for (const auto& m : meter.metrics())
      if (!m.availability.available) std::fprintf(stderr, "unavailable: %s: %s\n", m.name.c_str(), m.availability.reason.c_str());
  }
};

Harness& harness() {
  static Harness h;
  return h;
}

void run_case(benchmark::State& state, dlab::models::ModelCase c) {
  harness();  // calibrate the TSC and open the counters outside the timed loop
  dlab::models::ModelInstance inst(dlab::models::find_entry(c.model, c.placement, c.dispatch), c.program(), c.seed);
  const double dispatches = static_cast<double>(inst.dispatches_per_run());
  std::map<std::string, double> sums;
  for (auto _ : state) {
    auto values = harness().meter.measure([&] { inst.run(1); });
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i].value) sums[harness().meter.metrics()[i].name] += *values[i].value;
  }
  for (const auto& [name, total] : sums)
    state.counters[name + "/dispatch"] = benchmark::Counter(total / (dispatches * static_cast<double>(state.iterations())));
  state.counters["dispatches"] = benchmark::Counter(dispatches * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(c.params().at("convention"));
  benchmark::DoNotOptimize(inst.checksum());
}

// DLAB_BENCH_CASES (set by `dlab models --gbench`): one case per line, "model placement dispatch
// copies order seed length"; without it, every entry at representative sizes.
bool register_from_environment() {
  const char* env = std::getenv("DLAB_BENCH_CASES");
  if (!env) return false;
  std::istringstream lines(env);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    dlab::models::ModelCase c;
    std::string order;
    if (!(f >> c.model >> c.placement >> c.dispatch >> c.copies >> order >> c.seed >> c.length)) continue;
    c.order = dlab::models::Order::parse(order);
    benchmark::RegisterBenchmark(c.name().c_str(), run_case, c);
  }
  return true;
}

int register_all() {
  if (register_from_environment()) return 0;
  for (const auto& e : dlab::models::all_entries()) {
    std::vector<dlab::models::ModelCase> cases;
    if (e.model == "stack") {
      cases.push_back({e.model, e.placement, e.dispatch, 17, {}, 1, 0});
    } else {
      for (int k : {1, 32, 512})
        for (const char* order : {"cyclic", "random"})
          cases.push_back({e.model, e.placement, e.dispatch, k, dlab::models::Order::parse(order), 1, 0});
    }
    for (const auto& c : cases) benchmark::RegisterBenchmark(c.name().c_str(), run_case, c);
  }
  return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
