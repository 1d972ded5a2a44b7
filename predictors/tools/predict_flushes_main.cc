// dlab-predict-flushes: simulated memory-order flushes of a lackey trace, per predictor of the
// table (predictor_table.cc), streamed: the trace is read once from a file or a pipe and never
// stored. Every number it prints is simulated, by the predictor and window it names.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

#include "dispatchlab/predictors/trace_simulation.h"

namespace {

uint64_t parse_hex(const std::string& text, const char* what) {
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw std::invalid_argument(fmt::format("{}: '{}' is not a hexadecimal address", what, text));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dlab::predictors;
  CLI::App app{"Simulated memory-order flushes of a valgrind lackey trace (valgrind --tool=lackey --trace-mem=yes), "
               "per memory-dependence predictor; CSV on stdout, one row per predictor and window"};
  std::string trace = "-", predictors = "all", pc_range;
  std::vector<uint32_t> windows{64};
  uint64_t dispatches = 0;
  bool list = false;
  app.add_option("trace", trace, "the lackey output (its --log-file), or - for stdin (a pipe: --log-fd)")->capture_default_str();
  app.add_option("--window", windows, "instructions after which a store is resolved (the model's one timing assumption), "
                                      "comma-separated for several at once")
      ->delimiter(',')->check(CLI::Range(1u, 1u << 20))->capture_default_str();
  app.add_option("--predictors", predictors, "predictors of the table, comma-separated, or all")->capture_default_str();
  app.add_option("--pc-range", pc_range, "LO-HI (hexadecimal): simulate only the loads and stores of instructions in [LO, HI), "
                                         "e.g. the handlers' code; every instruction still counts toward the window");
  app.add_option("--dispatches", dispatches, "dispatches the traced run made: adds flushes per 1,000 dispatches")->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  app.add_flag("--list", list, "print the predictor table and exit");
  CLI11_PARSE(app, argc, argv);
  try {
    if (list) {
      for (const auto& r : memory_dependence_predictors())
        fmt::print("{}\n  {}\n  configuration: {}\n  mechanism: {}\n  sizes: {}\n", r.name, r.what, r.make()->name(),
                   r.mechanism_source.empty() ? "-" : r.mechanism_source, r.sizes_source.empty() ? "-" : r.sizes_source);
      return 0;
    }
    uint64_t lo = 0, hi = UINT64_MAX;
    if (!pc_range.empty()) {
      size_t dash = pc_range.find('-');
      if (dash == std::string::npos) throw std::invalid_argument("--pc-range: expected LO-HI");
      lo = parse_hex(pc_range.substr(0, dash), "--pc-range");
      hi = parse_hex(pc_range.substr(dash + 1), "--pc-range");
      if (lo >= hi) throw std::invalid_argument("--pc-range: LO must be below HI");
    }
    PredictorSelection rows;
    rows.memory = select_predictors(predictors);
    TraceSimulation sim(rows, windows, {}, lo, hi);
    std::ifstream file;
    std::istream* in = &std::cin;
    if (trace != "-") {
      file.open(trace);
      if (!file) throw std::runtime_error(fmt::format("cannot open the trace '{}'", trace));
      in = &file;
    }
    std::ios::sync_with_stdio(false);
    LackeyTotals totals = sim.run(*in, trace == "-" ? "stdin" : trace);
    fmt::print("predictor,window,trace_instructions,loads,stores,aliasing_loads,simulated_flushes,false_dependences,dispatches,"
               "simulated_flushes_per_1k_dispatches,configuration\n");
    for (const auto& s : sim.memory()) {
      const MemoryOrderCounts& c = s.window->counts();
      std::string per_1k = dispatches ? fmt::format("{:.3f}", 1000.0 * static_cast<double>(c.flushes) / static_cast<double>(dispatches)) : "";
      fmt::print("{},{},{},{},{},{},{},{},{},{},\"{}\"\n", s.row->name, s.window->window(), totals.instructions, c.loads, c.stores,
                 c.aliasing_loads, c.flushes, c.waited_loads, dispatches ? std::to_string(dispatches) : "", per_1k, s.predictor->name());
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw std::runtime_error("writing the results to stdout failed");
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlab-predict-flushes: {}\n", dlab::escape_input(e.what()));
    return 1;
  }
}
