#include "engine_simulation.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/predictors/llvm_mca.h"
#include "dispatchlab/predictors/traced_run.h"

namespace dlab::bench {
namespace {

namespace pr = predictors;

// An engine's code in the dlab binary: the local functions of its generated dispatch file
// (dispatch_<engine>.cc: the handlers of a tail engine, a switch or goto engine's helpers) and its
// entry dlab::wasm::run_<engine> (the switch or goto loop itself). Mangled: the entry's name with
// its length, up to its parameters.
pr::CodeRange engine_code(const pr::TracedBinary& binary, const std::string& engine) {
  const std::string entry = "run_" + engine;
  return binary.code_of_source("dispatch_" + engine + ".cc", fmt::format("_ZN4dlab4wasm{}{}E", entry.size(), entry));
}

struct CaseResult {
  // The counts at each load address, the trace's own first (every entry has the same rows in order).
  std::vector<std::vector<pr::SimulatedCount>> layouts;
  uint64_t dispatches = 0;  // indirect jumps executed in the engine's code
  uint64_t trace_instructions = 0;
  uint64_t indirect_calls = 0, conditionals = 0;
  pr::CodeRange code;
  size_t branch_sites = 0, dispatch_sites = 0;
  uint64_t dropped_at_gaps = 0;  // branches whose target fell in a sampled trace's gap
  pr::TracedIdealBound ideal;    // with EngineSimulationOptions::ideal
};

// A workload in one engine as `dlab wasm run --invoke` makes it: a quick size, one call, under a
// minute on a 2-vCPU Zen 5 guest; killed (with its process group) past this.
constexpr double kCaseTimeoutS = 1800;

CaseResult simulate(const SimulatedCase& c, const pr::TracedBinary& binary, const pr::PredictorSelection& rows,
                    const EngineSimulationOptions& options) {
  const uint32_t window = options.window, load_addresses = options.load_addresses;
  const pr::TraceSample sample = options.sample;
  CaseResult out;
  out.code = engine_code(binary, c.engine.engine_name());
  pr::BranchSites sites = binary.sites_in(out.code);  // always: the indirect jumps are the dispatches
  out.branch_sites = sites.size();
  for (const auto& [pc, kind] : sites) out.dispatch_sites += kind == pr::BranchKind::kIndirectJump;
  std::vector<uint32_t> windows;
  if (!rows.memory.empty()) windows.push_back(window);
  pr::TraceSimulation sim(rows, windows, std::move(sites), out.code.lo, out.code.hi, pr::load_address_shifts(load_addresses));
  // The ideal bound needs each handler's own code: a tail engine's (a function per handler).
  const bool handler_functions = wasm::dispatch_form(c.engine.dispatch) == wasm::DispatchForm::kHandlers;
  if (!options.ideal.mcpu.empty() && handler_functions) sim.count_executions();
  out.trace_instructions = pr::run_traced(c.argv, out.code, sim, kCaseTimeoutS, c.name, sample).trace_instructions;
  out.dropped_at_gaps = sim.branches_dropped_at_gaps();
  const auto& met = sim.branch_counts();
  out.dispatches = met[static_cast<size_t>(pr::BranchKind::kIndirectJump)];
  out.indirect_calls = met[static_cast<size_t>(pr::BranchKind::kIndirectCall)];
  out.conditionals = met[static_cast<size_t>(pr::BranchKind::kConditional)];
  if (out.dispatches == 0)
    throw std::runtime_error(fmt::format("{}: no indirect jump ran in the engine's code ({:x}-{:x}): no dispatch to count per", c.name,
                                         out.code.lo, out.code.hi));
  for (size_t i = 0; i < sim.layouts(); ++i) out.layouts.push_back(sim.counts(i));
  if (!options.ideal.mcpu.empty()) {
    if (handler_functions)
      out.ideal = pr::ideal_bound_of_trace(binary, out.code, sim.executions(), out.dispatches, options.ideal.mcpu);
    else
      out.ideal.reason = fmt::format("{} dispatch runs every handler in one loop function: no handler's own code for llvm-mca",
                                     wasm::dispatch_name(c.engine.dispatch));
  }
  return out;
}

}  // namespace

void check_engine_simulation(const EngineSimulationOptions& options) {
  (void)pr::load_address_shifts(options.load_addresses);
  pr::select_any_predictors(options.predictors);
  if (std::string why = pr::tracer_unavailable(); !why.empty()) throw std::runtime_error(why);
}

// How a case was traced, for the metrics' provenance and the sidecar.
std::string traced_how(const pr::TraceSample& sample) {
  std::string how = "on valgrind's trace (dlabtrace) of the engine's code (its dispatch file's functions and its run function) in "
                    "`dlab wasm run`; per dispatch = per indirect jump run in that code";
  if (sample.sampled())
    how += fmt::format("; SAMPLED: the first {} of every {} instructions of the process traced, the predictors' state and history "
                       "carried across the gaps (not warmed), a branch whose target fell in a gap dropped",
                       sample.on, sample.period);
  return how;
}

nlohmann::json run_simulated_cases(const std::vector<SimulatedCase>& cases, const EngineSimulationOptions& options,
                                   const std::optional<RunDirectory>& dir, const std::string& experiment) {
  const pr::PredictorSelection rows = pr::select_any_predictors(options.predictors);
  if (cases.empty()) throw std::invalid_argument("no case to simulate");
  const pr::TracedBinary binary(cases.front().argv.front());
  // Two cases at once where there is a second core: the counts are the trace's, whatever runs beside it.
  const size_t workers = std::max<size_t>(1, std::min<size_t>({2, std::max(1u, std::thread::hardware_concurrency()), cases.size()}));
  fmt::print(stderr, "[{}] {} cases under valgrind (dlabtrace), {} at a time; predictors: {}\n", options.progress, cases.size(), workers,
             options.predictors);
  std::vector<CaseResult> results(cases.size());
  std::mutex lock;
  size_t next = 0, done = 0;
  std::exception_ptr failure;
  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> g(lock);
        if (failure || next == cases.size()) return;
        i = next++;
      }
      try {
        CaseResult r = simulate(cases[i], binary, rows, options);
        std::lock_guard<std::mutex> g(lock);
        results[i] = std::move(r);
        fmt::print(stderr, "[{}] {}/{} {}: {} dispatches\n", options.progress, ++done, cases.size(), cases[i].name, results[i].dispatches);
      } catch (...) {
        std::lock_guard<std::mutex> g(lock);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);

  RunResult r = single_count_result("trace-simulation", "not pinned: simulated counts depend on the binary, not on the CPU that ran it");
  r.protocol.samples = r.rounds = static_cast<int>(options.load_addresses);  // a sample per load address
  const std::string how = traced_how(options.sample);
  r.metrics = pr::simulated_metrics(results.front().layouts.front(), how);
  const std::string& mcpu = options.ideal.mcpu;
  if (!mcpu.empty())
    for (auto& m : pr::ideal_bound_metrics(options.ideal, "the path each handler's function usually ran (its instructions the trace saw at "
                                                  "least half as often as its entry), weighted by its entries; a loop inside a "
                                                  "function counted once per entry"))
      r.metrics.push_back(std::move(m));
  std::vector<MeasuredCase> measured;
  std::FILE* table = options.table_on_stderr ? stderr : stdout;
  fmt::print(table, "{:<34} {:>11}", "case", "dispatches");
  for (const auto& sc : results.front().layouts.front())
    fmt::print(table, " {:>26}", fmt::format("{}[{}]", sc.quantity.substr(0, sc.quantity.find('_')), sc.predictor));
  fmt::print(table, "   (per 1,000 dispatches, SIMULATED{}{})\n", options.sample.sampled() ? ", SAMPLED" : "",
             options.load_addresses > 1 ? fmt::format("; median (min-max) over {} load addresses", options.load_addresses) : "");
  nlohmann::json out = {{"predictors", options.predictors}, {"window_instructions", options.window}, {"traced", how},
                        {"cases", nlohmann::json::array()}};
  if (options.sample.sampled()) out["sample"] = {{"on", options.sample.on}, {"period", options.sample.period}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& res = results[i];
    // A sample per load address: the summary's median and interval are over the layouts.
    CaseSamples vs{cases[i].name, {}};
    for (const auto& layout : res.layouts) {
      vs.samples.emplace_back();
      for (const auto& sc : layout) vs.samples.back().push_back({static_cast<double>(sc.count), "", 1.0, "dlabtrace trace"});
      if (!mcpu.empty())  // the same at every load address: llvm-mca sees the code, not where it is
        for (const auto& bound : {res.ideal.cycles_per_dispatch, res.ideal.ordered_cycles_per_dispatch, res.ideal.resource_cycles_per_dispatch}) {
          if (bound)
            vs.samples.back().push_back({*bound * static_cast<double>(res.dispatches), "", 1.0, "llvm-mca"});
          else
            vs.samples.back().push_back({std::nullopt, res.ideal.reason, 1.0, "llvm-mca"});
        }
    }
    fmt::print(table, "{:<34} {:>11}", cases[i].name, res.dispatches);
    nlohmann::json counts = nlohmann::json::array();
    for (size_t m = 0; m < res.layouts.front().size(); ++m) {
      const auto& sc = res.layouts.front()[m];
      auto per_1k = [&](uint64_t n) { return 1000.0 * static_cast<double>(n) / static_cast<double>(res.dispatches); };
      std::vector<double> at;
      for (const auto& layout : res.layouts) at.push_back(per_1k(layout[m].count));
      std::sort(at.begin(), at.end());
      const std::string lo = fmt::format("{:.2f}", at.front()), hi = fmt::format("{:.2f}", at.back());
      const size_t mid = at.size() / 2;
      const double median = at.size() % 2 ? at[mid] : (at[mid - 1] + at[mid]) / 2;  // as the summary's
      fmt::print(table, " {:>26}", lo == hi ? lo : fmt::format("{:.2f} ({}-{})", median, lo, hi));
      counts.push_back({{"metric", fmt::format("simulated_{}[{}]", sc.quantity, sc.predictor)}, {"count", sc.count},
                        {"per_1k_dispatches", per_1k(sc.count)}, {"configuration", sc.configuration}});
      if (at.size() > 1) counts.back()["per_1k_dispatches_over_load_addresses"] = at;
    }
    if (!mcpu.empty())
      fmt::print(table, "  ideal {} ordered {}", res.ideal.cycles_per_dispatch ? fmt::format("{:.2f}", *res.ideal.cycles_per_dispatch) : "-",
                 res.ideal.ordered_cycles_per_dispatch ? fmt::format("{:.2f}", *res.ideal.ordered_cycles_per_dispatch) : "-");
    fmt::print(table, "\n");
    r.cases.push_back(std::move(vs));
    auto params = cases[i].params;
    params["dispatches"] = std::to_string(res.dispatches);
    params["engine_code"] = fmt::format("{:x}-{:x}", res.code.lo, res.code.hi);
    params["branch_sites"] = std::to_string(res.branch_sites);
    params["indirect_jump_sites"] = std::to_string(res.dispatch_sites);
    params["indirect_calls"] = std::to_string(res.indirect_calls);
    params["conditional_branches"] = std::to_string(res.conditionals);
    params["trace_instructions"] = std::to_string(res.trace_instructions);
    if (options.load_addresses > 1) params["load_addresses"] = std::to_string(options.load_addresses);
    if (res.ideal.functions) {
      params["ideal_functions"] = std::to_string(res.ideal.functions);
      params["ideal_path_share"] = fmt::format("{:.3f}", res.ideal.path_share);
    }
    if (options.sample.sampled()) {
      params["sampled"] = fmt::format("{}/{}", options.sample.on, options.sample.period);
      params["branches_dropped_at_gaps"] = std::to_string(res.dropped_at_gaps);
    }
    out["cases"].push_back({{"case", cases[i].name}, {"params", params}, {"counts", counts}});
    if (!res.ideal.by_function.empty()) {
      nlohmann::json functions = nlohmann::json::array();
      for (const auto& f : res.ideal.by_function)
        functions.push_back({{"function", f.name}, {"entries", f.entries}, {"path_instructions", f.path_instructions},
                             {"cycles_per_entry", f.cycles_per_entry},
                             {"cycles_per_dispatch", static_cast<double>(f.entries) * f.cycles_per_entry / static_cast<double>(res.dispatches)}});
      out["cases"].back()["ideal_by_function"] = std::move(functions);
    }
    measured.push_back({cases[i].name, nullptr, static_cast<double>(res.dispatches), "dispatch", params});
  }
  if (!dir) return out;
  auto t = experiment_tables(dir->run_id(), experiment, r, measured, cli::this_machine());
  auto sidecar = sidecar_json(dir->run_id(), cli::this_machine(), &r, {"summary", "samples"});
  sidecar["simulation"] = {{"predictors", options.predictors}, {"window_instructions", options.window},
                           {"tracer", "valgrind --tool=dlabtrace (lackey's trace of the engine's code range; predictors/valgrind_tool)"},
                           {"binary", binary.path()},
                           {"dispatches", "indirect jumps run in the engine's code (every tail and goto handler ends in one; the switch loop has one)"},
                           {"note", "every metric is simulated (docs/predictors.md): counts of the predictor named in the metric, on the "
                                    "trace of the engine's code; the CPU that ran valgrind does not enter them"}};
  if (options.sample.sampled()) sidecar["simulation"]["sample"] = out["sample"];
  sidecar["simulation"]["code_shifts"] = pr::load_address_shifts(options.load_addresses);
  sidecar["simulation"]["ideal_mcpu"] = options.ideal.mcpu;
  sidecar["simulation"]["ideal_mcpu_why"] = options.ideal.why;
  // Where each case's ideal cycles go: its functions, most cycles first (the first 20).
  for (const auto& c : out["cases"])
    if (c.contains("ideal_by_function")) {
      const auto& all = c["ideal_by_function"];
      sidecar["simulation"]["ideal_by_function"][c["case"].get<std::string>()] =
          nlohmann::json(std::vector<nlohmann::json>(all.begin(), all.begin() + std::min<ptrdiff_t>(20, std::ssize(all))));
    }
  write_experiment(*dir, experiment, t, sidecar);
  fmt::print(stderr, "wrote {}/{}.summary.csv\n", dir->path().string(), experiment);
  return out;
}

}  // namespace dlab::bench
