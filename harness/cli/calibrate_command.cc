// `dlab calibrate`: the harness measuring two kernels of known shape under the full protocol, so
// every machine's results start with numbers a reader can sanity-check: a chain of dependent adds
// (1 core cycle each on any x86-64 or arm64 core) and a chain of store -> load -> add round trips
// through one memory word (the store-forwarding latency that the `vec` stack variant pays per
// dispatch).
#include <cstdio>
#include <map>
#include <unistd.h>

#include <fmt/format.h>

#include "commands.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"

namespace dlab::cli {

namespace {

constexpr int kOpsPerIteration = 16;

void add_chain(uint64_t iterations) {
  uint64_t acc = 0;
#if defined(__x86_64__)
  asm volatile("1:\n\t.rept 16\n\tadd $1, %[acc]\n\t.endr\n\tdec %[n]\n\tjnz 1b"
               : [acc] "+r"(acc), [n] "+r"(iterations)::"cc");
#elif defined(__aarch64__)
  asm volatile("1:\n\t.rept 16\n\tadd %x[acc], %x[acc], #1\n\t.endr\n\tsubs %x[n], %x[n], #1\n\tb.ne 1b"
               : [acc] "+r"(acc), [n] "+r"(iterations)::"cc");
#endif
}

void store_load_chain(uint64_t iterations) {
  uint64_t acc = 0;
  alignas(64) static volatile uint64_t slot;
  uint64_t* p = const_cast<uint64_t*>(&slot);
#if defined(__x86_64__)
  asm volatile("1:\n\t.rept 16\n\tmov %[acc], (%[p])\n\tmov (%[p]), %[acc]\n\tadd $1, %[acc]\n\t.endr\n\tdec %[n]\n\tjnz 1b"
               : [acc] "+r"(acc), [n] "+r"(iterations)
               : [p] "r"(p)
               : "cc", "memory");
#elif defined(__aarch64__)
  asm volatile(
      "1:\n\t.rept 16\n\tstr %x[acc], [%x[p]]\n\tldr %x[acc], [%x[p]]\n\tadd %x[acc], %x[acc], #1\n\t.endr\n\t"
      "subs %x[n], %x[n], #1\n\tb.ne 1b"
      : [acc] "+r"(acc), [n] "+r"(iterations)
      : [p] "r"(p)
      : "cc", "memory");
#endif
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate",
                                 "measure two known kernels (dependent adds; store-to-load round trips) under the run "
                                 "protocol and write calibrate.summary.csv / .samples.csv / .json");
  struct Options {
    bool quick = false;
    bool no_save = false;
    RunProtocol protocol;
    uint64_t iterations = 200'000;
    RunDirectoryOptions out;
  };
  auto o = std::make_shared<Options>();
  cmd->add_flag("--quick", o->quick, "5 samples, 1 warm-up round");
  add_protocol_options(cmd, o->protocol);
  cmd->add_option("--iterations", o->iterations, "loop iterations per run (16 operations each)")->capture_default_str();
  cmd->add_flag("--no-save", o->no_save, "print only, write no files");
  o->out.add_to(cmd, "results");
  cmd->callback([o, cmd] {
    if (o->quick) apply_quick_protocol(cmd, o->protocol);
    const auto& machine = this_machine();
    BackendSet backends = BackendSet::for_this_machine();
    CounterPlan plan = plan_counters(MetricCatalog::builtin(), backends, this_host_cpu());
    Meter meter(plan, backends);
    uint64_t n = o->iterations;
    double ops = static_cast<double>(n) * kOpsPerIteration;
    std::vector<Variant> variants = {
        {"add_chain", [n] { add_chain(n); }, ops, "add", {{"ops_per_iteration", "16"}, {"iterations", std::to_string(n)}}},
        {"store_load_chain", [n] { store_load_chain(n); }, ops, "round_trip",
         {{"ops_per_iteration", "16"}, {"iterations", std::to_string(n)}}},
    };
    bool tty = isatty(fileno(stderr));
    auto progress = [tty](int done, int total, const std::string& v) {
      if (tty) fmt::print(stderr, "\r[calibrate] sample {}/{} {:<20}", done, total, v);
      else if (done == total || done % 10 == 0) fmt::print(stderr, "[calibrate] sample {}/{}\n", done, total);
    };
    RunResult result = run_protocol(o->protocol, meter, variants, progress);
    if (tty) fmt::print(stderr, "\n");
    std::optional<RunDirectory> dir;
    if (!o->no_save) dir = o->out.resolve(machine);
    std::string run_id = dir ? dir->run_id() : "unsaved";
    ExperimentTables t = experiment_tables(run_id, "calibrate", result, variants, machine);
    std::map<std::string, std::string> unavailable;
    fmt::print("{:<18} {:<22} {:>12} {:>25} {:>8}  {}\n", "VARIANT", "METRIC", "MEDIAN", "95% CI", "RATIO", "NOTE");
    for (size_t r = 0; r < t.summary.size(); ++r) {
      std::string median = t.summary.at(r, "median");
      if (median.empty()) {
        unavailable.emplace(t.summary.at(r, "metric"), t.summary.at(r, "unavailable_reason"));
        continue;
      }
      auto num = [&](const char* c) { return t.summary.at(r, c).empty() ? std::string("-") : fmt::format("{:.4g}", std::stod(t.summary.at(r, c))); };
      std::string ratio = t.summary.at(r, "variant") == t.summary.at(r, "baseline") ? "base"
                          : t.summary.at(r, "ratio").empty()                          ? "-"
                              : fmt::format("{} ({}/{} smaller)", num("ratio"), t.summary.at(r, "smaller_k"), t.summary.at(r, "smaller_n"));
      fmt::print("{:<18} {:<22} {:>12} {:>25} {:>8}  {}{}\n", t.summary.at(r, "variant"), t.summary.at(r, "metric"), num("median"),
                 fmt::format("[{}, {}]", num("ci95_lo"), num("ci95_hi")), ratio, t.summary.at(r, "unit"),
                 t.summary.at(r, "estimated") == "1" ? " ESTIMATED" : "");
    }
    if (!unavailable.empty()) fmt::print("\nunavailable here (empty in the result files, with the reason):\n");
    for (const auto& [metric, why] : unavailable) fmt::print("  {:<22} {}\n", metric, why);
    if (dir) {
      write_experiment(*dir, "calibrate", t, sidecar_json(run_id, machine, &result, {"summary", "samples"}));
      fmt::print(stderr, "wrote {}/calibrate.summary.csv\n", dir->path().string());
    }
  });
}

}  // namespace dlab::cli
