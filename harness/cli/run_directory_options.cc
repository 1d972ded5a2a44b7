#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "build_info.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/quote.h"

namespace dlab::cli {

// --quick's rounds (apply_quick_protocol), which the protocol options' checks compare with too.
constexpr int kQuickSamples = 5;
constexpr int kQuickMaxSamples = 10;

const CLI::Validator& non_empty_path() {
  static const CLI::Validator v(
      [](std::string& s) { return s.empty() ? std::string("needs a directory (use --no-save to write nothing)") : std::string(); },
      "DIR");
  return v;
}

void RunDirectoryOptions::add_to(CLI::App* cmd, const std::string& default_root) {
  results_root = default_root;
  auto* rd = cmd->add_option("--run-dir", run_dir, "write into this existing run directory (from `dlab new-run`)")
                 ->check(non_empty_path());
  auto* rr = cmd->add_option("--results", results_root,
                             "create a new run directory <ROOT>/<cpu>/<timestamp>-<commit>/ and write there")
                 ->check(non_empty_path())
                 ->capture_default_str();
  rd->excludes(rr);
  // "print only, write no files" and a place to write them contradict each other: refused, never
  // silently resolved one way.
  if (auto* no_save = cmd->get_option_no_throw("--no-save")) {
    rd->excludes(no_save);
    rr->excludes(no_save);
  }
}

namespace {
std::vector<std::filesystem::path>& created_run_directories() {
  static std::vector<std::filesystem::path> created;
  return created;
}
}  // namespace

std::optional<RunDirectory> RunDirectoryOptions::resolve(const MachineFingerprint& machine,
                                                         const std::vector<std::string>& files) const {
  std::optional<RunDirectory> dir;
  if (!run_dir.empty()) dir = RunDirectory::open(run_dir);
  else if (!results_root.empty()) {
    dir = RunDirectory::create(results_root, machine.cpu_slug(), machine.build.git_commit, std::chrono::system_clock::now(),
                               machine.to_json().dump(2) + "\n");
    created_run_directories().push_back(dir->path());
  }
  if (dir) dir->check_can_write(files);
  return dir;
}

void discard_created_run_directories_without_results() {
  for (const auto& dir : created_run_directories()) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
    if (ec || names != std::vector<std::string>{"machine.json"}) continue;  // a result was written, or it cannot be read: kept
    std::filesystem::remove(dir / "machine.json", ec);
    if (!ec) std::filesystem::remove(dir, ec);
  }
  created_run_directories().clear();
}

const MachineFingerprint& this_machine() {
  static const MachineFingerprint m = collect_fingerprint(process_tsc_calibration());
  return m;
}

void add_new_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("new-run", "create a new, empty run directory and print its path");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  auto root = std::make_shared<std::string>("results");
  auto require_clean = std::make_shared<bool>(false);
  cmd->add_option("--results", *root, "results root")->check(non_empty_path())->capture_default_str();
  cmd->add_flag("--require-clean", *require_clean,
                "refuse (exit 1) when the source tree dlab was built from has uncommitted changes to tracked files: "
                "what the recipes that publish numbers (just rfc, models, flushes, pace) pass unless DLAB_ALLOW_DIRTY=1");
  cmd->callback([root, require_clean] {
    const auto& m = this_machine();
    // A run from a dirty tree cannot be re-taken from any commit: its name and every row's
    // git_commit say so, and a recipe that publishes numbers refuses to start one unless told.
    if (*require_clean && m.build.git_commit.find("+dirty") != std::string::npos)
      throw std::runtime_error(fmt::format(
          "the source tree {} has uncommitted changes to tracked files (`git status`), so a run made from it could "
          "not be re-taken from a commit: commit or revert them, or set DLAB_ALLOW_DIRTY=1 to run anyway (the run's "
          "name then ends in -dirty, and every row's git_commit in +dirty)",
          quote_input(DLAB_SOURCE_DIR)));
    auto dir = RunDirectory::create(*root, m.cpu_slug(), m.build.git_commit, std::chrono::system_clock::now(),
                                    m.to_json().dump(2) + "\n");
    fmt::print("{}\n", dir.path().string());
  });
}

std::vector<std::string> choose_from(const std::string& s, const std::vector<std::string>& valid, const std::string& option,
                                     bool empty_means_all) {
  // "all" is every value of every axis list (a pair that cannot exist is then said not run, as
  // when named); an empty list means all only where the option says so. In a list, "all" is every
  // value not named before it: "vec,all" puts the baseline first and then the others.
  if (s == "all" || (empty_means_all && s.empty())) return valid;
  std::vector<std::string> out;
  bool all_given = false;
  for (const auto& x : split_commas(s)) {
    if (x == "all" && !all_given) {
      all_given = true;
      for (const auto& v : valid)
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
      continue;
    }
    if (x == "all") throw CLI::ValidationError(option, "all is listed twice");
    if (all_given) throw CLI::ValidationError(option, fmt::format("{} comes after all, which has it already", quote_input(x)));
    if (std::find(valid.begin(), valid.end(), x) == valid.end())
      throw CLI::ValidationError(option, fmt::format("unknown {} (valid: {})", quote_input(x), fmt::join(valid, ", ")));
    if (std::find(out.begin(), out.end(), x) != out.end())
      throw CLI::ValidationError(option, fmt::format("{} is listed twice", quote_input(x)));
    out.push_back(x);
  }
  if (out.empty()) throw CLI::ValidationError(option, "needs at least one value");
  return out;
}

std::vector<std::string> split_blanks(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::string self_executable() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

namespace {

// --pin: -1, -2, or a CPU this process may run on; asked for explicitly, anything else is an error
// rather than a run that is silently not pinned.
const CLI::Validator& pinnable_cpu() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        int cpu = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), cpu);
        if (ec != std::errc() || end != s.data() + s.size()) return quote_input(s) + " is not a CPU number";
        if (cpu == -1 || cpu == -2) return "";
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::string("sched_getaffinity: ") + std::strerror(errno);
        std::vector<int> cpus;
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
        if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed)) return "";
        return fmt::format("CPU {} is not one this process may run on (allowed: {}; -1 no pinning, -2 the last allowed)", cpu,
                           fmt::join(cpus, ", "));
      },
      "CPU");
  return v;
}

}  // namespace

CLI::Validator experiment_name_validator() {
  return CLI::Validator(
      [](std::string& n) {
        bool ok = !n.empty() && n.size() <= 40;
        for (char c : n) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
        return ok ? std::string() : quote_input(n) + ": lower-case letters, digits and '_' only (1..40)";
      },
      "NAME");
}

void add_protocol_options(CLI::App* cmd, RunProtocol& protocol, const std::string& samples_help) {
  cmd->add_option("--samples", protocol.samples, samples_help + " (1..100000)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", protocol.warmup_rounds, "warm-up rounds (0..10000)")->check(CLI::Range(0, 10000))->capture_default_str();
  cmd->add_option("--max-samples", protocol.max_samples,
                  "sample on past --samples, up to this many rounds, until every case's 95% CI of its ratio to its baseline "
                  "has a half-width of at most --stop-half-width of the ratio (0: exactly --samples; --quick: 10) (0..100000)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--stop-half-width", protocol.stop_half_width,
                  "with --max-samples: the half-width, as a fraction of the ratio, at which sampling stops (0.0001..1)")
      ->check(CLI::Range(0.0001, 1.0))
      ->capture_default_str();
  // An option that would be silently ignored is refused: the rule's half-width without the rule,
  // or a most that is not above the least given beside it.
  cmd->parse_complete_callback([cmd, &protocol] {
    // Under --valgrind or --gbench the rounds are not the harness's: the command refuses these
    // options there, saying so (models_command.cc, wasm_bench_command.cc).
    for (const char* other : {"--valgrind", "--gbench"})
      if (const CLI::Option* given = cmd->get_option_no_throw(other); given && given->count()) return;
    const CLI::Option* quick = cmd->get_option_no_throw("--quick");
    const bool quick_given = quick && quick->count();
    if (cmd->count("--stop-half-width") && !cmd->count("--max-samples") && !quick_given)
      throw CLI::ValidationError("--stop-half-width", "applies only with --max-samples (or --quick, which sets it)");
    if (cmd->count("--stop-half-width") && cmd->count("--max-samples") && protocol.max_samples == 0)
      throw CLI::ValidationError("--stop-half-width", "applies only with a --max-samples above --samples (--max-samples 0 takes exactly --samples)");
    // The least the most is compared with: --samples as given, or its default (--quick's own).
    const int least = cmd->count("--samples") || !quick_given ? protocol.samples : kQuickSamples;
    if (cmd->count("--max-samples") && protocol.max_samples > 0 && protocol.max_samples <= least)
      throw CLI::ValidationError("--max-samples", fmt::format("{} is not above --samples {}{} (0: exactly --samples)", protocol.max_samples,
                                                              least, cmd->count("--samples") ? "" : ", its default"));
  });
  cmd->add_option("--pin", protocol.pin_cpu, "CPU to pin to (-1: none, -2: last allowed CPU)")
      ->check(pinnable_cpu())
      ->capture_default_str();
}

namespace {

// CLI11 writes a range's bounds with std::to_string: "86400.000000" is 86400.
std::string plain_number(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// "--samples: Value abc not in range 1 to 100000" (CLI::Range's message) as
// "--samples: 'abc' is not an integer in 1..100000"; nullopt for any other message.
std::optional<std::string> explain_range(const std::string& what) {
  const std::string value = ": Value ", range = " not in range ", to = " to ";
  size_t v = what.find(value), r = what.rfind(range), t = what.rfind(to);
  if (v == std::string::npos || r == std::string::npos || t == std::string::npos || !(v < r && r < t)) return std::nullopt;
  std::string option = what.substr(0, v), given = what.substr(v + value.size(), r - v - value.size());
  std::string lo = what.substr(r + range.size(), t - r - range.size()), hi = what.substr(t + to.size());
  bool whole = lo.find('.') == std::string::npos && hi.find('.') == std::string::npos;
  return fmt::format("{}: {} is not {} in {}..{}", option, quote_input(given), whole ? "an integer" : "a number", plain_number(lo),
                     plain_number(hi));
}

// The option `name` of the command being parsed (the deepest subcommand given that has it).
const CLI::Option* option_named(const CLI::App* app, const std::string& name) {
  const CLI::Option* found = nullptr;
  while (app) {
    if (const CLI::Option* o = app->get_option_no_throw(name)) found = o;
    auto given = app->get_subcommands();  // the subcommands on this command line
    app = given.empty() ? nullptr : given.front();
  }
  return found;
}

// What an option of CLI11's type name takes ("UINT", "INT:INT in [0 - 10]", "FLOAT").
std::string kind_of_value(const CLI::Option* o) {
  std::string type = o ? o->get_type_name() : "";
  type = type.substr(0, type.find(':'));
  if (type == "UINT") return "a whole number (0 or more)";
  if (type == "INT") return "an integer";
  if (type == "FLOAT") return "a number";
  return "a valid value";
}

// "Could not convert: --seed = abc" (a value that is not of the option's type) as
// "--seed: 'abc' is not a whole number (0 or more)"; nullopt for any other message.
std::optional<std::string> explain_conversion(const CLI::App* app, const std::string& what) {
  const std::string head = "Could not convert: ", eq = " = ";
  size_t e = what.find(eq);
  if (!what.starts_with(head) || e == std::string::npos) return std::nullopt;
  std::string option = what.substr(head.size(), e - head.size());
  return fmt::format("{}: {} is not {}", option, quote_input(what.substr(e + eq.size())), kind_of_value(option_named(app, option)));
}

}  // namespace

std::string command_line_error(const CLI::App* app, const CLI::Error& e) {
  std::string what = e.what();
  std::optional<std::string> plain = explain_range(what);
  if (!plain) plain = explain_conversion(app, what);
  // One line, as every error of dlab's: CLI11's own text is escaped (an argument it quotes may
  // hold a newline or a terminal escape), and where help is goes on the same line.
  return fmt::format("{} (--help lists the options)\n", plain ? *plain : escape_input(what));
}

void apply_quick_protocol(const CLI::App* cmd, RunProtocol& protocol) {
  // Today's 5 rounds stay the least, so no interval is wider than a fixed 5-round one; a group
  // whose intervals are still wider than 2% gets up to 10.
  if (!cmd->count("--samples")) protocol.samples = kQuickSamples;
  if (!cmd->count("--warmup")) protocol.warmup_rounds = 1;
  if (!cmd->count("--max-samples")) protocol.max_samples = kQuickMaxSamples;
}

}  // namespace dlab::cli
