// `dlab wasm programs`: whole WASI programs built by other people with other toolchains
// (interpreter/programs/programs.json, fetched by tools/fetch-programs, the module's hash checked
// again here), each run as a whole process in dlab-run and in every --peer, in a scratch copy of
// the program's inputs, interleaved under the run protocol: the wall time of a run
// (start-up included: what a user waits for) and the peak resident memory of one more run. Every
// engine's output is checked against the list's sha256 before anything is timed, and every timed
// run's exit status after; a peer that cannot run a program (wasm3 and Go's wasip1 programs) is
// said, with its reason, and left out of that program's group, never a failure of the run.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/harness/temp_dir.h"
#include "../bench/peers.h"

#ifndef DLAB_PROGRAMS_LIST
#define DLAB_PROGRAMS_LIST "interpreter/programs/programs.json"
#endif

namespace dlab::cli {

namespace {

namespace fs = std::filesystem;

// One program of the list, as the runner needs it (the fetch tool reads the rest).
struct Program {
  std::string name, role, what, toolchain, source;  // source: "package@version", or "generated"
  std::vector<std::string> args;
  std::string stdin_file;                 // in the program's folder; "" reads /dev/null
  std::string output_file;                // in the program's folder; "" means standard output
  std::string output_sha256;
  std::string module_sha256;  // the pinned module's (none for a generated one)
};

const std::set<std::string> kRoles = {"held_out", "selection", "start_up"};

// The list, strictly: "FILE: programs[i] (NAME): what is wrong" for a missing or mistyped field.
std::vector<Program> read_programs(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_input_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  if (!j.is_object() || !j.contains("programs") || !j["programs"].is_array())
    throw std::runtime_error(path + ": no \"programs\" list");
  std::vector<Program> out;
  std::set<std::string> names;
  for (size_t i = 0; i < j["programs"].size(); ++i) {
    const auto& p = j["programs"][i];
    std::string where = fmt::format("{}: programs[{}]", path, i);
    auto text = [&](const nlohmann::json& obj, const char* key) -> std::string {
      if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string() || obj[key].get<std::string>().empty())
        throw std::runtime_error(fmt::format("{}: \"{}\" must be a text", where, key));
      return obj[key].get<std::string>();
    };
    Program g;
    g.name = text(p, "name");
    where += " (" + quote_input(g.name) + ")";
    if (g.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
      throw std::runtime_error(where + ": a name is lowercase letters, digits, '_' and '-' (it names a folder)");
    if (!names.insert(g.name).second) throw std::runtime_error(where + ": the name is listed twice");
    g.role = text(p, "role");
    if (!kRoles.count(g.role)) throw std::runtime_error(fmt::format("{}: role {} is not held_out, selection or start_up", where, quote_input(g.role)));
    g.what = text(p, "what");
    g.toolchain = text(p, "toolchain");
    const auto& source = p.value("source", nlohmann::json());
    const bool generated = source.is_object() && source.contains("generated");
    g.source = generated ? "generated" : text(source, "package") + "@" + text(source, "version");
    if (!generated) g.module_sha256 = text(source, "module_sha256");
    if (!p.contains("args") || !p["args"].is_array()) throw std::runtime_error(where + ": \"args\" must be a list of texts");
    for (const auto& a : p["args"]) {
      if (!a.is_string()) throw std::runtime_error(where + ": \"args\" must be a list of texts");
      g.args.push_back(a.get<std::string>());
    }
    if (p.contains("stdin")) g.stdin_file = text(p, "stdin");
    const auto& output = p.value("output", nlohmann::json());
    if (output.is_object() && output.contains("file")) {
      g.output_file = text(output, "file");
      g.output_sha256 = text(output, "sha256");
    } else {
      g.output_sha256 = text(output, "stdout_sha256");
    }
    if (g.output_sha256.size() != 64 || g.output_sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw std::runtime_error(where + ": the output's sha256 is not 64 lowercase hex digits");
    for (const std::string* f : {&g.stdin_file, &g.output_file})
      if (!f->empty() && (f->find('/') != std::string::npos || *f == "." || *f == ".."))
        throw std::runtime_error(fmt::format("{}: {} is not a file name in the program's folder", where, quote_input(*f)));
    out.push_back(std::move(g));
  }
  return out;
}

// An engine as a command: {module} is the program's module, {args} its arguments (spread).
struct ProcessEngine {
  std::string name;
  std::vector<std::string> argv;
};

std::vector<std::string> engine_argv(const ProcessEngine& e, const std::string& module, const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : e.argv) {
    if (a == "{args}") out.insert(out.end(), args.begin(), args.end());
    else if (a == "{module}") out.push_back(module);
    else out.push_back(a);
  }
  return out;
}

// The sha256 of a file, by coreutils' sha256sum (a Debian system always has it).
std::string file_sha256(const std::string& path) {
  ProcessOptions po;
  po.capture_stdout = true;
  po.max_output = 4096;
  po.timeout_s = 600;
  po.stderr_file = "/dev/null";  // its own words about the file are not ours to print unescaped
  ProcessResult r = run_process({"sha256sum", "-b", path}, po);
  if (!r.ok() || r.output.size() < 64) throw std::runtime_error("sha256sum " + path + ": " + r.describe("sha256sum"));
  return r.output.substr(0, 64);
}

struct ProgramsOptions {
  std::string list = DLAB_PROGRAMS_LIST, cache, only, dlab_run, name = "programs";
  std::vector<std::string> peers;
  double timeout = 600;
  RunProtocol protocol;
  RunDirectoryOptions out;
  bool no_save = false;
};

// One engine's run of one program, as the protocol times it: in the program's folder, its input on
// stdin, its output discarded (it was checked before), its exit status checked.
ProcessOptions run_options(const std::string& folder, const Program& p, double timeout) {
  ProcessOptions po;
  po.working_directory = folder;
  po.stdin_file = p.stdin_file.empty() ? "/dev/null" : (fs::path(folder) / p.stdin_file).string();
  po.own_process_group = true;  // a timeout kills what the engine started too
  po.timeout_s = timeout;
  return po;
}

// The check run: the output written, hashed and compared. "" when it matches, else why not.
std::string check_run(const std::vector<std::string>& argv, const std::string& folder, const Program& p, double timeout,
                      const TempDir& scratch) {
  ProcessOptions po = run_options(folder, p, timeout);
  // Dot names: a program's folder beside them is named without one (read_programs' rule).
  const std::string out = scratch.file(".stdout").string(), err = scratch.file(".stderr").string();
  po.stdout_file = out;
  po.stderr_file = err;
  const fs::path written = fs::path(folder) / (p.output_file.empty() ? "" : p.output_file);
  std::error_code ec;
  if (!p.output_file.empty()) fs::remove(written, ec);  // a run that writes nothing must not pass on an old file
  ProcessResult r = run_process(argv, po);
  if (!r.ok()) {
    std::string tail;
    try {
      tail = read_text_file(err);
    } catch (const std::exception&) {
    }
    if (tail.size() > 300) tail = "..." + tail.substr(tail.size() - 300);
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
    return r.describe(argv.front()) + (tail.empty() ? "" : ": " + escape_input(tail));
  }
  if (!p.output_file.empty() && !fs::is_regular_file(written, ec)) return "it wrote no " + p.output_file;
  std::string got;
  try {
    got = file_sha256(p.output_file.empty() ? out : written.string());
  } catch (const std::exception& e) {
    return e.what();
  }
  if (got != p.output_sha256)
    return fmt::format("its {} has sha256 {}, not the expected {}", p.output_file.empty() ? "output" : p.output_file, got, p.output_sha256);
  return "";
}

std::string default_cache() {
  if (const char* c = std::getenv("DLAB_PROGRAMS_CACHE"); c && *c) return c;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/dispatchlab/programs";
}

void run_programs(const ProgramsOptions& o) {
  std::vector<Program> programs = read_programs(o.list);
  if (!o.only.empty()) {
    std::vector<Program> chosen;
    for (const auto& n : split_commas(o.only)) {
      if (std::any_of(chosen.begin(), chosen.end(), [&](const Program& p) { return p.name == n; }))
        throw CLI::ValidationError("--only", fmt::format("{} listed twice", quote_input(n)));
      auto it = std::find_if(programs.begin(), programs.end(), [&](const Program& p) { return p.name == n; });
      if (it == programs.end()) throw CLI::ValidationError("--only", fmt::format("no program {} in {}", quote_input(n), o.list));
      chosen.push_back(*it);
    }
    programs = chosen;
  }
  // Absolute: each run starts in a folder of its own, where a relative path would mean another file.
  const std::string cache = fs::absolute(o.cache.empty() ? default_cache() : o.cache).lexically_normal().string();
  for (const auto& p : programs)
    if (!fs::is_regular_file(fs::path(cache) / p.name / "module.wasm"))
      throw std::runtime_error(fmt::format("{}: not fetched ({} has no module.wasm): run tools/fetch-programs{} (or `just programs`)",
                                           p.name, (fs::path(cache) / p.name).string(), o.cache.empty() ? "" : " --cache " + cache));
  // dlab-run first: the baseline every peer's ratio is paired against. Its one preopen is the
  // program's folder as "/", as wasm3 preopens its current folder; an import of the program's
  // richer host that no WASI provides traps if called (a program whose run calls one fails its
  // check), as wasm3 links such an import lazily.
  std::string dlab_run = o.dlab_run.empty() ? (fs::path(self_executable()).parent_path() / "dlab-run").string() : o.dlab_run;
  if (std::error_code ec; !fs::is_regular_file(dlab_run, ec) || ::access(dlab_run.c_str(), X_OK) != 0)
    throw CLI::ValidationError("--dlab-run", dlab_run + " is not an executable: build it (cmake --build build/release --target dlab-run)");
  std::vector<ProcessEngine> engines = {{"dlab-run", {dlab_run, "--dir-rw", ".::/", "--trap-unknown-imports", "{module}", "{args}"}}};
  for (const auto& peer : bench::parse_peers(o.peers)) {
    if (peer.name == "dlab-run") throw CLI::ValidationError("--peer", "dlab-run is this command's own engine: give the peer another name");
    if (std::find(peer.argv.begin(), peer.argv.end(), "{module}") == peer.argv.end() ||
        std::find(peer.argv.begin(), peer.argv.end(), "{args}") == peer.argv.end())
      throw CLI::ValidationError("--peer", fmt::format("{}: the command needs {{module}} and {{args}}, each a word of its own", peer.name));
    engines.push_back({peer.name, peer.argv});
  }
  // Each run starts in the program's folder: a relative program path is made absolute here, for
  // GNU time (which execs it from there) as much as for the runs themselves.
  for (auto& e : engines)
    if (e.argv.front().find('/') != std::string::npos) e.argv.front() = fs::absolute(e.argv.front()).string();
  // Which engine dlab-run is, in its own words, for the sidecar: the engine, its IR and lowering.
  ProcessOptions ask;
  ask.capture_stdout = true;
  ask.max_output = 1 << 16;
  ask.timeout_s = 60;
  ProcessResult said = run_process({engines.front().argv.front(), "--engine"}, ask);
  if (!said.ok()) throw std::runtime_error(dlab_run + " --engine: " + said.describe(dlab_run));
  while (!said.output.empty() && said.output.back() == '\n') said.output.pop_back();
  std::optional<RunDirectory> dir;
  if (!o.no_save) dir = o.out.resolve(this_machine(), experiment_files(o.name));
  const std::string run_id = dir ? dir->run_id() : "unsaved";
  const MachineFingerprint& machine = this_machine();
  BackendSet backends = BackendSet::for_this_machine();
  CounterPlan counters = plan_counters(MetricCatalog::builtin(), backends, this_host_cpu());
  // A whole process: only wall-time metrics mean anything (TSC ticks and the cycle estimate).
  Meter meter(counters, backends, std::vector<std::string>{"tsc_ticks", "cycles_tsc_estimate"});
  ExperimentTables all;
  nlohmann::json groups = nlohmann::json::array();
  RunResult last;
  TempDir scratch("programs");
  fmt::print(stderr, "[wasm programs] {} programs x {} engines as processes, {} (+{} warm-up), interleaved per program\n",
             programs.size(), engines.size(), o.protocol.rounds_text(), o.protocol.warmup_rounds);
  for (size_t pi = 0; pi < programs.size(); ++pi) {
    const Program& p = programs[pi];
    const fs::path fetched = fs::path(cache) / p.name;
    const std::string module = (fetched / "module.wasm").string();
    if (!p.module_sha256.empty()) {
      if (std::string got = file_sha256(module); got != p.module_sha256)
        throw std::runtime_error(fmt::format("{}: {} has sha256 {}, not the pinned {}: run tools/fetch-programs again", p.name, module, got,
                                             p.module_sha256));
    }
    // The runs' folder: a copy of the program's inputs in a scratch folder, so that no guest (each
    // may write where it runs) changes the cache; the module is read from the cache by the engine.
    const fs::path work = scratch.path() / p.name;
    fs::create_directories(work);
    for (const auto& entry : fs::directory_iterator(fetched)) {
      const std::string leaf = entry.path().filename().string();
      if (leaf == "module.wasm" || leaf == ".fetched") continue;
      fs::copy(entry.path(), work / leaf, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    }
    const std::string folder = work.string();
    if (!p.stdin_file.empty() && !fs::is_regular_file(work / p.stdin_file))
      throw std::runtime_error(fmt::format("{}: its input {} is not in {}: run tools/fetch-programs again", p.name, p.stdin_file,
                                           fetched.string()));
    nlohmann::json notes = nlohmann::json::object();
    std::vector<MeasuredCase> cases;
    for (const auto& e : engines) {
      std::vector<std::string> argv = engine_argv(e, module, p.args);
      std::string why = check_run(argv, folder, p, o.timeout, scratch);
      if (!why.empty()) {
        // dlab-run must run every program of the list; a peer may not (said, and left out).
        if (e.name == "dlab-run") throw std::runtime_error(fmt::format("{}: dlab-run: {}", p.name, why));
        fmt::print(stderr, "[wasm programs] {}: {} cannot run it: {}\n", p.name, e.name, why);
        notes[e.name] = {{"runs", false}, {"why", why}};
        continue;
      }
      std::string rss_why;
      ProcessOptions base = run_options(folder, p, o.timeout);
      std::optional<long> rss_kb = bench::peak_resident_kb(argv, o.timeout, rss_why, base.working_directory, base.stdin_file);
      notes[e.name] = {{"runs", true}, {"peak_rss_kb", rss_kb ? nlohmann::json(*rss_kb) : nlohmann::json()},
                       {"peak_rss_why", rss_kb ? "" : rss_why}};
      const double timeout = o.timeout;
      const std::string engine_name = e.name;
      cases.push_back({fmt::format("{}/{}", p.name, e.name),
                       [argv, folder, p, timeout, engine_name] {
                         ProcessOptions po = run_options(folder, p, timeout);
                         po.quiet = true;
                         ProcessResult r = run_process(argv, po);
                         if (!r.ok())
                           throw std::runtime_error(fmt::format("{}: {} failed in a timed run: {}", p.name, engine_name, r.describe(argv.front())));
                       },
                       1.0,
                       "run",
                       // (the toolchain and what the program does are in the sidecar: their text may hold ';')
                       {{"program", p.name},
                        {"role", p.role},
                        {"source", p.source},
                        {"engine", e.name},
                        {"engine_command", fmt::format("{}", fmt::join(e.argv, " "))},
                        {"peak_rss_kb", rss_kb ? std::to_string(*rss_kb) : std::string()},
                        {"output_sha256", p.output_sha256}}});
    }
    auto progress = [&](int done, int total, const std::string&) {
      if (done % static_cast<int>(cases.size()) == 0)
        fmt::print(stderr, "[wasm programs] {}/{} {}: round {} done (at most {})\n", pi + 1, programs.size(), p.name,
                   done / static_cast<int>(cases.size()), total / static_cast<int>(cases.size()));
    };
    RunProtocol fixed = o.protocol;
    fixed.max_samples = 0;  // each sample is a process start: a fixed count of rounds
    last = run_protocol(fixed, meter, cases, progress);
    auto t = experiment_tables(run_id, o.name, last, cases, machine);
    for (size_t r = 0; r < t.summary.size(); ++r) {
      if (t.summary.at(r, "metric") != "tsc_ticks" || t.summary.at(r, "median").empty() || machine.tsc.tsc_hz <= 0) continue;
      auto c = std::find_if(cases.begin(), cases.end(), [&](const MeasuredCase& m) { return m.name == t.summary.at(r, "case"); });
      const std::string rss = c == cases.end() ? "" : c->params.at("peak_rss_kb");
      fmt::print("{:<24} {:>10.1f} ms  {:>8} peak  {}\n", t.summary.at(r, "case"),
                 std::stod(t.summary.at(r, "median")) / machine.tsc.tsc_hz * 1e3,
                 rss.empty() ? "?" : fmt::format("{:.1f} MiB", std::stod(rss) / 1024),
                 t.summary.at(r, "ratio").empty() ? "baseline" : fmt::format("x{:.2f} dlab-run's time", std::stod(t.summary.at(r, "ratio"))));
    }
    std::fflush(stdout);
    all.summary.append(t.summary);
    all.samples.append(t.samples);
    groups.push_back({{"program", p.name}, {"role", p.role}, {"what", p.what}, {"toolchain", p.toolchain}, {"source", p.source},
                      {"args", p.args}, {"stdin", p.stdin_file}, {"output", p.output_file.empty() ? "stdout" : p.output_file},
                      {"output_sha256", p.output_sha256}, {"baseline", cases.front().name}, {"engines", notes}});
  }
  if (dir) {
    auto sidecar = sidecar_json(run_id, machine, &last, {"summary", "samples"});
    sidecar["programs"] = groups;
    sidecar["programs_list"] = o.list;
    sidecar["dlab_run_engine"] = said.output;
    write_experiment(*dir, o.name, all, sidecar);
    fmt::print(stderr, "wrote {}/{}.summary.csv\n", dir->path().string(), o.name);
  }
}

}  // namespace

void add_wasm_programs_command(CLI::App& wasm_cmd) {
  auto* cmd = wasm_cmd.add_subcommand(
      "programs",
      "time whole WASI programs built by others with other toolchains (interpreter/programs/programs.json; tools/fetch-programs "
      "fetches them) as processes: dlab-run against each --peer, interleaved per program; wall time per run (start-up "
      "included), peak resident memory, every output checked first; into programs.summary.csv");
  if (!command_selected(*cmd)) return;
  auto o = std::make_shared<ProgramsOptions>();
  cmd->add_option("--list", o->list, "the program list")->check(CLI::ExistingFile)->capture_default_str();
  cmd->add_option("--cache", o->cache, "where tools/fetch-programs put them (default $DLAB_PROGRAMS_CACHE, else ~/.cache/dispatchlab/programs)");
  cmd->add_option("--only", o->only, "comma-separated program names (default: every one)");
  cmd->add_option("--dlab-run", o->dlab_run, "the dlab-run to time (default: the one beside this dlab)");
  cmd->add_option("--peer", o->peers,
                  "NAME=COMMAND: another engine run the same way, {module} and {args} its words for the module and the "
                  "program's arguments, in the program's folder (e.g. wasm3=build/peers/wasm3/wasm3 {module} {args}); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--timeout", o->timeout, "seconds one run may take before it is killed (1..86400)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--name", o->name, "experiment name: the files are <name>.summary.csv ...")
      ->check(experiment_name_validator())
      ->capture_default_str();
  add_protocol_options(cmd, o->protocol);
  cmd->add_flag("--no-save", o->no_save, "print only, write no files");
  o->out.add_to(cmd, "results");
  cmd->callback([o] { run_programs(*o); });
}

}  // namespace dlab::cli
