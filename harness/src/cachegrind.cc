#include "dispatchlab/harness/cachegrind.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/harness/quote.h"

namespace dlab {

namespace {
const char* const kEvents[] = {"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw", "Bc", "Bcm", "Bi", "Bim"};

}  // namespace

CachegrindCounts parse_cachegrind_out(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> events;
  std::vector<uint64_t> summary;
  while (std::getline(in, line)) {
    if (line.rfind("events:", 0) == 0) {
      std::istringstream ss(line.substr(7));
      std::string e;
      while (ss >> e) events.push_back(e);
    } else if (line.rfind("summary:", 0) == 0) {
      std::istringstream ss(line.substr(8));
      uint64_t v;
      while (ss >> v) summary.push_back(v);
    }
  }
  if (events.empty()) throw CounterError("cachegrind output has no 'events:' line");
  if (summary.size() != events.size())
    throw CounterError(fmt::format("cachegrind summary has {} values for {} events", summary.size(), events.size()));
  CachegrindCounts c;
  for (size_t i = 0; i < events.size(); ++i) c[events[i]] = summary[i];
  return c;
}

CachegrindCounts run_cachegrind(const std::vector<std::string>& argv) {
  namespace fs = std::filesystem;
  TempDir scratch("cachegrind");
  fs::path out = scratch.file("cachegrind.out"), log = scratch.file("cachegrind.log");
  std::vector<std::string> cmd = {"valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                                  "--cachegrind-out-file=" + out.string(), "--log-file=" + log.string()};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  ProcessOptions po;
  po.stdout_file = "/dev/null";
  ProcessResult rc = run_process(cmd, po);
  std::string counts = read_text_file(out.string()), messages = read_text_file(log.string());
  if (!rc.ok() || counts.empty()) {
    // valgrind 3.19 stops a program at an instruction it cannot translate (AVX-512, which a
    // -march=native build emits where the CPU has it) with SIGILL: say what to do about it.
    std::string hint = rc.signal == 4 || messages.find("unhandled instruction") != std::string::npos
                           ? fmt::format(" ({} uses an instruction valgrind cannot run: build it without -march=native)",
                                         argv.empty() ? std::string("the program") : argv.front())
                           : "";
    throw CounterError(fmt::format("{}{}: {}", rc.describe("valgrind"), hint, messages.substr(0, 400)));
  }
  return parse_cachegrind_out(counts);
}

std::map<std::string, int64_t> difference(const CachegrindCounts& twice, const CachegrindCounts& once) {
  std::map<std::string, int64_t> d;
  for (const auto& [e, v] : twice) {
    auto it = once.find(e);
    if (it == once.end()) throw CounterError("event " + e + " missing from the N-repetition run");
    d[e] = static_cast<int64_t>(v) - static_cast<int64_t>(it->second);
  }
  return d;
}

Availability ValgrindBackend::probe(const std::string& native_event) {
  bool known = false;
  for (const char* e : kEvents) known |= native_event == e;
  if (!known) return Availability::no("cachegrind has no event " + quote_input(native_event));
  static const bool have_valgrind = [] {
    ProcessOptions po;
    po.quiet = true;
    return run_process({"valgrind", "--version"}, po).ok();
  }();
  if (!have_valgrind) return Availability::no("valgrind is not installed (./tools/bootstrap installs it)");
  return Availability::yes("whole-process counts, measured by `dlab models --valgrind`");
}

std::unique_ptr<CounterGroup> ValgrindBackend::open_group(const std::vector<std::string>&) {
  throw CounterError("cachegrind counts whole processes under valgrind; use `dlab models --valgrind`");
}

std::vector<MeteredMetric> cachegrind_metrics(const MetricCatalog& catalog) {
  ValgrindBackend vg;
  std::vector<MeteredMetric> out;
  for (const auto& m : catalog.source("cachegrind")->mappings) {
    const MetricDef* def = catalog.metric(m.metric);
    out.push_back({def->name, def->unit, "valgrind", m.describe(), false, vg.probe(m.inputs.begin()->second)});
  }
  return out;
}

std::vector<MetricValue> cachegrind_values(const MetricCatalog& catalog, const std::map<std::string, int64_t>& diff) {
  std::vector<MetricValue> out;
  for (const auto& m : catalog.source("cachegrind")->mappings) {
    std::map<std::string, double> vars;
    for (const auto& [name, ev] : m.inputs) vars[name] = static_cast<double>(diff.at(ev));
    MetricValue v;
    v.value = m.formula ? m.formula->evaluate(vars) : std::optional<double>(vars.at("value"));
    v.read_method = "cachegrind summary";
    if (!v.value) v.reason = "formula undefined";
    out.push_back(v);
  }
  return out;
}

RunResult cachegrind_result(const MetricCatalog& catalog) {
  RunResult r;
  r.protocol.name = "cachegrind-2n-minus-n";
  r.protocol.samples = 1;
  r.protocol.warmup_rounds = 0;
  r.protocol.interleave = false;
  r.protocol.pin_cpu = -1;
  r.pin_note = "not pinned: cachegrind counts are deterministic";
  r.metrics = cachegrind_metrics(catalog);
  return r;
}

}  // namespace dlab
