#include "dispatchlab/harness/cachegrind.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/standard_output.h"
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

CachegrindFunctions parse_cachegrind_functions(const std::string& text) {
  std::istringstream in(text);
  std::string line, function;
  std::vector<std::string> events;
  CachegrindFunctions out;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("events:", 0) == 0) {
      std::istringstream ss(line.substr(7));
      std::string e;
      while (ss >> e) events.push_back(e);
    } else if (line.rfind("fn=", 0) == 0) {
      function = line.substr(3);
    } else if (!line.empty() && line[0] >= '0' && line[0] <= '9') {
      // "<source line> <count per event>...": trailing zero counts may be left out.
      if (events.empty()) throw CounterError(fmt::format("cachegrind output line {}: counts before the events: line", number));
      if (function.empty()) throw CounterError(fmt::format("cachegrind output line {}: counts before any fn= line", number));
      std::istringstream ss(line);
      uint64_t source_line = 0, v = 0;
      if (!(ss >> source_line)) throw CounterError(fmt::format("cachegrind output line {}: no source line number", number));
      CachegrindCounts& c = out[function];
      for (size_t i = 0; ss >> v; ++i) {
        if (i >= events.size())
          throw CounterError(fmt::format("cachegrind output line {}: more counts than the {} events", number, events.size()));
        c[events[i]] += v;
      }
      if (!ss.eof()) throw CounterError(fmt::format("cachegrind output line {}: a count that is not a number", number));
    }
  }
  if (events.empty()) throw CounterError("cachegrind output has no 'events:' line");
  for (auto& [f, c] : out)
    for (const auto& e : events) c.try_emplace(e, 0);
  return out;
}

namespace {

// valgrind's command line for argv, its counts written to out (which may hold %p, valgrind's
// process id) and its messages to log.
std::vector<std::string> cachegrind_command(const std::string& out, const std::string& log, const std::vector<std::string>& argv) {
  std::vector<std::string> cmd = {"valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                                  "--cachegrind-out-file=" + out, "--log-file=" + log};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return cmd;
}

CounterError cachegrind_failed(const ProcessResult& rc, const std::string& messages, const std::vector<std::string>& argv) {
  // valgrind 3.19 stops a program at an instruction it cannot translate (AVX-512, which a
  // -march=native build emits where the CPU has it) with SIGILL: say what to do about it.
  std::string hint = rc.signal == 4 || messages.find("unhandled instruction") != std::string::npos
                         ? fmt::format(" ({} uses an instruction valgrind cannot run: build it without -march=native)",
                                       argv.empty() ? std::string("the program") : argv.front())
                         : "";
  return CounterError(fmt::format("{}{}: {}", rc.describe("valgrind"), hint, messages.substr(0, 400)));
}

}  // namespace

CachegrindCounts run_cachegrind(const std::vector<std::string>& argv, CachegrindFunctions* functions) {
  TempDir scratch("cachegrind");
  std::filesystem::path out = scratch.file("cachegrind.out"), log = scratch.file("cachegrind.log");
  ProcessOptions po;
  po.stdout_file = "/dev/null";
  ProcessResult rc = run_process(cachegrind_command(out.string(), log.string(), argv), po);
  std::string counts = read_text_file(out.string()), messages = read_text_file(log.string());
  if (!rc.ok() || counts.empty()) throw cachegrind_failed(rc, messages, argv);
  if (functions) *functions = parse_cachegrind_functions(counts);
  return parse_cachegrind_out(counts);
}

CachegrindPair run_cachegrind_pair(const std::vector<std::string>& argv, bool with_functions) {
  namespace fs = std::filesystem;
  TempDir scratch("cachegrind");
  fs::path log = scratch.file("cachegrind.log");
  ProcessOptions po;
  po.stdout_file = "/dev/null";
  ProcessResult rc = run_process(cachegrind_command((scratch.path() / "cachegrind.out.%p").string(), log.string(), argv), po);
  std::string messages = read_text_file(log.string());
  if (!rc.ok()) throw cachegrind_failed(rc, messages, argv);
  // The process valgrind started is the parent (valgrind runs its program in its own process),
  // so its file is the 2N one; the one other file is the child's.
  const std::string parent = fmt::format("cachegrind.out.{}", rc.pid);
  std::optional<std::string> twice, once;
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(scratch.path())) {
    std::string name = entry.path().filename().string();
    if (name.rfind("cachegrind.out.", 0) != 0) continue;
    ++files;
    (name == parent ? twice : once) = read_text_file(entry.path().string());
  }
  if (files != 2 || !twice || !once)
    throw CounterError(fmt::format("{} wrote {} count files, not its own and one forked child's (does it call count_forked_pair?)",
                                   argv.empty() ? std::string("the program") : argv.front(), files));
  CachegrindPair pair{parse_cachegrind_out(*once), parse_cachegrind_out(*twice), {}, {}};
  if (with_functions) {
    pair.once_functions = parse_cachegrind_functions(*once);
    pair.twice_functions = parse_cachegrind_functions(*twice);
  }
  return pair;
}

void count_forked_pair(uint64_t n, const std::function<void(uint64_t)>& repeat) {
  std::fflush(nullptr);  // what is buffered now is written once, not by both processes
  pid_t child = ::fork();
  if (child < 0) throw CounterError(fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    int status = 0;
    try {
      repeat(n);
    } catch (const std::exception& e) {
      standard_output::write_stderr(fmt::format("the forked run of {} repetitions failed: {}\n", n, e.what()));
      status = 1;
    } catch (...) {
      standard_output::write_stderr("the forked run failed\n");
      status = 1;
    }
    ::_exit(status);
  }
  auto reap = [child] {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
      if (errno != EINTR) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  try {
    repeat(2 * n);
  } catch (...) {
    reap();
    throw;
  }
  if (!reap()) {
    standard_output::write_stderr(fmt::format("the forked child's run of {} repetitions did not succeed: its counts are not a measurement\n", n));
    ::_exit(1);
  }
  ::_exit(0);
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

std::map<std::string, std::map<std::string, int64_t>> difference(const CachegrindFunctions& twice, const CachegrindFunctions& once) {
  // Over the functions of both runs: one that ran only in the N run (a forked child's own exit
  // path) has a negative difference, so the rows still add up to the summary's difference.
  std::map<std::string, std::map<std::string, int64_t>> out;
  static const CachegrindCounts kNone;
  auto of = [](const CachegrindFunctions& fs, const std::string& f) -> const CachegrindCounts& {
    auto it = fs.find(f);
    return it == fs.end() ? kNone : it->second;
  };
  std::set<std::string> names;
  for (const auto& [f, c] : twice) names.insert(f);
  for (const auto& [f, c] : once) names.insert(f);
  for (const auto& f : names) {
    const CachegrindCounts &after = of(twice, f), &before = of(once, f);
    std::set<std::string> events;
    for (const auto& [e, v] : after) events.insert(e);
    for (const auto& [e, v] : before) events.insert(e);
    std::map<std::string, int64_t> d;
    bool any = false;
    for (const auto& e : events) {
      auto a = after.find(e), b = before.find(e);
      d[e] = static_cast<int64_t>(a == after.end() ? 0 : a->second) - static_cast<int64_t>(b == before.end() ? 0 : b->second);
      any |= d[e] != 0;
    }
    if (any) out[f] = std::move(d);
  }
  return out;
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
  RunResult r = single_count_result("cachegrind-2n-minus-n", "not pinned: cachegrind counts are deterministic");
  r.metrics = cachegrind_metrics(catalog);
  return r;
}

}  // namespace dlab
