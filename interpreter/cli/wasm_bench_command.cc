// `dlab wasm bench`: the interpreter's dispatch modes on real programs, under the harness's run
// protocol. One group per workload: every dispatch mode of that workload in one interleaved
// protocol run, the first mode (switch) its baseline, so each mode's change is a paired ratio
// with its spread. Before timing, every mode must return the workload's checksum: a mode that
// computes something else is an error, not a data point.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "cli/commands.h"
#include "dispatchlab/predictors/llvm_mca.h"
#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/result_writer.h"
#include "../bench/cachegrind_cases.h"
#include "../bench/call_path.h"
#include "../bench/dbinop.h"
#include "../bench/engine_simulation.h"
#include "engine_choices.h"
#include "../bench/bench_engine.h"
#include "../workloads/corpus_suite.h"
#include "../workloads/workload_suites.h"
#include "../bench/peers.h"
#include "wasi_command.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/harness/statistics.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/validator.h"
#include "dispatchlab/interpreter/wasi.h"

namespace dlab::cli {

namespace {

// One workload of a bench: an export taking one i32 (its size) and returning a checksum. Generated
// ones (the D-binop family) count their work in instructions and have no native build.
struct Workload {
  std::string name;
  uint32_t size = 0;
  uint64_t instructions_per_size = 0;  // > 0: values per wasm instruction (size x this), else per call
  int pairs = -1, distinct_pairs = -1;  // D-binop only
};

// One dispatch mode's runtime with the module instantiated and its reactor initialised.
struct Prepared {
  std::unique_ptr<wasm::Runtime> rt;
  wasm::Instance* inst = nullptr;
  wasm::WasiOptions wasi;
  std::map<std::string, uint32_t> checksums;  // workload -> the checksum its checking call returned
  uint64_t calls = 0;                         // timed calls so far (warm-up included)
};

using Engine = bench::BenchEngine;

std::unique_ptr<Prepared> prepare(const std::string& path, const wasm::Module& m, const Engine& e, uint64_t clock_step_ns,
                                  uint64_t heap_limit) {
  auto p = std::make_unique<Prepared>();
  p->rt = bench::bench_runtime(e.config);
  if (heap_limit) p->rt->set_heap_limit(heap_limit);
  p->wasi.args = {"kernels.wasm"};
  p->wasi.fixed_clock_step_ns = clock_step_ns;
  try {
    wasm::register_wasi(*p->rt, m, p->wasi);
    p->inst = &p->rt->instantiate(m);
    if (auto init = p->inst->exports.find("_initialize"); init != p->inst->exports.end()) p->rt->invoke(init->second.func, {});
  } catch (const wasm::ProcExit& x) {
    throw std::runtime_error(fmt::format("{}: its initialisation called proc_exit({}) in {}", path, x.code(), e.name));
  } catch (const std::exception& x) {
    throw std::runtime_error(fmt::format("{}: cannot instantiate it in {}: {}", path, e.name, x.what()));
  }
  return p;
}

// A workload's export: a function taking its size (one i32) and returning a checksum (one i32).
// Anything else is named with the module, the export and what is wrong, before anything is timed.
wasm::FuncInst* workload_export(const Prepared& p, const std::string& path, const std::string& name) {
  auto ex = p.inst->exports.find(name);
  if (ex == p.inst->exports.end()) throw std::runtime_error(fmt::format("{} has no export {}", path, name));
  if (ex->second.kind != wasm::ExternKind::kFunc || !ex->second.func)
    throw std::runtime_error(fmt::format("{}: the export {} is not a function (a workload is a function (i32) -> i32)", path, name));
  const wasm::FuncType& t = ex->second.func->type;
  if (t.params.size() != 1 || t.params[0] != wasm::ValType::kI32 || t.results.size() != 1 || t.results[0] != wasm::ValType::kI32)
    throw std::runtime_error(fmt::format("{}: the export {} takes {} parameters and returns {} results; a workload is a function "
                                         "(i32 size) -> (i32 checksum)",
                                         path, name, t.params.size(), t.results.size()));
  return ex->second.func;
}

// One call of a workload, its trap named.
uint32_t call_workload(const Prepared& p, wasm::FuncInst* f, const std::string& path, const std::string& name, uint32_t size,
                       const std::string& engine) {
  try {
    return static_cast<uint32_t>(p.rt->invoke(f, {wasm::Value::i32(size)}).at(0).lo);
  } catch (const wasm::Trap& x) {
    throw std::runtime_error(fmt::format("{}: {}({}) trapped in {}: {}", path, name, size, engine, x.what()));
  } catch (const wasm::ProcExit& x) {
    throw std::runtime_error(fmt::format("{}: {}({}) called proc_exit({}) in {}", path, name, size, x.code(), engine));
  }
}

// A timed call of a workload that did not return: what it did, with where (never inlined into
// the timed lambda that calls it).
[[noreturn]] __attribute__((noinline, cold)) void failed_timed_call(const std::string& module, const std::string& workload,
                                                                    uint64_t size, const std::string& engine, uint64_t call,
                                                                    const std::exception& x) {
  std::string what = x.what();
  if (const auto* exit = dynamic_cast<const wasm::ProcExit*>(&x)) what = fmt::format("called proc_exit({})", exit->code());
  else if (dynamic_cast<const wasm::Exception*>(&x)) what = "threw an exception no handler caught";  // (a Trap too)
  else if (dynamic_cast<const wasm::Trap*>(&x)) what = "trapped: " + what;
  throw std::runtime_error(fmt::format("{}: {}({}) in {}, timed call {}: {} (its checking call had returned)", module, workload,
                                       size, engine, call, what));
}

// `dlab wasm run --invoke` of a workload in an engine, as cachegrind's and the simulation's cases
// run it: `calls_flag` is --repeat (one run of `calls` calls) or --cachegrind-pair (N and 2N, forked).
std::vector<std::string> workload_run_argv(const std::string& self, const Engine& e, const Workload& w, const std::string& module,
                                           const std::string& clock, uint64_t heap_limit, const char* calls_flag, uint64_t calls) {
  std::vector<std::string> argv{self, "wasm", "run"}, engine = e.config.argv();
  argv.insert(argv.end(), engine.begin(), engine.end());
  argv.insert(argv.end(), {"--clock", clock, "--heap-limit", std::to_string(heap_limit), "--invoke", w.name, calls_flag,
                           std::to_string(calls), module, std::to_string(w.size)});
  return argv;
}

// The rows' params of a workload in an engine.
std::map<std::string, std::string> workload_case_params(const Engine& e, const Workload& w, const std::string& module, const std::string& clock,
                                                        uint64_t heap_limit) {
  return bench::engine_params(e.config, {{"workload", w.name}, {"size", std::to_string(w.size)},
                                         {"binop_pairs", w.pairs >= 0 ? std::to_string(w.pairs) : ""},
                                         {"corpus_role", workloads::corpus_role(w.name)},
                                         {"clock", clock},
                                         {"heap_limit", heap_limit ? std::to_string(heap_limit) : ""},
                                         {"module", std::filesystem::path(module).filename().string()}});
}


// Each case under cachegrind: `dlab wasm run --invoke` with N and with 2N calls, the difference
// kept (cachegrind_cases.h).
// A peer is counted the same way, as a whole process making N and 2N calls of the workload in the
// suite's command module, so its start-up (decoding, compiling) cancels as dlab's does; its
// checksum is checked by the timed bench, not here (cachegrind's children print to /dev/null).
void run_valgrind(const std::string& module, const std::string& clock, uint64_t heap_limit, const std::vector<Workload>& workloads,
                  const std::vector<Engine>& modes, uint64_t n, const std::optional<RunDirectory>& dir, const std::string& experiment,
                  const bench::CachegrindOptions& options, const std::vector<bench::Peer>& peers, const std::string& command_module) {
  const std::string self = self_executable();
  std::vector<bench::CachegrindCase> cases;
  for (const auto& w : workloads)
    for (const auto& e : modes) {
      auto run_argv = [self, e, w, module, clock, heap_limit](const char* calls_flag) {
        return [=](uint64_t calls) { return workload_run_argv(self, e, w, module, clock, heap_limit, calls_flag, calls); };
      };
      cases.push_back({fmt::format("{}/{}", w.name, e.name), run_argv("--repeat"), workload_case_params(e, w, module, clock, heap_limit),
                       "call",
                       e.baseline.empty() ? std::string() : fmt::format("{}/{}", w.name, e.baseline), n});
      // The deadline engines' clock is a thread, which a forked child would not have.
      if (!wasm::budget_needs_timer(e.config.budget)) cases.back().pair_argv = run_argv("--cachegrind-pair");
    }
  for (const auto& w : workloads)
    for (const auto& p : peers) {
      if (!bench::command_module_has(command_module, w.name)) {
        fmt::print(stderr, "[wasm bench] peer {}: {} is not in {} (the command build leaves out what needs tail calls)\n", p.name, w.name,
                   command_module);
        continue;
      }
      cases.push_back({fmt::format("{}/{}", w.name, p.name),
                       [p, w, command_module](uint64_t calls) { return peer_argv(p, command_module, w.name, w.size, calls); },
                       {{"workload", w.name}, {"size", std::to_string(w.size)}, {"peer", p.name}, {"corpus_role", workloads::corpus_role(w.name)},
                        {"module", std::filesystem::path(command_module).filename().string()}},
                       "call", fmt::format("{}/{}", w.name, modes.front().name), n});
    }
  run_cachegrind_cases(cases, dir, experiment, options);
}

// Each case simulated (engine_simulation.h): one call of the workload at its quick size in
// `dlab wasm run --invoke`, traced in the engine's code.
void run_predict(const std::string& module, const std::string& clock, uint64_t heap_limit, const std::vector<Workload>& workloads,
                 const std::vector<Engine>& engines, const bench::EngineSimulationOptions& options, const std::optional<RunDirectory>& dir,
                 const std::string& experiment) {
  const std::string self = self_executable();
  std::vector<bench::SimulatedCase> cases;
  for (const auto& w : workloads)
    for (const auto& e : engines) {
      auto params = workload_case_params(e, w, module, clock, heap_limit);
      params["traced_calls"] = "1";
      cases.push_back({fmt::format("{}/{}", w.name, e.name), workload_run_argv(self, e, w, module, clock, heap_limit, "--repeat", 1), e.config,
                       params});
    }
  bench::run_simulated_cases(cases, options, dir, experiment);
}

// The bench's options, as parsed.
struct BenchOptions {
  // Every mode of this build, switch (the first) the baseline; every technique.
  std::string module, workloads, dispatch = join(built_dispatch_modes(), ","),
              placements = wasm::placement_name(wasm::EngineConfig{}.placement), lowerings = default_lowering(), name = "wasm", dbinop;
  // The other axes default to a default EngineConfig's: no budget, checked bounds, the stack IR.
  std::string budgets = wasm::budget_name(wasm::EngineConfig{}.budget);
  std::string bounds = wasm::bounds_name(wasm::EngineConfig{}.bounds);
  std::string irs = wasm::ir_name(wasm::EngineConfig{}.lowering.ir);
  std::string suite = "kernels";  // a SUITE row of interpreter/workloads/workloads.def
  uint64_t heap_limit = 0;
  std::vector<std::string> peers;
  uint64_t peer_calls = 5;
  double peer_timeout = 600;
  std::string clock = "real";  // the engines' WASI clocks: real, or fixed:NS
  bool quick = false, no_save = false, valgrind = false, no_native = false, calls = false;
  std::string calls_child;  // hidden: the child of --calls --valgrind (one kind of call, one engine)
  uint32_t calls_child_n = 0;
  uint64_t valgrind_calls = 1;
  bool valgrind_functions = false;
  bench::EngineSimulationOptions predict;  // --predict: predictors empty when not asked
  std::string ideal_mcpu = "native";       // --ideal-mcpu, resolved into predict.ideal
  bench::CachegrindOptions valgrind_options;
  RunProtocol protocol;
  RunDirectoryOptions out;
};

// The family of one of dlab's handlers from its cachegrind name (a tail-call engine's handler is
// the function dlab::wasm::(anonymous namespace)::h_<op>(...)); "" for any other function.
std::string handler_family(const std::string& function) {
  const size_t at = function.find("::h_");
  if (at == std::string::npos || function.rfind("dlab::wasm::", 0) != 0) return "";
  const size_t begin = at + 4, end = function.find('(', begin);
  return wasm::op_family_of(std::string_view(function).substr(begin, end == std::string::npos ? std::string::npos : end - begin));
}

// The files a cachegrind bench writes, checked before anything is counted.
std::vector<std::string> valgrind_files(const std::string& experiment, bool functions) {
  std::vector<std::string> files = experiment_files(experiment);
  if (functions) files.push_back(experiment + ".functions.csv");
  return files;
}

// The command line's consistency, before anything runs or is created: an option that would be
// silently ignored is refused (CLI::ValidationError, exit 2), as is an empty list. Returns the peers.
std::vector<bench::Peer> check_bench_options(const BenchOptions& o, const CLI::App& cmd) {
  auto given = [&](const char* opt) { return cmd.count(opt) > 0; };
  if (o.valgrind)
    for (const char* opt : {"--peer-calls", "--peer-timeout", "--samples", "--max-samples", "--stop-half-width", "--warmup", "--pin", "--quick",
                            "--no-native"})
      if (given(opt))
        throw CLI::ValidationError(opt, "does not apply with --valgrind (cachegrind counts dlab's engines once each, at quick sizes)");
  if (given("--predict")) {
    for (const char* opt : {"--valgrind", "--calls", "--peer", "--peer-calls", "--peer-timeout", "--samples", "--max-samples",
                            "--stop-half-width", "--warmup", "--pin", "--quick", "--no-native"})
      if (given(opt))
        throw CLI::ValidationError(opt, "does not apply with --predict (it simulates dlab's engines once each, one call at quick sizes)");
    try {
      bench::check_engine_simulation(o.predict);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--predict", e.what());
    }
  } else {
    for (const char* opt : {"--predict-window", "--predict-load-addresses", "--ideal-mcpu"})
      if (given(opt)) throw CLI::ValidationError(opt, "applies only with --predict");
  }
  if (!o.valgrind && given("--valgrind-calls")) throw CLI::ValidationError("--valgrind-calls", "applies only with --valgrind");
  if (!o.valgrind && given("--valgrind-reuse")) throw CLI::ValidationError("--valgrind-reuse", "applies only with --valgrind");
  if (given("--valgrind-functions")) {
    if (!o.valgrind) throw CLI::ValidationError("--valgrind-functions", "applies only with --valgrind");
    if (given("--valgrind-reuse"))
      throw CLI::ValidationError("--valgrind-functions", "not with --valgrind-reuse (a reused case has its totals only)");
    if (o.no_save) throw CLI::ValidationError("--valgrind-functions", "writes <name>_valgrind.functions.csv: not with --no-save");
  }
  if (o.calls && o.valgrind && given("--valgrind-calls"))
    throw CLI::ValidationError("--valgrind-calls", "the call path sets its own repetitions under cachegrind");
  if (o.calls)
    for (const char* opt : {"--module", "--workloads", "--dbinop", "--peer", "--peer-calls", "--peer-timeout", "--no-native", "--clock"})
      if (given(opt)) throw CLI::ValidationError(opt, "does not apply with --calls (the call path runs its own generated modules)");
  if (o.peers.empty())
    for (const char* opt : {"--peer-calls", "--peer-timeout"})
      if (given(opt)) throw CLI::ValidationError(opt, "applies only with --peer");
  const workloads::WorkloadSuite& suite = workloads::workload_suite(o.suite);  // --suite's check has made it one
  if (suite.command.empty() && !o.peers.empty())
    throw CLI::ValidationError("--peer", fmt::format("runs the suite's WASI command module, and this suite has none: not with --suite {}", o.suite));
  if (given("--dbinop") && given("--suite"))
    throw CLI::ValidationError("--dbinop", fmt::format("generates its own module: not with --suite {}", o.suite));
  if (given("--workloads") && split_commas(o.workloads).empty())
    throw CLI::ValidationError("--workloads", "an empty list (leave the option out for every workload)");
  if (given("--dbinop")) {
    if (split_commas(o.dbinop).empty()) throw CLI::ValidationError("--dbinop", "an empty list: give pair counts, e.g. 5,9,13");
    if (given("--workloads") || given("--module"))
      throw CLI::ValidationError("--dbinop", "generates its own module and workloads: not with --module or --workloads");
    if (!o.peers.empty()) throw CLI::ValidationError("--peer", "runs the kernels' command module, not --dbinop");
  }
  return bench::parse_peers(o.peers);
}

// --dbinop's pair counts: each 1..200, none twice.
std::vector<int> parse_dbinop(const std::string& list) {
  std::vector<int> pairs;
  for (const auto& x : split_commas(list)) {
    int d = 0;
    auto [end, ec] = std::from_chars(x.data(), x.data() + x.size(), d);
    if (ec != std::errc() || end != x.data() + x.size() || d < 1 || d > 200)
      throw CLI::ValidationError("--dbinop", fmt::format("'{}' is not a pair count in 1..200", x));
    if (std::find(pairs.begin(), pairs.end(), d) != pairs.end()) throw CLI::ValidationError("--dbinop", fmt::format("{} is listed twice", d));
    pairs.push_back(d);
  }
  return pairs;
}

// The engines: every chosen placement in every chosen mode with every chosen lowering. A pair
// that cannot exist is said and recorded in `not_built`, never silently dropped.
std::vector<Engine> choose_engines(const BenchOptions& o, std::vector<std::string>& not_built) {
  auto chosen_modes = choose_from(o.dispatch, dispatch_choices(), "--dispatch", false);
  auto chosen_placements = choose_from(o.placements, placement_choices(), "--placements", false);
  auto chosen_lowerings = choose_from(o.lowerings, lowering_choices(), "--lowerings", false);
  auto chosen_budgets = choose_from(o.budgets, budget_choices(), "--budgets", false);
  auto chosen_irs = choose_from(o.irs, ir_choices(), "--irs", false);
  auto chosen_bounds = choose_from(o.bounds, bounds_choices(), "--bounds", false);
  std::vector<Engine> modes;
  for (const auto& pl : chosen_placements)
    for (const auto& d : chosen_modes) {
      auto mode = *wasm::parse_dispatch(d);
      auto place = *wasm::parse_placement(pl);
      for (const auto& ir_choice : chosen_irs)
      for (const auto& low : chosen_lowerings) {
        wasm::Lowering lowering = *wasm::parse_lowering(low);
        lowering.ir = *wasm::parse_ir(ir_choice);
        if (std::string why = wasm::ir_unavailable(lowering.ir, mode, place); !why.empty()) {
          if (low == chosen_lowerings.front()) {
            fmt::print(stderr, "[wasm bench] not run: {} x {}: {}\n", d, pl, why);
            not_built.push_back(why);
          }
          continue;
        }
        std::string stem = (chosen_placements.size() > 1 ? d + "/" + pl : d) + (chosen_irs.size() > 1 ? "/" + ir_choice : "") +
                           (chosen_lowerings.size() > 1 ? "/" + low : "");
        std::string first;  // the engine's first budget that is built: the others' baseline
        for (const auto& b : chosen_budgets)
          for (const auto& bd : chosen_bounds) {
            auto budget = *wasm::parse_budget(b);
            auto bounds = *wasm::parse_bounds(bd);
            if (std::string why = wasm::engine_unavailable(mode, place, budget, bounds); !why.empty()) {
              if (low == chosen_lowerings.front()) {
                fmt::print(stderr, "[wasm bench] not run: {}\n", why);
                not_built.push_back(why);
              }
              continue;
            }
            std::string name = stem + (chosen_budgets.size() > 1 ? "/" + b : "") + (chosen_bounds.size() > 1 ? "/" + bd : "");
            modes.push_back({{mode, place, budget, bounds, lowering}, name, first});
            if (first.empty()) first = name;
          }
      }
    }
  if (modes.empty()) throw CLI::ValidationError("--placements", "no engine of these modes and placements is built: " + not_built.front());
  return modes;
}

// --- plan: what the command line asks for, checked and resolved before anything is created ---

struct BenchPlan {
  std::vector<bench::Peer> peers;
  std::vector<Workload> workloads;
  std::vector<Engine> engines;
  std::vector<std::string> not_built;  // engines asked for that cannot exist, with why
  std::optional<TempDir> scratch;      // the D-binop module's folder: removed at the end, or on SIGINT/SIGTERM
  wasm::Module module;
  std::string command_module;          // the peers' WASI command build of the kernels
};

// The D-binop family's module, generated into the plan's scratch folder; its workloads.
void plan_dbinop(BenchOptions& o, BenchPlan& plan, bool small) {
  std::vector<int> pairs = parse_dbinop(o.dbinop);
  std::vector<bench::DBinopFunction> functions;
  std::string wat = dbinop_module_wat(pairs, functions);
  plan.scratch.emplace("dbinop");
  auto wat_path = plan.scratch->write("dbinop.wat", wat);
  auto wasm_path = plan.scratch->file("dbinop.wasm");
  ProcessOptions po;
  po.stderr_file = plan.scratch->file("wat2wasm.err").string();
  ProcessResult r = run_process({"wat2wasm", wat_path.string(), "-o", wasm_path.string()}, po);
  if (!r.ok()) throw std::runtime_error(r.describe("wat2wasm") + ": " + read_text_file(po.stderr_file));
  o.module = wasm_path.string();
  o.no_native = true;  // generated code has no C source
  for (const auto& f : functions)
    plan.workloads.push_back({f.name, small ? 5000u : 20000u, f.instructions_per_iteration, f.pairs, f.distinct_pairs});
}

wasm::Module read_bench_module(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::runtime_error(path == workloads::workload_suite("kernels").module_path() ? path + " not found: it is built with the project when wasi-libc is installed (run "
                                                               "./tools/bootstrap, then just build)"
                                                      : path + " not found (--module)");
  return load_checked_module(path);
}

// Fills `plan` in place: it owns a scratch folder, which is not copied or moved.
void plan_bench(BenchOptions& o, const CLI::App& cmd, BenchPlan& plan) {
  // Everything the command line decides is checked before anything is made (a run directory, a
  // scratch folder, a generated module): a refused command line leaves nothing behind.
  plan.peers = check_bench_options(o, cmd);
  if (o.quick) apply_quick_protocol(&cmd, o.protocol);
  const bool small = o.quick || o.valgrind || !o.predict.predictors.empty();  // cachegrind runs ~50x slower, a trace more
  if (cmd.count("--dbinop")) plan_dbinop(o, plan, small);
  const workloads::WorkloadSuite& suite = workloads::workload_suite(o.suite);
  suite.require_built();
  if (!cmd.count("--module") && !plan.scratch) o.module = suite.module_path();  // --dbinop's generated module stays
  plan.module = read_bench_module(o.module);
  plan.engines = choose_engines(o, plan.not_built);
  if (!plan.scratch) {
    std::vector<std::string> workload_names;
    for (const auto& w : suite.workloads) workload_names.push_back(w.name);
    std::vector<std::string> wanted = choose_from(o.workloads, workload_names, "--workloads");
    for (const auto& w : suite.workloads)
      if (std::find(wanted.begin(), wanted.end(), w.name) != wanted.end())
        // a size whose cost is not linear (fib's, a tree depth, a matrix order) has its own quick size
        plan.workloads.push_back({w.name, small ? w.quick_size() : w.size});
  }
  plan.command_module = suite.command_path();
  if (!plan.peers.empty() && !std::filesystem::exists(plan.command_module))
    throw std::runtime_error(plan.command_module + " not found: it is built with the project when wasi-libc is installed");
}

// --- prepare: every engine instantiated, every workload checked ---

std::vector<std::unique_ptr<Prepared>> prepare_engines(const BenchOptions& o, const BenchPlan& plan) {
  std::vector<std::unique_ptr<Prepared>> prepared;
  for (const auto& e : plan.engines) {
    prepared.push_back(prepare(o.module, plan.module, e, wasm::parse_clock(o.clock), o.heap_limit));
    if (o.valgrind || !o.predict.predictors.empty()) break;  // they run `dlab wasm run`; one instance checks the exports
  }
  // One call each, too: a workload that traps is found before a run directory exists. Its
  // checksum is the one every engine must then return (workload_cases does not call it again).
  Prepared& first = *prepared.front();
  for (const auto& w : plan.workloads)
    first.checksums[w.name] =
        call_workload(first, workload_export(first, o.module, w.name), o.module, w.name, w.size, plan.engines.front().name);
  return prepared;
}

// --- run: one interleaved protocol run per workload group ---

struct BenchRun {
  BenchRun(const BenchOptions& o, const BenchPlan& plan, std::string run_id)
      : o(o), plan(plan), machine(this_machine()), run_id(std::move(run_id)), backends(BackendSet::for_this_machine()),
        counters(plan_counters(MetricCatalog::builtin(), backends, this_host_cpu())), meter(counters, backends) {
    // Peers: only wall-time metrics (TSC ticks and the cycle estimate) mean anything for another
    // process, so their groups have a meter with just those.
    if (!plan.peers.empty())
      wall_meter = std::make_unique<Meter>(counters, backends, std::vector<std::string>{"tsc_ticks", "cycles_tsc_estimate"});
  }
  const BenchOptions& o;
  const BenchPlan& plan;
  const MachineFingerprint& machine;
  std::string run_id;
  BackendSet backends;
  CounterPlan counters;
  Meter meter;
  std::unique_ptr<Meter> wall_meter;
  ExperimentTables all;
  nlohmann::json groups = nlohmann::json::array();
  RunResult last;
};

// The cases of one workload: every engine (each must return the first's checksum) and the native
// build of the same C in the same rounds (the "vs native" of every engine).
std::vector<MeasuredCase> workload_cases(const BenchRun& run, const std::vector<std::unique_ptr<Prepared>>& prepared, const Workload& w,
                                    uint32_t& checksum) {
  const auto& o = run.o;
  const auto& modes = run.plan.engines;
  std::vector<MeasuredCase> measured;
  for (size_t mi = 0; mi < modes.size(); ++mi) {
    Prepared* p = prepared[mi].get();
    wasm::FuncInst* f = workload_export(*p, o.module, w.name);
    std::vector<wasm::Value> args{wasm::Value::i32(w.size)};
    auto checked = p->checksums.find(w.name);
    uint32_t got = checked != p->checksums.end() ? checked->second : call_workload(*p, f, o.module, w.name, w.size, modes[mi].name);
    if (mi == 0) checksum = got;
    else if (got != checksum)
      throw std::runtime_error(fmt::format("{}: {} returned {:#x}, {} returned {:#x}", w.name, modes[mi].name, got, modes[0].name, checksum));
    // A timed call that traps, exits or throws is named with the module, the workload, the engine
    // and the call (it said only "unreachable"). On the timed path the try adds one register save
    // and restore around the call (x86-64 disassembly compared before and after, clang 19 -O3):
    // its handler is reached through the unwind table only when something is thrown.
    measured.push_back({fmt::format("{}/{}", w.name, modes[mi].name),
                        [p, f, args, module = o.module, workload = w.name, engine = modes[mi].name] {
                          try {
                            p->rt->invoke(f, args);
                          } catch (const std::exception& x) {
                            failed_timed_call(module, workload, args.at(0).lo, engine, p->calls + 1, x);
                          }
                          ++p->calls;
                        },
                        w.instructions_per_size ? static_cast<double>(w.size) * static_cast<double>(w.instructions_per_size) : 1,
                        w.instructions_per_size ? "instruction" : "call",
                        bench::engine_params(modes[mi].config, {{"workload", w.name},
                                                         {"binop_pairs", w.pairs >= 0 ? std::to_string(w.pairs) : ""},
                                                         {"distinct_pairs", w.distinct_pairs >= 0 ? std::to_string(w.distinct_pairs) : ""},
                                                         {"size", std::to_string(w.size)},
                                                         {"corpus_role", workloads::corpus_role(w.name)},
                                                         {"checksum", fmt::format("{:08x}", got)},
                                                         {"clock", o.clock},
                                                         {"module", std::filesystem::path(o.module).filename().string()}}),
                        modes[mi].baseline.empty() ? std::string() : fmt::format("{}/{}", w.name, modes[mi].baseline)});
  }
  if (o.no_native) return measured;
  workloads::NativeKernel k = workloads::workload_suite(o.suite).native(w.name);
  uint32_t got = k(w.size);
  if (got != checksum)
    throw std::runtime_error(fmt::format("{}: the native build returned {:#x}, {} returned {:#x}", w.name, got, modes[0].name, checksum));
  uint32_t size = w.size;
  measured.push_back({fmt::format("{}/native", w.name),
                      [k, size] {
                        volatile uint32_t sink = k(size);  // kept: the call's result is used
                        (void)sink;
                      },
                      1,
                      "call",
                      {{"workload", w.name},
                       {"size", std::to_string(w.size)},
                       {"dispatch", "native"},
                       {"corpus_role", workloads::corpus_role(w.name)},
                       {"checksum", fmt::format("{:08x}", got)},
                       {"module", "native (clang -O2)"}}});
  return measured;
}

// One peer's cases on a workload: its first run's checksum checked, its start-up (the fastest of
// three runs making no call) measured apart, and a timed case whose every run is checked too (a
// peer that fails in one of them fails the bench, and nothing it did is written as a result).
MeasuredCase peer_case(const BenchRun& run, const bench::Peer& peer, const Workload& w, uint32_t checksum, nlohmann::json& notes) {
  const double limit = run.o.peer_timeout;
  const uint64_t n = run.o.peer_calls;
  const std::string& module = run.plan.command_module;
  ProcessResult one = bench::run_peer(peer_argv(peer, module, w.name, w.size, 1), true, limit);
  if (!one.ok()) throw std::runtime_error(describe_peer_failure(peer, one, limit) + " (1 call of " + w.name + ")");
  std::string why;
  auto got = bench::parse_peer_checksum(one.output, why);
  if (!got) throw std::runtime_error(fmt::format("peer {} on {}: {}", peer.name, w.name, why));
  if (*got != checksum)
    throw std::runtime_error(fmt::format("peer {} on {}: checksum {:08x} where dlab computed {:08x}", peer.name, w.name, *got, checksum));
  // Start-up and its footprint: the module loaded and instantiated, no call made (the fastest of
  // three runs), and the peak resident memory of one more such run, under GNU time.
  double startup_ns = 1e300;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    ProcessResult z = bench::run_peer(peer_argv(peer, module, w.name, w.size, 0), true, limit);
    auto dt = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (!z.ok()) throw std::runtime_error(describe_peer_failure(peer, z, limit) + " (0 calls)");
    startup_ns = std::min(startup_ns, dt);
  }
  std::string rss_why;
  std::optional<long> startup_rss_kb = bench::peak_resident_kb(peer_argv(peer, module, w.name, w.size, 0), limit, rss_why);
  notes[peer.name] = fmt::format("start-up {:.1f} ms (no call), {}; values include the start-up, spread over {} calls",
                                 startup_ns / 1e6,
                                 startup_rss_kb ? fmt::format("{:.1f} MiB peak resident then (GNU time)", *startup_rss_kb / 1024.0)
                                                : "peak memory not measured: " + rss_why,
                                 n);
  auto argv = peer_argv(peer, module, w.name, w.size, n);
  return {fmt::format("{}/peer:{} x{}", w.name, peer.name, n),
          [argv, peer, limit, n] {
            ProcessResult r = bench::run_peer(argv, false, limit);
            if (!r.ok()) throw std::runtime_error(describe_peer_failure(peer, r, limit) + fmt::format(" (a timed run of {} calls)", n));
          },
          static_cast<double>(n),
          "call",
          {{"workload", w.name},
           {"size", std::to_string(w.size)},
           {"dispatch", "peer"},
           {"peer", peer.name},
           {"peer_command", fmt::format("{}", fmt::join(peer.argv, " "))},
           {"peer_startup_ns", fmt::format("{:.0f}", startup_ns)},
           {"peer_startup_max_rss_kb", startup_rss_kb ? std::to_string(*startup_rss_kb) : std::string()},
           {"calls_per_process", std::to_string(n)},
           {"checksum", fmt::format("{:08x}", checksum)}}};
}

// The peers' group of a workload, beside `reference` (dlab's fastest engine there) making the same
// calls in process; null when the command build lacks the workload (said on stderr).
nlohmann::json run_peer_group(BenchRun& run, const Workload& w, uint32_t checksum, const MeasuredCase& reference, const std::string& engine) {
  // Decided by the module itself, never by what a peer's exit status seems to say.
  if (!bench::command_module_has(run.plan.command_module, w.name)) {
    for (const auto& peer : run.plan.peers)
      fmt::print(stderr, "[wasm bench] peer {}: not run: the command build has no {} (it needs tail calls)\n", peer.name, w.name);
    return nullptr;
  }
  uint64_t n = run.o.peer_calls;
  std::vector<MeasuredCase> pv;
  MeasuredCase ref = reference;
  ref.name = fmt::format("{}/{} in process x{}", w.name, engine, n);
  auto inner = reference.run;
  ref.run = [inner, n] {
    for (uint64_t i = 0; i < n; ++i) inner();
  };
  ref.units = static_cast<double>(n);
  pv.push_back(ref);
  nlohmann::json notes = nlohmann::json::object();
  for (const auto& peer : run.plan.peers) pv.push_back(peer_case(run, peer, w, checksum, notes));
  // A fixed count of rounds for the peers: each of their samples is a process start, whose noise
  // would keep every peer group at the most rounds of the adaptive rule for little narrower a pace.
  RunProtocol fixed = run.o.protocol;
  fixed.max_samples = 0;
  RunResult pr = run_protocol(fixed, *run.wall_meter, pv);
  auto pt = experiment_tables(run.run_id, run.o.name, pr, pv, run.machine);
  run.all.summary.append(pt.summary);
  run.all.samples.append(pt.samples);
  for (size_t r = 0; r < pt.summary.size(); ++r)
    if (pt.summary.at(r, "metric") == "tsc_ticks" && !pt.summary.at(r, "median").empty())
      fmt::print("{:<34} {:>14.4g} ticks/call {}\n", pt.summary.at(r, "case"), std::stod(pt.summary.at(r, "median")),
                 pt.summary.at(r, "ratio").empty() ? "baseline" : fmt::format("x{:.2f}", std::stod(pt.summary.at(r, "ratio"))));
  return {{"workload", w.name + " (peers)"}, {"size", w.size}, {"baseline", ref.name}, {"checksum", fmt::format("{:08x}", checksum)},
          {"peers", notes}};
}

// --- report: what a group measured, on stdout ---

void print_group(const ExperimentTables& t) {
  for (size_t r = 0; r < t.summary.size(); ++r) {
    if (t.summary.at(r, "metric") != "cycles_tsc_estimate" && t.summary.at(r, "metric") != "task_clock") continue;
    if (t.summary.at(r, "median").empty()) continue;
    std::string ratio = t.summary.at(r, "case") == t.summary.at(r, "baseline") || t.summary.at(r, "ratio").empty()
                            ? "baseline"
                            : fmt::format("{:+.1f}% [{:+.1f}, {:+.1f}] {}/{} faster", (std::stod(t.summary.at(r, "ratio")) - 1) * 100,
                                          (std::stod(t.summary.at(r, "ratio_ci95_lo")) - 1) * 100,
                                          (std::stod(t.summary.at(r, "ratio_ci95_hi")) - 1) * 100, t.summary.at(r, "smaller_k"),
                                          t.summary.at(r, "smaller_n"));
    fmt::print("{:<20} {:<20} {:>14.4g} {:<12} {}\n", t.summary.at(r, "case"), t.summary.at(r, "metric"),
               std::stod(t.summary.at(r, "median")), t.summary.at(r, "unit"), ratio);
  }
}

// The engine with the lowest median TSC ticks among the first `engines` cases, from the samples
// themselves (all of one workload, so per call and per run compare alike).
size_t fastest_engine(const RunResult& result, size_t engines) {
  size_t metric = 0;
  while (metric < result.metrics.size() && result.metrics[metric].name != "tsc_ticks") ++metric;
  size_t best = 0;
  double best_ticks = 0;
  for (size_t mi = 0; mi < engines && mi < result.cases.size() && metric < result.metrics.size(); ++mi) {
    std::vector<double> ticks;
    for (const auto& round : result.cases[mi].samples)
      if (metric < round.size() && round[metric].value) ticks.push_back(*round[metric].value);
    if (ticks.empty()) continue;
    double m = median(ticks);
    if (best_ticks == 0 || m < best_ticks) best_ticks = m, best = mi;
  }
  return best;
}

void run_workload_group(BenchRun& run, const std::vector<std::unique_ptr<Prepared>>& prepared, size_t wi) {
  const Workload& w = run.plan.workloads[wi];
  uint32_t checksum = 0;
  std::vector<MeasuredCase> measured = workload_cases(run, prepared, w, checksum);
  bool tty = isatty(fileno(stderr));
  // On a terminal, a line rewritten per sample; into a log (a recipe's), a line per round of
  // every case, so a run of minutes still says where it is.
  const int cases = static_cast<int>(measured.size());
  auto progress = [&](int done, int total, const std::string& v) {
    if (tty)
      fmt::print(stderr, "\r[wasm bench] {}/{} {:<10} sample {}/{} {:<22}", wi + 1, run.plan.workloads.size(), w.name, done, total, v);
    else if (done % cases == 0)
      fmt::print(stderr, "[wasm bench] {}/{} {}: round {} done (at most {})\n", wi + 1, run.plan.workloads.size(), w.name,
                 done / cases, total / cases);
  };
  std::vector<std::pair<uint64_t, wasm::GcStats>> before;
  for (const auto& p : prepared) before.push_back({p->calls, p->rt->gc_stats()});
  run.last = run_protocol(run.o.protocol, run.meter, measured, progress);
  if (tty) fmt::print(stderr, "\r{:<100}\r", "");
  // What the collector did per call, over every timed call of each engine (warm-up included):
  // collections, and wall time in the collector (steady_clock around each collection).
  for (size_t mi = 0; mi < prepared.size(); ++mi) {
    uint64_t calls = prepared[mi]->calls - before[mi].first;
    wasm::GcStats s = prepared[mi]->rt->gc_stats();
    if (!calls) continue;
    measured[mi].params["gc_collections_per_call"] = fmt::format("{:.4g}", double(s.collections - before[mi].second.collections) / calls);
    measured[mi].params["gc_ns_per_call"] = fmt::format("{:.4g}", double(s.collect_ns - before[mi].second.collect_ns) / calls);
    measured[mi].params["gc_bytes_per_call"] = fmt::format("{:.4g}", double(s.bytes_allocated - before[mi].second.bytes_allocated) / calls);
    measured[mi].params["heap_limit"] = run.o.heap_limit ? std::to_string(run.o.heap_limit) : "";
  }
  auto t = experiment_tables(run.run_id, run.o.name, run.last, measured, run.machine);
  print_group(t);
  run.all.summary.append(t.summary);
  run.all.samples.append(t.samples);
  run.groups.push_back({{"workload", w.name}, {"size", w.size}, {"baseline", measured.front().name},
                        {"checksum", fmt::format("{:08x}", checksum)}, {"native", !run.o.no_native}, {"rounds", run.last.rounds},
                        {"stop", run.last.stop_note}});
  if (!run.last.stop_note.empty()) fmt::print(stderr, "[wasm bench] {}: {}\n", w.name, run.last.stop_note);
  if (run.plan.peers.empty()) return;
  size_t best = fastest_engine(run.last, run.plan.engines.size());
  nlohmann::json peer_log = run_peer_group(run, w, checksum, measured[best], run.plan.engines[best].name);
  if (!peer_log.is_null()) run.groups.push_back(peer_log);
}

}  // namespace

void add_wasm_bench_command(CLI::App& wasm_cmd) {
  auto* cmd = wasm_cmd.add_subcommand(
      "bench",
      "time the interpreter's engines (dispatch modes x stack placements) on workload kernels under the run protocol "
      "(interleaved per workload, the first engine as baseline) and write wasm.summary.csv / .samples.csv / .json");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  auto o = std::make_shared<BenchOptions>();
  o->module = workloads::workload_suite("kernels").module_path();
  std::string names, suite_help, quick_sizes;
  for (const auto& suite : workloads::workload_suites()) {
    std::vector<std::string> listed;
    for (const auto& w : suite.workloads) {
      listed.push_back(w.name);
      if (w.quick) quick_sizes += fmt::format("{}{} {}", quick_sizes.empty() ? "" : ", ", w.name, w.quick);
    }
    names += fmt::format("{}{} (--suite {})", names.empty() ? "" : "; or of ", fmt::join(listed, ","), suite.name);
    suite_help += fmt::format("{}{}: {}", suite_help.empty() ? "" : "; ", suite.name, suite.what);
  }
  cmd->add_option("--module", o->module, "the workload module (built from interpreter/workloads/kernels.c)")->capture_default_str();
  cmd->add_option("--workloads", o->workloads, "comma-separated subset of: " + names);
  cmd->add_option("--dispatch", o->dispatch, "comma-separated dispatch modes; the first is the baseline")->capture_default_str();
  cmd->add_option("--placements,--placement", o->placements,
                  "comma-separated subset of the stack placements " + join(placement_choices(), ",") +
                      " (engines.def); with several, every placement in every mode, "
                      "the first placement in the first mode the baseline (e.g. --placements vec,sp,sp_wt)")
      ->capture_default_str();
  refuse_renamed_option(cmd, "--variants", "--placements");
  cmd->add_option("--lowerings,--lowering", o->lowerings,
                  "comma-separated subset of the lowering's technique sets " + join(lowering_choices(), ",") + " (" +
                      wasm::lowering_help() +
                      "); with several, every set on every engine, the first the baseline (e.g. --lowerings plain,fold,fuse,super," +
                      default_lowering() + ")")
      ->capture_default_str();
  cmd->add_option("--irs,--ir", o->irs,
                  "comma-separated subset of the IRs " + join(ir_choices(), ",") +
                      " (stack: operand-stack code; register: each instruction names its operand and result slots, built for the sp "
                      "placement); with several, every IR on every engine, the first the baseline (e.g. --irs stack,register)")
      ->capture_default_str();
  cmd->add_option("--bounds", o->bounds,
                  "comma-separated subset of " + join(bounds_choices(), ",") + ": " + bounds_help() +
                      "; with several, each engine with each in the same rounds, every one's change against the engine's first "
                      "(e.g. --bounds check,guard)")
      ->capture_default_str();
  cmd->add_option("--budgets,--budget", o->budgets,
                  "comma-separated subset of the budgets (" + wasm::budget_help() +
                      "; never reached while timed); with several, each engine under each budget "
                      "in the same rounds, every budget's change against the engine's first (e.g. --budgets none,fuel,deadline)")
      ->capture_default_str();
  cmd->add_option("--name", o->name,
                  "experiment name: the files are <name>.summary.csv ... (<name>_valgrind with --valgrind), so several "
                  "benches can share a run directory")
      ->check(experiment_name_validator())
      ->capture_default_str();
  cmd->add_flag("--quick", o->quick, "a quarter of each workload's size (or its own: " + quick_sizes + "), 5 to 10 rounds (on while an interval is wider than 2%), 1 warm-up round");
  cmd->add_option("--suite", o->suite,
                  "the workloads (interpreter/workloads/workloads.def), each with its native C counterpart: " + suite_help)
      ->check(CLI::IsMember(workloads::workload_suite_names()))
      ->capture_default_str();
  add_heap_limit_option(cmd, o->heap_limit);
  cmd->add_option("--dbinop", o->dbinop,
                  "instead of the kernels: the D-binop family, one generated loop per D (e.g. 5,9,13,...,45): D+1 i32 binops "
                  "back to back with D distinct consecutive pairs; values per wasm instruction, params binop_pairs");
  cmd->add_option("--peer", o->peers,
                  "another engine, NAME=COMMAND (repeatable): COMMAND runs the workloads' WASI command module, e.g. "
                  "node=\"node --no-warnings tools/wasi-run.mjs {module} {workload} {size} {calls}\" or a wasm3/wasmtime "
                  "path; split on blanks, no shell. Timed as a whole process per sample beside dlab's fastest engine on the "
                  "workload making the same calls in process; its start-up ({calls}=0) is measured separately and reported");
  cmd->add_option("--peer-calls", o->peer_calls, "calls of the workload per peer process (1..1000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1000}))
      ->capture_default_str();
  cmd->add_option("--clock", o->clock,
                  "the engines' WASI clocks: real, or fixed:NS (every clock read advances NS nanoseconds: a program that sizes "
                  "its work by the clock runs the same iterations in every engine); recorded in every row")
      ->check(clock_validator())
      ->capture_default_str();
  cmd->add_option("--peer-timeout", o->peer_timeout,
                  "seconds one peer process may run before it is killed with its process group (1..86400)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_flag("--no-native", o->no_native,
                "leave out the `native` engine (the same C compiled with clang -O2 into dlab, timed in the same rounds)");
  add_protocol_options(cmd, o->protocol);
  cmd->add_flag("--valgrind", o->valgrind,
                "instead of timing: instructions, loads, stores and simulated mispredicts per call under cachegrind "
                "(quick sizes; N vs 2N calls) into wasm_valgrind.summary.csv; a --peer is counted as a whole process "
                "making N and 2N calls, beside the engines");
  cmd->add_option("--valgrind-calls", o->valgrind_calls, "N for --valgrind (1..100000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000}))
      ->capture_default_str();
  cmd->add_option("--valgrind-reuse", o->valgrind_options.reuse,
                  "a folder shared by the benches of one recipe run (just rfc passes one): a case whose command line, dlab "
                  "binary and input files match a case counted there earlier is read back, not counted again (its rows' "
                  "sidecar names the case that counted it)")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--valgrind-functions", o->valgrind_functions,
                "with --valgrind: also split each case's counts by function (the programs run unstripped) into "
                "<name>_valgrind.functions.csv (with --calls <name>_calls_valgrind.functions.csv), each of dlab's "
                "handlers with its family (control, numeric, ...: its "
                "handlers/ file); the tail-call engines have a function per handler, switch and goto one for all");
  cmd->add_option("--predict", o->predict.predictors,
                  "instead of timing: memory-order flushes and branch mispredicts SIMULATED per engine and workload with these "
                  "predictors (comma-separated names of docs/predictors.md's tables, or all), each case one call at its quick "
                  "size in `dlab wasm run` under valgrind, traced in the engine's code (dlabtrace), into <name>_simulated.*; per "
                  "1,000 dispatches (indirect jumps run in the engine's code)");
  cmd->add_option("--predict-load-addresses", o->predict.load_addresses,
                  "with --predict: simulate the branch rows with the binary at N load addresses (the trace's own, then whole "
                  "pages apart, as ASLR moves it from run to run): the tables are indexed by a hash of the address, so a cell "
                  "of a small row changes with it; each address is a sample, the result the median and interval over them")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  cmd->add_option("--predict-window", o->predict.window,
                  "with --predict: instructions after which a store's address is known to younger loads (the memory "
                  "simulation's one timing parameter, docs/predictors.md)")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  add_ideal_mcpu_option(cmd, o->ideal_mcpu, ", for the engines whose handlers are functions of their own (tail, tail_pn)");
  cmd->add_flag("--calls", o->calls,
                "instead of the kernels: the call path in every chosen engine (host-to-wasm nop and i32x4 calls, wasm-to-host, "
                "wasm-to-wasm call, call_indirect, call_ref, a call into another instance, instantiation; and each instance's "
                "memory beyond its module, in the sidecar) into <name>_calls.summary.csv");
  cmd->add_option("--calls-child", o->calls_child, "(internal: one kind of call in one engine, run by --calls --valgrind)")->group("");
  cmd->add_option("--calls-child-n", o->calls_child_n, "(internal)")->group("")->check(CLI::Range(1u, 100'000'000u));
  cmd->add_flag("--no-save", o->no_save, "print only, write no files");
  o->out.add_to(cmd, "results");
  cmd->callback([o, cmd] {
    if (o->valgrind_functions) o->valgrind_options.family_of = handler_family;
    if (o->calls) {
      check_bench_options(*o, *cmd);
      if (o->quick) apply_quick_protocol(cmd, o->protocol);
      std::vector<std::string> not_built;
      std::vector<bench::BenchEngine> engines = choose_engines(*o, not_built);
      if (!o->calls_child.empty()) {
        if (engines.size() != 1 || !o->calls_child_n) throw CLI::ValidationError("--calls-child", "needs one engine and --calls-child-n");
        run_call_path_child(engines.front(), o->calls_child, o->calls_child_n);
        return;
      }
      if (o->valgrind) {
        // Instructions per call: each kind in each engine, as a child making N and 2N calls.
        std::string self = self_executable();
        std::vector<bench::CachegrindCase> cases;
        for (const auto& kind : bench::call_path_kinds())
          for (const auto& e : engines) {
            uint32_t n = kind == "instantiate" ? 20 : kind.rfind("host_to_wasm", 0) == 0 ? 1000 : 10000;
            cases.push_back({fmt::format("{}/{}", kind, e.name),
                             [self, kind, e](uint64_t reps) {
                               std::vector<std::string> argv{self, "wasm", "bench", "--calls", "--no-save", "--calls-child", kind,
                                                             "--calls-child-n", std::to_string(reps)},
                                   engine = e.config.argv();
                               argv.insert(argv.end(), engine.begin(), engine.end());
                               return argv;
                             },
                             bench::engine_params(e.config, {{"call", kind}, {"module", "generated call path"}}),
                             kind == "instantiate" ? "instance" : "call",
                             e.baseline.empty() ? std::string() : fmt::format("{}/{}", kind, e.baseline),
                             n});
          }
        std::optional<RunDirectory> dir;
        if (!o->no_save) dir = o->out.resolve(this_machine(), valgrind_files(o->name + "_calls_valgrind", o->valgrind_functions));
        run_cachegrind_cases(cases, dir, o->name + "_calls_valgrind", o->valgrind_options);
        return;
      }
      std::optional<RunDirectory> dir;
      if (!o->no_save) dir = o->out.resolve(this_machine(), experiment_files(o->name + "_calls"));
      run_call_path(engines, o->protocol, o->quick, dir, o->name + "_calls");
      return;
    }
    BenchPlan plan;
    plan_bench(*o, *cmd, plan);
    // The engines, instantiated, and every workload's export checked (and called once) in the
    // first of them, before a run directory exists: a module that cannot be benched leaves no
    // empty run behind.
    std::vector<std::unique_ptr<Prepared>> prepared = prepare_engines(*o, plan);
    if (!o->predict.predictors.empty()) {
      prepared.clear();
      o->predict.ideal = resolve_ideal_mcpu(o->ideal_mcpu);
      std::optional<RunDirectory> dir;
      if (!o->no_save) dir = o->out.resolve(this_machine(), experiment_files(o->name + "_simulated"));
      run_predict(o->module, o->clock, o->heap_limit, plan.workloads, plan.engines, o->predict, dir, o->name + "_simulated");
      return;
    }
    if (o->valgrind) {
      prepared.clear();
      std::optional<RunDirectory> dir;
      if (!o->no_save) dir = o->out.resolve(this_machine(), valgrind_files(o->name + "_valgrind", o->valgrind_functions));
      run_valgrind(o->module, o->clock, o->heap_limit, plan.workloads, plan.engines, o->valgrind_calls, dir, o->name + "_valgrind",
                   o->valgrind_options, plan.peers, plan.command_module);
      return;
    }
    std::optional<RunDirectory> dir;
    if (!o->no_save) dir = o->out.resolve(this_machine(), experiment_files(o->name));
    BenchRun run(*o, plan, dir ? dir->run_id() : "unsaved");
    fmt::print(stderr, "[wasm bench] {} workloads x {} engines, {} (+{} warm-up), interleaved per workload\n",
               plan.workloads.size(), plan.engines.size(), o->protocol.rounds_text(), o->protocol.warmup_rounds);
    for (size_t wi = 0; wi < plan.workloads.size(); ++wi) run_workload_group(run, prepared, wi);
    if (dir) {
      auto sidecar = sidecar_json(run.run_id, run.machine, &run.last, {"summary", "samples"});
      sidecar["groups"] = run.groups;
      sidecar["not_built"] = plan.not_built;
      write_experiment(*dir, o->name, run.all, sidecar);
      fmt::print(stderr, "wrote {}/{}.summary.csv\n", dir->path().string(), o->name);
    }
  });
}

}  // namespace dlab::cli
