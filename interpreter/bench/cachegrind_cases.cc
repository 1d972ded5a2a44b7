#include "cachegrind_cases.h"

#include <sys/stat.h>

#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/temp_dir.h"

namespace dlab::bench {

namespace {

// A file's identity for the reuse key: its path, size and modification time. A rebuilt dlab or a
// rebuilt module is another file, so nothing counted with the old one is read back.
std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ":missing";
  return fmt::format("{}:{}:{}.{:09}", path, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

// What makes a case's counts what they are: valgrind's command line (the options are fixed in
// run_cachegrind), the case's argument vectors, and the identity of every file among them.
std::string reuse_key(const CachegrindCase& c) {
  std::string key;
  auto add = [&key](const std::vector<std::string>& argv) {
    for (const auto& a : argv) {
      key += a;
      key += '\n';
      if (std::filesystem::is_regular_file(a)) key += file_identity(a) + '\n';
    }
  };
  if (c.pair_argv) {
    add(c.pair_argv(c.repetitions));
  } else {
    add(c.argv(c.repetitions));
    add(c.argv(2 * c.repetitions));
  }
  return key;
}

std::filesystem::path reuse_file(const std::string& folder, const std::string& key) {
  return std::filesystem::path(folder) / fmt::format("{:016x}.json", std::hash<std::string>{}(key));
}

// The counts of an identical case from the reuse folder, or nullopt. The file holds its full key,
// compared exactly (the name is only a hash).
std::optional<std::map<std::string, int64_t>> reused(const std::string& folder, const std::string& key, std::string& source) {
  auto f = reuse_file(folder, key);
  if (folder.empty() || !std::filesystem::exists(f)) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(read_input_file(f.string()), nullptr, false);
  if (j.is_discarded() || j.value("key", "") != key) return std::nullopt;
  source = j.at("counted_by");
  return j.at("difference").get<std::map<std::string, int64_t>>();
}

// A copy of this dlab without its symbol tables, for the children: valgrind reads every symbol
// of the program it starts, a fixed cost of each of the two runs per case; the code, so every
// count, is the same. Where strip fails, the children run dlab itself.
std::string stripped_copy(const std::string& self, const TempDir& scratch, std::string& note) {
  std::string out = scratch.file("dlab").string();
  ProcessOptions po;
  po.quiet = true;
  ProcessResult r = run_process({"strip", "--strip-all", "-o", out, self}, po);
  if (r.ok()) return out;
  note = "the children run dlab itself: " + r.describe("strip");
  return self;
}

// Each case's 2N - N counts per function, per repetition, as rows of the functions table.
ResultTable function_table(const std::string& run_id, const std::string& experiment, const std::vector<CachegrindCase>& cases,
                           const std::vector<CachegrindFunctions>& once, const std::vector<CachegrindFunctions>& twice,
                           const std::function<std::string(const std::string&)>& family_of,
                           const std::map<std::string, std::string>& provenance) {
  ResultTable t(result_table("functions"));
  for (size_t i = 0; i < cases.size(); ++i) {
    const double n = static_cast<double>(cases[i].repetitions);
    for (const auto& [function, d] : difference(twice[i], once[i])) {
      auto per = [&](std::initializer_list<const char*> events) {
        int64_t sum = 0;
        for (const char* e : events)
          if (auto it = d.find(e); it != d.end()) sum += it->second;
        return format_number(static_cast<double>(sum) / n);
      };
      std::map<std::string, std::string> row = provenance;
      row.insert({{"run_id", run_id}, {"experiment", experiment}, {"case", cases[i].name}, {"function", function},
                  {"family", family_of(function)}, {"instructions", per({"Ir"})}, {"loads", per({"Dr"})}, {"stores", per({"Dw"})},
                  {"branches", per({"Bc", "Bi"})}, {"mispredicts", per({"Bcm", "Bim"})}, {"params", params_column(cases[i].params)}});
      t.add(row);
    }
  }
  return t;
}

}  // namespace

void run_cachegrind_cases(const std::vector<CachegrindCase>& cases, const std::optional<RunDirectory>& dir, const std::string& experiment,
                          const CachegrindOptions& options) {
  const bool by_function = static_cast<bool>(options.family_of);
  if (by_function && !options.reuse.empty())
    throw std::invalid_argument("counts by function are not kept in a reuse folder: leave out --valgrind-reuse");
  const auto& cat = MetricCatalog::builtin();
  RunResult r = cachegrind_result(cat);
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  std::optional<TempDir> scratch;
  std::string strip_note, program = self;
  auto with_program = [&](std::vector<std::string> a) {
    if (!a.empty() && a[0] == self) a[0] = program;
    return a;
  };

  // A job is one valgrind run: a case's forked pair, or one of its two runs (N, 2N) where it has
  // no pair. A worker per core takes the next job, so no core waits while a case's shorter run is
  // done and its longer one is not. The counts are the simulator's, whatever runs beside them.
  enum class Run { kOnce, kTwice, kPair };
  struct Job {
    size_t i;
    Run run;
  };
  const size_t n_cases = cases.size();
  std::vector<std::string> keys(n_cases), sources(n_cases);
  std::vector<std::optional<std::map<std::string, int64_t>>> diffs(n_cases);
  std::vector<Job> jobs;
  size_t to_count = 0;
  for (size_t i = 0; i < n_cases; ++i) {
    if (!options.reuse.empty()) {
      keys[i] = reuse_key(cases[i]);
      diffs[i] = reused(options.reuse, keys[i], sources[i]);
    }
    if (diffs[i]) continue;
    ++to_count;
    if (cases[i].pair_argv) jobs.push_back({i, Run::kPair});
    else jobs.insert(jobs.end(), {{i, Run::kTwice}, {i, Run::kOnce}});  // the longer run first
  }
  // A function split needs the symbols, which the stripped copy drops.
  if (!jobs.empty() && !self.empty() && !by_function) {  // nothing to strip for when every case is read back
    scratch.emplace("cachegrind-cases");
    program = stripped_copy(self, *scratch, strip_note);
  }
  std::vector<CachegrindCounts> once(n_cases), twice(n_cases);
  std::vector<CachegrindFunctions> once_functions(n_cases), twice_functions(n_cases);
  std::vector<int> runs_left(n_cases);
  for (const Job& job : jobs) ++runs_left[job.i];
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  size_t cases_done = 0;
  fmt::print(stderr, "[cachegrind] {} cases: {} to count, {} read back from identical ones{}\n", n_cases, to_count, n_cases - to_count,
             strip_note.empty() ? "" : " (" + strip_note + ")");
  auto worker = [&] {
    for (;;) {
      size_t j = next.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(mu);
        if (j >= jobs.size() || failure) return;
      }
      const Job job = jobs[j];
      const CachegrindCase& c = cases[job.i];
      try {
        CachegrindPair got;
        if (job.run == Run::kPair) got = run_cachegrind_pair(with_program(c.pair_argv(c.repetitions)), by_function);
        else if (job.run == Run::kTwice)
          got.twice = run_cachegrind(with_program(c.argv(2 * c.repetitions)), by_function ? &got.twice_functions : nullptr);
        else got.once = run_cachegrind(with_program(c.argv(c.repetitions)), by_function ? &got.once_functions : nullptr);
        std::lock_guard<std::mutex> lock(mu);
        if (job.run != Run::kOnce) {
          twice[job.i] = std::move(got.twice);
          twice_functions[job.i] = std::move(got.twice_functions);
        }
        if (job.run != Run::kTwice) {
          once[job.i] = std::move(got.once);
          once_functions[job.i] = std::move(got.once_functions);
        }
        if (--runs_left[job.i] == 0) fmt::print(stderr, "[cachegrind] {}/{} {}\n", ++cases_done, to_count, c.name);
      } catch (...) {  // kept for the caller's thread: no exception leaves a worker
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  const size_t workers = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), jobs.size()));
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);

  fmt::print("{:<32} {:>14} {:>12} {:>12} {:>12}   (per repetition, cachegrind, 2N vs N repetitions)\n", "case", "instructions",
             "loads", "stores", "mispredicts");
  nlohmann::json repetitions = nlohmann::json::object(), reuse_notes = nlohmann::json::object(), runs = nlohmann::json::object();
  std::vector<MeasuredCase> measured;
  for (size_t i = 0; i < n_cases; ++i) {
    const CachegrindCase& c = cases[i];
    const uint64_t n = c.repetitions;
    repetitions[c.name] = {n, 2 * n};
    runs[c.name] = c.pair_argv ? "forked pair" : "two processes";
    if (!diffs[i]) {
      diffs[i] = difference(twice[i], once[i]);
      if (!options.reuse.empty()) {
        nlohmann::json j = {{"key", keys[i]}, {"counted_by", experiment + ": " + c.name}, {"difference", *diffs[i]}};
        write_output_file(reuse_file(options.reuse, keys[i]).string(), j.dump(), ExistingFile::kReplace);
      }
    } else {
      reuse_notes[c.name] = sources[i];
    }
    CaseSamples vs{c.name, {cachegrind_values(cat, *diffs[i])}};
    auto col = [&](const char* metric) {
      for (size_t m = 0; m < r.metrics.size(); ++m)
        if (r.metrics[m].name == metric && vs.samples[0][m].value)
          return fmt::format("{:.4g}", *vs.samples[0][m].value / static_cast<double>(n));
      return std::string("-");
    };
    fmt::print("{:<32} {:>14} {:>12} {:>12} {:>12}{}\n", c.name, col("cg_instructions"), col("cg_loads"), col("cg_stores"),
               col("cg_mispredicts"), reuse_notes.contains(c.name) ? "   (read back: " + sources[i] + ")" : "");
    r.cases.push_back(std::move(vs));
    measured.push_back({c.name, nullptr, static_cast<double>(n), c.unit, c.params, c.baseline});
  }
  std::optional<ResultTable> functions;
  if (by_function)
    functions = function_table(dir ? dir->run_id() : "", experiment, cases, once_functions, twice_functions, options.family_of,
                               provenance_columns(r, cli::this_machine()));
  if (!dir) return;
  auto t = experiment_tables(dir->run_id(), experiment, r, measured, cli::this_machine());
  std::vector<std::string> tables = {"summary", "samples"};
  if (functions) tables.push_back("functions");
  auto sidecar = sidecar_json(dir->run_id(), cli::this_machine(), &r, tables);
  sidecar["valgrind_repetitions"] = repetitions;  // per case: N and 2N
  sidecar["valgrind_runs"] = runs;  // per case: one process forking after its set-up, or two
  // Cases counted once for an identical case of an earlier bench of the same recipe run: which.
  if (!reuse_notes.empty()) sidecar["valgrind_reused"] = reuse_notes;
  if (!strip_note.empty()) sidecar["valgrind_program_note"] = strip_note;
  if (!cases.empty()) sidecar["valgrind_calls"] = {cases.front().repetitions, 2 * cases.front().repetitions};
  if (functions) write_experiment(*dir, experiment, t, sidecar, {{experiment + ".functions.csv", functions->to_csv()}});
  else write_experiment(*dir, experiment, t, sidecar);
  fmt::print(stderr, "wrote {}/{}.summary.csv\n", dir->path().string(), experiment);
}

}  // namespace dlab::bench
