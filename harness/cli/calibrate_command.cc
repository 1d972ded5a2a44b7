// `dlab calibrate`: the harness measuring chains of dependent instructions (latency_chains.h)
// under the full protocol, so every machine's results start with numbers a reader can check. The
// TSC calibration used two of them (a multiply chain calibrates, a register-add chain cross-checks);
// the others it did not use: an add-immediate chain (1 cycle by the book, folded at rename by
// Golden Cove-family cores), a pointer chase (load-to-use latency) and store -> load -> add round
// trips through one word (the store-forwarding latency the `vec` stack variant pays per dispatch).
// Each chain's cycles per operation are set beside its known latency, so a surprise shows.
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <map>
#include <unistd.h>

#include <fmt/format.h>

#include "cli/commands.h"
#include "dispatchlab/harness/branch_penalty.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/latency_chains.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"

namespace dlab::cli {

namespace {

std::string chain_role(const CpuIdentity& id, std::string_view chain) {
  if (chain == id.primary_chain) return "calibrates";
  if (chain == id.cross_check_chain) return "cross-checks";
  return "check";
}

// What a chain's measured cycles per operation say against its latency.
std::string chain_verdict(const std::string& role, std::optional<double> latency, double cycles_per_op, bool estimated) {
  if (role == "calibrates" && estimated && latency)
    return fmt::format("{:+.1f}% from its latency: it calibrated the estimate at start-up, so this is how far the core "
                       "clock has moved since",
                       (cycles_per_op / *latency - 1) * 100);
  // A dependent operation takes at least a cycle unless the core removes it from the chain
  // (folding at rename, memory renaming), so below one cycle is a finding even without a latency.
  if (!latency)
    return cycles_per_op < 0.9 ? fmt::format("below one cycle per operation ({:.2f} ops per cycle): the core removes part of "
                                             "this chain from the critical path (folding, memory renaming)",
                                             1 / cycles_per_op)
                               : "no fixed latency to compare with";
  double r = cycles_per_op / *latency;
  if (r < 0.9)
    return fmt::format("FASTER than its {:g}-cycle latency ({:.2f} ops per cycle): the core shortcuts this chain", *latency,
                       1 / cycles_per_op);
  if (r > 1.1) return fmt::format("slower than its {:g}-cycle latency", *latency);
  return "as expected";
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate",
                                 "measure chains of dependent instructions (multiply, register add, immediate add, load, "
                                 "store-to-load round trip) under the run protocol, set each beside its known latency, time "
                                 "indirect calls to random against learnable targets (the penalty of a mispredicted dispatch), and "
                                 "write calibrate.summary.csv / .samples.csv / .json");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  struct Options {
    bool quick = false;
    bool no_save = false;
    RunProtocol protocol;
    uint64_t iterations = 200'000;
    RunDirectoryOptions out;
  };
  auto o = std::make_shared<Options>();
  cmd->add_flag("--quick", o->quick, "5 to 10 rounds (on while an interval is wider than 2%), 1 warm-up round");
  add_protocol_options(cmd, o->protocol);
  cmd->add_option("--iterations", o->iterations, fmt::format("loop iterations per run ({} operations each)", kChainOpsPerIteration))
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000'000}))
      ->capture_default_str();
  cmd->add_flag("--no-save", o->no_save, "print only, write no files");
  o->out.add_to(cmd, "results");
  cmd->callback([o, cmd] {
    if (o->quick) apply_quick_protocol(cmd, o->protocol);
    const auto& machine = this_machine();
    BackendSet backends = BackendSet::for_this_machine();
    CounterPlan plan = plan_counters(MetricCatalog::builtin(), backends, this_host_cpu());
    Meter meter(plan, backends);
    uint64_t n = o->iterations;
    double ops = static_cast<double>(n) * kChainOpsPerIteration;
    const CpuIdentity& id = machine.identity;
    std::vector<MeasuredCase> cases;
    std::vector<std::optional<double>> latencies;
    std::vector<std::string> roles;
    for (const auto& info : latency_chains()) {
      auto it = id.chain_latency.find(std::string(info.name));
      std::optional<double> latency;
      if (it != id.chain_latency.end()) latency = it->second;
      latencies.push_back(latency);
      roles.push_back(chain_role(id, info.name));
      LatencyChain chain = info.chain;
      cases.push_back({std::string(info.name), [chain, n] { run_latency_chain(chain, n); }, ops, "op",
                          {{"instruction", std::string(info.instruction)},
                           {"role", roles.back()},
                           {"latency_cycles", latency ? fmt::format("{:g}", *latency) : ""},
                           {"ops_per_iteration", std::to_string(kChainOpsPerIteration)},
                           {"iterations", std::to_string(n)}}});
    }
    // The mispredict penalty's two loops (branch_penalty.h): the same indirect calls, their targets
    // in a learnable pattern and at random; the random one's ratio is paired with the pattern's.
    const uint64_t calls = n * kChainOpsPerIteration;
    [[maybe_unused]] static volatile uint64_t sink;  // the calls' result is used: nothing optimised away
    for (TargetOrder order : {TargetOrder::pattern, TargetOrder::random}) {
      auto sequence = std::make_shared<const std::vector<uint8_t>>(target_sequence(order));
      bool random = order == TargetOrder::random;
      cases.push_back({random ? "indirect_random" : "indirect_pattern", [sequence, calls] { sink = run_indirect_calls(*sequence, calls); },
                          static_cast<double>(calls), "call",
                          {{"instruction", fmt::format("call through a table of {} functions", kTargets)},
                           {"role", "penalty"},
                           {"targets", std::to_string(kTargets)},
                           {"target_order", random ? fmt::format("uniform random among {} (xorshift64, fixed seed)", kTargets)
                                                   : fmt::format("cycle of {}", kPatternPeriod)},
                           {"sequence_length", std::to_string(kSequenceLength)},
                           {"iterations", std::to_string(n)}},
                          random ? "indirect_pattern" : ""});
    }
    bool tty = isatty(fileno(stderr));
    auto progress = [tty](int done, int total, const std::string& v) {
      if (tty) fmt::print(stderr, "\r[calibrate] sample {}/{} {:<20}", done, total, v);
      else if (done == total || done % 10 == 0) fmt::print(stderr, "[calibrate] sample {}/{}\n", done, total);
    };
    // Where the results go is settled before measuring, so no measurement is thrown away.
    std::optional<RunDirectory> dir;
    if (!o->no_save) dir = o->out.resolve(machine, experiment_files("calibrate"));
    RunResult result = run_protocol(o->protocol, meter, cases, progress);
    if (tty) fmt::print(stderr, "\n");
    std::string run_id = dir ? dir->run_id() : "unsaved";
    ExperimentTables t = experiment_tables(run_id, "calibrate", result, cases, machine);
    std::map<std::string, std::string> unavailable;
    fmt::print("{:<18} {:<22} {:>12} {:>25} {:>8}  {}\n", "VARIANT", "METRIC", "MEDIAN", "95% CI", "RATIO", "NOTE");
    for (size_t r = 0; r < t.summary.size(); ++r) {
      std::string median = t.summary.at(r, "median");
      if (median.empty()) {
        unavailable.emplace(t.summary.at(r, "metric"), t.summary.at(r, "unavailable_reason"));
        continue;
      }
      auto num = [&](const char* c) { return t.summary.at(r, c).empty() ? std::string("-") : fmt::format("{:.4g}", std::stod(t.summary.at(r, c))); };
      std::string ratio = t.summary.at(r, "case") == t.summary.at(r, "baseline") ? "base"
                          : t.summary.at(r, "ratio").empty()                          ? "-"
                              : fmt::format("{} ({}/{} smaller)", num("ratio"), t.summary.at(r, "smaller_k"), t.summary.at(r, "smaller_n"));
      fmt::print("{:<18} {:<22} {:>12} {:>25} {:>8}  {}{}\n", t.summary.at(r, "case"), t.summary.at(r, "metric"), num("median"),
                 fmt::format("[{}, {}]", num("ci95_lo"), num("ci95_hi")), ratio, t.summary.at(r, "unit"),
                 t.summary.at(r, "estimated") == "1" ? " ESTIMATED" : "");
    }
    if (!unavailable.empty()) fmt::print("\nunavailable here (empty in the result files, with the reason):\n");
    for (const auto& [metric, why] : unavailable) fmt::print("  {:<22} {}\n", metric, why);

    // The chains against their latencies, in counted cycles where there are any, else the estimate.
    nlohmann::json checks = nlohmann::json::array();
    std::string metric;
    for (const char* m : {"cycles", "cycles_tsc_estimate"})
      for (size_t r = 0; r < t.summary.size() && metric.empty(); ++r)
        if (t.summary.at(r, "metric") == m && !t.summary.at(r, "median").empty()) metric = m;
    fmt::print("\nchains against their latencies ({}):\n", metric.empty() ? "no cycle metric here" : metric);
    // The value and 95% interval of `metric` for one case, if measured.
    auto value_of = [&](const std::string& case_name) -> std::optional<std::array<double, 3>> {
      for (size_t r = 0; r < t.summary.size(); ++r)
        if (t.summary.at(r, "case") == case_name && t.summary.at(r, "metric") == metric && !metric.empty() && !t.summary.at(r, "median").empty())
          return std::array<double, 3>{std::stod(t.summary.at(r, "median")), std::stod(t.summary.at(r, "ci95_lo")), std::stod(t.summary.at(r, "ci95_hi"))};
      return std::nullopt;
    };
    for (size_t v = 0; v < latency_chains().size(); ++v) {
      std::optional<double> cycles;
      for (size_t r = 0; r < t.summary.size(); ++r)
        if (t.summary.at(r, "case") == cases[v].name && t.summary.at(r, "metric") == metric && !metric.empty())
          cycles = std::stod(t.summary.at(r, "median"));
      std::string verdict = cycles ? chain_verdict(roles[v], latencies[v], *cycles, metric == "cycles_tsc_estimate")
                                   : "not measured in cycles: " + (unavailable.count("cycles_tsc_estimate") ? unavailable["cycles_tsc_estimate"] : std::string("no cycle metric"));
      fmt::print("  {:<11} {:<44} {:<13} latency {:>5}  {:>8} cycles/op  {}\n", cases[v].name,
                 cases[v].params.at("instruction"), roles[v], latencies[v] ? fmt::format("{:g}", *latencies[v]) : "-",
                 cycles ? fmt::format("{:.3f}", *cycles) : "-", verdict);
      checks.push_back({{"chain", cases[v].name}, {"instruction", cases[v].params.at("instruction")}, {"role", roles[v]},
                        {"latency_cycles", latencies[v] ? nlohmann::json(*latencies[v]) : nlohmann::json(nullptr)},
                        {"metric", metric}, {"cycles_per_op", cycles ? nlohmann::json(*cycles) : nlohmann::json(nullptr)},
                        {"verdict", verdict}});
    }
    // The penalty: the random calls' extra cycles over the pattern's, per mispredict they cannot
    // avoid. Its interval is the two medians' intervals combined at their far ends (conservative).
    nlohmann::json penalty = {{"assumed_mispredicts_per_call", unavoidable_mispredict_rate()}, {"metric", metric}};
    auto pattern = value_of("indirect_pattern"), random = value_of("indirect_random");
    if (pattern && random) {
      double rate = unavoidable_mispredict_rate();
      double value = ((*random)[0] - (*pattern)[0]) / rate, lo = ((*random)[1] - (*pattern)[2]) / rate,
             hi = ((*random)[2] - (*pattern)[1]) / rate;
      penalty.update({{"cycles_per_mispredict", value}, {"ci95_lo", lo}, {"ci95_hi", hi}});
      fmt::print("\nindirect-call mispredict penalty ({}{}): {:.1f} cycles [{:.1f}, {:.1f}] per mispredict: random targets "
                 "{:.2f} cycles/call, a cycle of {} {:.2f}, assuming {}/{} of the random calls mispredict (a target drawn among {} "
                 "cannot be known)\n",
                 metric, metric == "cycles_tsc_estimate" ? ", ESTIMATED" : "", value, lo, hi, (*random)[0], kPatternPeriod, (*pattern)[0],
                 kTargets - 1, kTargets, kTargets);
    } else {
      penalty["unavailable_reason"] = metric.empty() ? "no cycle metric here (no PMU cycles, and the TSC estimate was refused)"
                                                     : "the two loops have no cycles in this run";
      fmt::print("\nindirect-call mispredict penalty: not measured: {}\n", penalty["unavailable_reason"].get<std::string>());
    }
    if (dir) {
      auto sidecar = sidecar_json(run_id, machine, &result, {"summary", "samples"});
      sidecar["chain_checks"] = checks;
      sidecar["mispredict_penalty"] = penalty;
      write_experiment(*dir, "calibrate", t, sidecar);
      fmt::print(stderr, "wrote {}/calibrate.summary.csv\n", dir->path().string());
    }
  });
}

}  // namespace dlab::cli
