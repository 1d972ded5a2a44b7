// dlab-predict-branches: simulated branch mispredicts of a lackey trace, per branch predictor of
// the table (branch_predictor_table.cc), streamed: the trace is read once from a file or a pipe and
// never stored. Lackey gives the executed instructions; a sites file says which are branches. Every
// number it prints is simulated, by the predictor it names.
#include <array>
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

int main(int argc, char** argv) {
  using namespace dlab::predictors;
  CLI::App app{"Simulated branch mispredicts of a valgrind lackey trace (valgrind --tool=lackey --trace-mem=yes), per branch "
               "predictor; CSV on stdout, one row per predictor"};
  std::string trace = "-", sites_file, predictors = "all";
  uint64_t dispatches = 0;
  bool list = false;
  app.add_option("trace", trace, "the lackey output (its --log-file), or - for stdin (a pipe: --log-fd)")->capture_default_str();
  app.add_option("--sites", sites_file, "the branch sites: 'PC KIND' a line, PC hexadecimal as the trace has it, KIND one of "
                                        "conditional, indirect_jump, indirect_call, return, direct");
  app.add_option("--predictors", predictors, "predictors of the table, comma-separated, or all")->capture_default_str();
  app.add_option("--dispatches", dispatches, "dispatches the traced run made: adds mispredicts per 1,000 dispatches")->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  app.add_flag("--list", list, "print the predictor table and exit");
  CLI11_PARSE(app, argc, argv);
  try {
    if (list) {
      for (const auto& r : branch_predictors()) {
        std::string configuration = r.make_indirect ? r.make_indirect()->name() : r.make_direction()->name();
        fmt::print("{} ({})\n  {}\n  configuration: {}\n  mechanism: {}\n  sizes: {}\n", r.name, r.make_indirect ? "indirect targets" : "conditional directions",
                   r.what, configuration, r.mechanism_source.empty() ? "-" : r.mechanism_source, r.sizes_source.empty() ? "-" : r.sizes_source);
      }
      return 0;
    }
    if (sites_file.empty()) throw std::invalid_argument("--sites is required: the trace does not say which instructions are branches");
    std::ifstream sites_in(sites_file);
    if (!sites_in) throw std::runtime_error(fmt::format("cannot open the sites file '{}'", sites_file));
    const BranchSites sites = read_branch_sites(sites_in, sites_file);
    if (sites.empty()) throw std::runtime_error(fmt::format("the sites file '{}' names no branch", sites_file));

    PredictorSelection rows;
    rows.branch = select_branch_predictors(predictors);
    TraceSimulation sim(rows, {}, sites);
    std::ifstream file;
    std::istream* in = &std::cin;
    if (trace != "-") {
      file.open(trace);
      if (!file) throw std::runtime_error(fmt::format("cannot open the trace '{}'", trace));
      in = &file;
    }
    std::ios::sync_with_stdio(false);
    LackeyTotals totals = sim.run(*in, trace == "-" ? "stdin" : trace);
    fmt::print("predictor,trace_instructions");
    for (int k = 0; k < kBranchKinds; ++k) fmt::print(",branches_{}", branch_kind_name(static_cast<BranchKind>(k)));
    fmt::print(",mispredicts_conditional,mispredicts_indirect_jump,mispredicts_indirect_call,dispatches,mispredicts_per_1k_dispatches,configuration\n");
    for (const auto& s : sim.branches()) {
      fmt::print("{},{}", s.row->name, totals.instructions);
      for (uint64_t n : sim.branch_counts()) fmt::print(",{}", n);
      uint64_t total = 0;
      for (auto kind : {BranchKind::kConditional, BranchKind::kIndirectJump, BranchKind::kIndirectCall}) {
        bool predicted = kind == BranchKind::kConditional ? s.direction != nullptr : s.indirect != nullptr;
        uint64_t n = s.mispredicts[static_cast<size_t>(kind)];
        total += n;
        fmt::print(",{}", predicted ? std::to_string(n) : "");
      }
      std::string per_1k = dispatches ? fmt::format("{:.3f}", 1000.0 * static_cast<double>(total) / static_cast<double>(dispatches)) : "";
      fmt::print(",{},{},\"{}\"\n", dispatches ? std::to_string(dispatches) : "", per_1k,
                 s.indirect ? s.indirect->name() : s.direction->name());
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw std::runtime_error("writing the results to stdout failed");
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlab-predict-branches: {}\n", dlab::escape_input(e.what()));
    return 1;
  }
}
