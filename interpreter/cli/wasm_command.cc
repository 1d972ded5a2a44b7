// `dlab wasm`: the WebAssembly interpreter's commands: decode (summary or why not), run (a WASI
// command or one export) and spec (the spec suite, per stage and dispatch mode).
#include <bit>
#include <algorithm>
#include <map>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>

#include "cli/commands.h"
#include "dispatchlab/predictors/llvm_mca.h"
#include "engine_choices.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/interpreter/code_density.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/reference_text.h"
#include "dispatchlab/interpreter/spec_runner.h"
#include "dispatchlab/interpreter/validator.h"
#include "dispatchlab/interpreter/unknown_imports.h"
#include "dispatchlab/interpreter/wasi.h"
#include "wasi_command.h"
#include "wasi_dirs.h"
#include "dispatchlab/harness/quote.h"
#include "../bench/bench_engine.h"
#include "../bench/engine_simulation.h"
#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/harness/emulation.h"

namespace dlab::cli {

namespace {

std::vector<uint8_t> read_module(const std::string& file) {
  std::string text = read_input_file(file);
  return {text.begin(), text.end()};
}

// One --invoke argument, strictly: the whole text is the number, and it fits the parameter's type
// (an i32 accepts -2^31..2^32-1, so both signed and unsigned spellings of a 32-bit value work).
wasm::Value parse_arg(const std::string& text, wasm::ValType t, size_t i) {
  auto fail = [&](const std::string& why) {
    return CLI::ValidationError("--invoke", fmt::format("argument {} '{}': {}", i + 1, text, why));
  };
  if (text.empty()) throw fail("empty");
  errno = 0;
  char* end = nullptr;
  wasm::Value v;
  v.type = t;
  switch (t) {
    case wasm::ValType::kI32:
    case wasm::ValType::kI64: {
      bool neg = text[0] == '-';
      uint64_t x = neg ? static_cast<uint64_t>(std::strtoll(text.c_str(), &end, 0)) : std::strtoull(text.c_str(), &end, 0);
      if (*end) throw fail("is not an integer");
      if (errno == ERANGE) throw fail(t == wasm::ValType::kI32 ? "out of range for i32" : "out of range for i64");
      if (t == wasm::ValType::kI32) {
        int64_t sx = static_cast<int64_t>(x);
        if (neg ? sx < INT32_MIN : x > UINT32_MAX) throw fail("out of range for i32 (-2147483648..4294967295)");
      }
      v.lo = t == wasm::ValType::kI32 ? static_cast<uint32_t>(x) : x;
      break;
    }
    case wasm::ValType::kF32: {
      float f = std::strtof(text.c_str(), &end);
      if (*end) throw fail("is not a number");
      if (errno == ERANGE && std::isinf(f)) throw fail("out of range for f32");
      v.lo = std::bit_cast<uint32_t>(f);
      break;
    }
    case wasm::ValType::kF64: {
      double d = std::strtod(text.c_str(), &end);
      if (*end) throw fail("is not a number");
      if (errno == ERANGE && std::isinf(d)) throw fail("out of range for f64");
      v.lo = std::bit_cast<uint64_t>(d);
      break;
    }
    default: throw fail("only i32, i64, f32 and f64 parameters can be given on the command line");
  }
  return v;
}

std::string format_value(const wasm::Value& v, const wasm::Instance* owner) {
  switch (v.type) {
    case wasm::ValType::kI32: return fmt::format("{}", static_cast<int32_t>(v.lo));
    case wasm::ValType::kI64: return fmt::format("{}", static_cast<int64_t>(v.lo));
    case wasm::ValType::kF32: return fmt::format("{}", std::bit_cast<float>(static_cast<uint32_t>(v.lo)));
    case wasm::ValType::kF64: return fmt::format("{}", std::bit_cast<double>(v.lo));
    case wasm::ValType::kV128: return fmt::format("v128:{:#018x}{:016x}", v.hi, v.lo);
    default: return wasm::reference_text(v, owner);  // never an address: the same on every run
  }
}

// How many of the most frequent pairs cover `share` of all dispatches.
size_t pairs_covering(std::vector<uint64_t> counts, uint64_t total, double share) {
  std::sort(counts.rbegin(), counts.rend());
  uint64_t sum = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    sum += counts[i];
    if (static_cast<double>(sum) >= share * static_cast<double>(total)) return i + 1;
  }
  return counts.size();
}

// The counting engine's findings: the input for superinstructions and for the handler-pair knee.
// Printed on stderr; returned as the --json file's contents.
nlohmann::json report_profile(const wasm::Profile& p, uint64_t code_words, size_t top) {
  std::vector<size_t> ops;
  for (size_t i = 0; i < p.op_counts.size(); ++i)
    if (p.op_counts[i]) ops.push_back(i);
  std::sort(ops.begin(), ops.end(), [&](size_t a, size_t b) { return p.op_counts[a] > p.op_counts[b]; });
  auto pairs = p.pairs;
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<uint64_t> pair_counts;
  uint64_t pair_total = 0;
  for (const auto& [pr, c] : pairs) {
    pair_counts.push_back(c);
    pair_total += c;
  }
  size_t p50 = pairs_covering(pair_counts, pair_total, 0.5), p90 = pairs_covering(pair_counts, pair_total, 0.9),
         p99 = pairs_covering(pair_counts, pair_total, 0.99);
  auto pct = [&](uint64_t c) { return 100.0 * static_cast<double>(c) / static_cast<double>(std::max<uint64_t>(1, p.dispatches)); };
  fmt::print(stderr, "\nprofile: {} dispatches, {} distinct ops, {} distinct pairs; the most frequent {} pairs cover 50%, {} cover 90%, "
                     "{} cover 99% of dispatches\n",
             p.dispatches, ops.size(), pairs.size(), p50, p90, p99);
  // Code words executed, over the dispatches of ops whose length is declared (the rest vary).
  uint64_t declared_dispatches = 0, declared_words = 0;
  for (size_t i : ops)
    if (const unsigned words = wasm::declared_words(i)) {
      declared_dispatches += p.op_counts[i];
      declared_words += p.op_counts[i] * words;
    }
  if (declared_dispatches)
    fmt::print(stderr, "code: {} words lowered; {:.3f} words per dispatch over the {:.1f}% of dispatches whose ops declare a length\n",
               code_words, static_cast<double>(declared_words) / static_cast<double>(declared_dispatches), pct(declared_dispatches));
  else  // no figure rather than a zero: nothing dispatched has a declared length
    fmt::print(stderr, "code: {} words lowered; no dispatched op declares its length, so no words per dispatch\n", code_words);
  fmt::print(stderr, "top ops:\n");
  for (size_t i = 0; i < std::min(top, ops.size()); ++i)
    fmt::print(stderr, "  {:>12} {:6.2f}%  {}\n", p.op_counts[ops[i]], pct(p.op_counts[ops[i]]), p.op_names[ops[i]]);
  std::map<std::string, uint64_t> by_family;
  for (size_t i : ops) by_family[p.op_families[i]] += p.op_counts[i];
  std::vector<std::pair<std::string, uint64_t>> families(by_family.begin(), by_family.end());
  std::sort(families.begin(), families.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  fmt::print(stderr, "by family (handlers/ file):\n");
  for (const auto& [f, c] : families) fmt::print(stderr, "  {:>12} {:6.2f}%  {}\n", c, pct(c), f);
  fmt::print(stderr, "top pairs:\n");
  for (size_t i = 0; i < std::min(top, pairs.size()); ++i)
    fmt::print(stderr, "  {:>12} {:6.2f}%  {} -> {}\n", pairs[i].second, pct(pairs[i].second), p.op_names[pairs[i].first.first],
               p.op_names[pairs[i].first.second]);
  nlohmann::json j = {{"dispatches", p.dispatches}, {"distinct_ops", ops.size()}, {"distinct_pairs", pairs.size()},
                      {"pairs_covering", {{"50%", p50}, {"90%", p90}, {"99%", p99}}},
                      {"code_words", code_words}};
  if (declared_dispatches) j["declared"] = {{"dispatches", declared_dispatches}, {"words", declared_words}};
  nlohmann::json jo = nlohmann::json::array(), jp = nlohmann::json::array();
  for (size_t i : ops) {
    jo.push_back({{"op", p.op_names[i]}, {"family", p.op_families[i]}, {"count", p.op_counts[i]}});
    if (const unsigned words = wasm::declared_words(i)) jo.back()["words"] = words;
  }
  for (const auto& [pr, c] : pairs) jp.push_back({{"from", p.op_names[pr.first]}, {"to", p.op_names[pr.second]}, {"count", c}});
  j["families"] = by_family;
  j["ops"] = jo;
  j["pairs"] = jp;
  return j;
}

void write_profile_json(const nlohmann::json& j, const std::string& json_path, bool replace) {
  if (json_path.empty()) return;
  write_output_file(json_path, j.dump(2) + "\n", replace ? ExistingFile::kReplace : ExistingFile::kRefuse, "--force");
  fmt::print(stderr, "wrote {}\n", json_path);
}

// `dlab wasm run`, and `dlab wasm profile` (the same program in the counting engine).
void add_run_command(CLI::App& cmd, bool profile) {
  auto* run = profile ? cmd.add_subcommand("profile",
                                           "run a module as `dlab wasm run` does, in the counting engine: dynamic counts per op "
                                           "and per consecutive pair, and how many pairs cover 50/90/99% of dispatches (on stderr; "
                                           "--json for all of it)")
                      : cmd.add_subcommand("run",
                                           "run a module: a WASI command's _start (C built with clang-19 --target=wasm32-wasi), or "
                                           "one export with --invoke. Program arguments go after the module (after `--` when they "
                                           "start with '-')");
  if (!command_selected(*run)) return;  // its options only when the command line names it
  struct Options {
    // dispatch and ir: "" is run's default, the configuration measured fastest (run_default_*).
    std::string file, invoke, dispatch, placement = wasm::placement_name(wasm::EngineConfig{}.placement), lowering = default_lowering(), ir, json;
    std::vector<std::string> args, env;
    uint64_t repeat = 1, cachegrind_pair = 0;
    size_t top = 15;
    bool force = false;
    std::string clock = "real";
    std::string budget;  // empty: from --fuel / --deadline, else none
    std::string bounds;  // empty: run's default (guard where the engine has it)
    uint64_t fuel = 0, deadline_ms = 0, refills = 0;
    uint64_t heap_limit = 0;
    bool gc_stats = false, trap_unknown_imports = false;
    WasiDirs dirs;
    // profile --predict: the same program in real engines under dlabtrace (engine_simulation.h).
    std::string predict_dispatch, predict_sample;
    std::string ideal_mcpu = "native";  // --ideal-mcpu, resolved into predict.ideal
    bench::EngineSimulationOptions predict;
  };
  auto o = std::make_shared<Options>();
  if (profile) {
    run->add_option("--json", o->json, "also write every op's and pair's count to this JSON file (a new file unless --force)");
    run->add_flag("--force", o->force, "let --json replace an existing file");
    run->add_option("--top", o->top, "ops and pairs listed (1..1000)")->check(CLI::Range(size_t{1}, size_t{1000}))->capture_default_str();
    run->add_option("--predict", o->predict.predictors,
                    "after the profile: the same program (the same arguments, lowering and IR) in real engines under valgrind, "
                    "traced in each engine's code (dlabtrace), its memory-order flushes and branch mispredicts SIMULATED by these "
                    "predictors (comma-separated names of docs/predictors.md's tables, or all), per 1,000 dispatches (indirect "
                    "jumps run in that code); on stderr, and in --json under \"simulated\"");
    run->add_option("--predict-dispatch", o->predict_dispatch,
                    "with --predict: the dispatch modes to trace, comma-separated (default: " +
                        std::string(wasm::dispatch_name(default_run_dispatch())) + ", `dlab wasm run`'s); sp placement, no budget, "
                        "bounds checked");
    run->add_option("--predict-sample", o->predict_sample,
                    "with --predict: ON/PERIOD, trace the first ON of every PERIOD instructions of the process only (a long "
                    "program in a fraction of the time; the predictors' state is carried across the gaps, not warmed, and the "
                    "result says it was sampled); default: every instruction")
        ->check(CLI::Validator(
            [](std::string& v) {
              unsigned long long on = 0, period = 0;
              char tail = 0;
              const bool digits = !v.empty() && v.find_first_not_of("0123456789/") == std::string::npos && v.size() < 40;
              if (!digits || std::sscanf(v.c_str(), "%llu/%llu%c", &on, &period, &tail) != 2 || on == 0 || on >= period)
                return std::string("'" + escape_input(v) + "' is not ON/PERIOD with 0 < ON < PERIOD (e.g. 1000000/10000000)");
              return std::string();
            },
            "ON/PERIOD"));
    run->add_option("--predict-window", o->predict.window,
                    "with --predict: instructions after which a store's address is known to younger loads (docs/predictors.md)")
        ->check(CLI::Range(1u, 1u << 20))
        ->capture_default_str();
    run->add_option("--predict-load-addresses", o->predict.load_addresses,
                    "with --predict: the branch rows with the binary at N load addresses (whole pages apart, as ASLR moves it), "
                    "the table the median and range over them, --json every one (1..64)")
        ->check(CLI::Range(1u, 64u))
        ->capture_default_str();
    add_ideal_mcpu_option(run, o->ideal_mcpu, ", for the dispatch modes whose handlers are functions of their own (tail, tail_pn)");
  }
  run->add_option("module", o->file, "module.wasm")->required()->check(CLI::ExistingFile);
  run->add_option("args", o->args, "the program's arguments (WASI argv[1..]), or the export's arguments with --invoke");
  run->add_option("--invoke", o->invoke, "call this export with the arguments (i32/i64 decimal or 0x hex, f32/f64) and print its results");
  if (!profile) {
    run->add_option("--dispatch", o->dispatch,
                    "dispatch mode (default: " + std::string(wasm::dispatch_name(default_run_dispatch())) + ", " +
                        kDefaultRunEngineWhy + ")")
        ->check(CLI::IsMember(dispatch_choices()));
    run->add_option("--placement", o->placement, "stack placement (engines.def lists which modes have which)")
        ->check(CLI::IsMember(placement_choices()))
        ->capture_default_str();
    refuse_renamed_option(run, "--variant", "--placement");
  }
  run->add_option("--lowering", o->lowering, wasm::lowering_help())->check(CLI::IsMember(lowering_choices()))->capture_default_str();
  if (profile) {
    o->ir = "stack";  // the counting engine profiles the stack IR unless asked (tools/superinstructions.py reads it)
    add_ir_option(run, o->ir);
  } else {
    add_ir_option(run, o->ir)->description(
        "the IR the lowering writes: stack (operand-stack code, every placement) or register (each instruction names the "
        "frame slots of its operands and result; built for the sp placement); default register where the engine has "
        "it (the sp placement of tail and tail_pn, and of switch and goto in a build with -DDLAB_ONE_FUNCTION_REGISTER_IR=ON or -DDLAB_ALL_ENGINES=ON), else stack");
  }
  if (!profile) {
    auto* fuel = run->add_option("--fuel", o->fuel,
                                 "bound the run: it may make N branches and calls (the fuel engine; --budget fuel_machine keeps "
                                 "the counter in the machine), then stops with the trap \"fuel exhausted\"")
                     ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62));
    auto* deadline = run->add_option("--deadline", o->deadline_ms,
                                     "bound the run: past MS milliseconds (epochs of 1 ms, checked at every branch and call: "
                                     "the deadline engine), it stops with the trap \"deadline reached\". Only the module's own "
                                     "code is bounded: a host call that blocks (a write to a pipe whose reader stalls) is waited "
                                     "for, and the deadline is checked when it returns")
                         ->check(CLI::Range(uint64_t{1}, uint64_t{86'400'000}))
                         ->excludes(fuel);
    run->add_option("--budget", o->budget, "the engine's budget: " + join(budget_choices()) + " (default: fuel with --fuel, deadline with "
                                           "--deadline, else none)")
        ->check(CLI::IsMember(budget_choices()));
    add_bounds_option(run, o->bounds)
        ->description(bounds_help() + "; default guard where the engine has it (no slower on the corpus, 10-16% fewer "
                      "instructions: docs/interpreter/engines.md#bounds-guard-pages---bounds-guard), else check")
        ->default_str("");
    run->add_option("--refills", o->refills,
                    "with --fuel or --deadline: when the budget is spent, resume the suspended invocation this many times with "
                    "the same budget again (each suspension is said on stderr)")
        ->check(CLI::Range(uint64_t{0}, uint64_t{1'000'000}));
    (void)deadline;
  }
  run->add_option("--repeat", o->repeat, "with --invoke: call the export this many times (results printed once); "
                                         "cachegrind runs N and 2N calls and keeps the difference")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000'000}))
      ->capture_default_str();
  if (!profile)
    run->add_option("--cachegrind-pair", o->cachegrind_pair,
                    "with --invoke, for a count under cachegrind (what `dlab wasm bench --valgrind` runs): after the set-up, "
                    "fork; the child calls the export N times, this process 2N times, and both end without printing, so one "
                    "valgrind start-up yields both counts (1..1000000)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000}))
        ->excludes("--repeat");
  add_heap_limit_option(run, o->heap_limit);
  run->add_flag("--gc-stats", o->gc_stats, "after the run, say on stderr what the collector did (collections, time, allocation)");
  run->add_option("--clock", o->clock,
                  "real (the host's clocks) or fixed:NS: every WASI clock read advances NS nanoseconds, so a program that "
                  "sizes its work by the clock (CoreMark) runs the same iterations in every engine")
      ->check(clock_validator())
      ->capture_default_str();
  add_wasi_dir_options(run, o->dirs);
  add_wasi_env_option(run, o->env);
  run->add_flag("--trap-unknown-imports", o->trap_unknown_imports,
                "link a function import no module provides (not WASI's) to one that traps \"unknown import M.N called\" if "
                "called: for a program built for a richer host (a JavaScript bridge, a plugin hook) whose run never calls it");
  run->callback([o, profile, run] {
    // Options that would be silently ignored are refused.
    if (profile && run->count("--json") && o->json.empty()) throw CLI::ValidationError("--json", "needs a file name");
    if (profile && o->force && o->json.empty())
      throw CLI::ValidationError("--force", "applies only with --json (it lets --json replace an existing file)");
    std::vector<wasm::EngineConfig> predict_engines;
    if (profile && o->predict.predictors.empty()) {
      for (const char* opt : {"--predict-dispatch", "--predict-sample", "--predict-window", "--predict-load-addresses", "--ideal-mcpu"})
        if (run->count(opt)) throw CLI::ValidationError(opt, "applies only with --predict");
    } else if (profile) {
      try {
        bench::check_engine_simulation(o->predict);
      } catch (const std::invalid_argument& e) {
        throw CLI::ValidationError("--predict", e.what());
      }
      o->predict.ideal = resolve_ideal_mcpu(o->ideal_mcpu);
      if (!o->predict_sample.empty()) {
        unsigned long long on = 0, period = 0;
        std::sscanf(o->predict_sample.c_str(), "%llu/%llu", &on, &period);  // checked by its validator
        o->predict.sample = {on, period};
      }
      o->predict.table_on_stderr = true;
      o->predict.progress = "wasm profile --predict";
      const std::string modes = o->predict_dispatch.empty() ? std::string(wasm::dispatch_name(default_run_dispatch())) : o->predict_dispatch;
      const std::vector<std::string> names = split_commas(modes);
      if (names.empty()) throw CLI::ValidationError("--predict-dispatch", "an empty list: name dispatch modes, e.g. switch,tail");
      for (const std::string& name : names) {
        if (std::count(names.begin(), names.end(), name) > 1)
          throw CLI::ValidationError("--predict-dispatch", fmt::format("'{}' listed twice", escape_input(name)));
        auto mode = wasm::parse_dispatch(name);
        if (!mode)
          throw CLI::ValidationError("--predict-dispatch", fmt::format("'{}' is not a dispatch mode ({})", escape_input(name), join(dispatch_choices())));
        wasm::EngineConfig e{*mode, wasm::EngineConfig{}.placement, wasm::Budget::kNone, wasm::Bounds::kCheck, *wasm::parse_lowering(o->lowering)};
        e.lowering.ir = *wasm::parse_ir(o->ir);
        if (std::string why = wasm::engine_unavailable(e.dispatch, e.placement, e.budget, e.bounds); !why.empty())
          throw CLI::ValidationError("--predict-dispatch", why);
        if (std::string why = wasm::ir_unavailable(e.lowering.ir, e.dispatch, e.placement, e.budget, e.bounds); !why.empty())
          throw CLI::ValidationError("--ir", fmt::format("with --predict-dispatch {}: {}", name, why));
        predict_engines.push_back(e);
      }
    }
    // Under an emulator or binary translator nothing this run takes (the guest's clocks, --gc-stats'
    // times) is a core's: said once, before the program runs, on stderr (its stdout stays the guest's).
    // Not under valgrind: that is how the cachegrind cases run every engine (they count
    // instructions and claim no time), and a note per child would bury their progress.
    if (const auto& em = this_process_emulation(); em.emulated && em.emulator != "valgrind")
      fmt::print(stderr, "dlab: note: running under emulation ({}): times here are the translator's, not a core's; nothing is a measurement\n",
                 em.emulator);
    // Checked before the program runs, so a refused output costs no run.
    if (!o->json.empty()) check_output_file(o->json, o->force ? ExistingFile::kReplace : ExistingFile::kRefuse, "--force");
    wasm::Module m = load_checked_module(o->file);
    auto mode = o->dispatch.empty() ? default_run_dispatch() : *wasm::parse_dispatch(o->dispatch);
    auto place = *wasm::parse_placement(o->placement);
    wasm::Budget budget = !o->budget.empty() ? *wasm::parse_budget(o->budget)
                          : o->fuel          ? wasm::Budget::kFuel
                          : o->deadline_ms   ? wasm::Budget::kDeadline
                                             : wasm::Budget::kNone;
    // run's defaults (dlab-run's engine when no option names one; wasi_command.h): guard where the
    // engine has one (tail and tail_pn, sp, no budget), else check (profile: check); the register IR
    // where the engine has it with those bounds (profile: the stack IR, set above), else the stack IR.
    wasm::Bounds bounds = !o->bounds.empty() ? *wasm::parse_bounds(o->bounds)
                          : profile          ? wasm::Bounds::kCheck
                                             : default_run_bounds(mode, place, budget);
    if (o->ir.empty()) o->ir = wasm::ir_name(default_run_ir(mode, place, budget, bounds));
    if (o->fuel && !wasm::budget_counts_fuel(budget))
      throw CLI::ValidationError("--fuel", fmt::format("the {} budget spends no fuel: use --budget fuel or fuel_machine", wasm::budget_name(budget)));
    if (o->deadline_ms && !wasm::budget_needs_timer(budget))
      throw CLI::ValidationError("--deadline", fmt::format("the {} budget has no deadline: use --budget deadline", wasm::budget_name(budget)));
    if (o->refills && !o->fuel && !o->deadline_ms) throw CLI::ValidationError("--refills", "needs --fuel or --deadline");
    if (o->cachegrind_pair && o->invoke.empty()) throw CLI::ValidationError("--cachegrind-pair", "needs --invoke");
    // fork copies only the calling thread, and the deadline engines' clock is a thread of its own.
    if (o->cachegrind_pair && wasm::budget_needs_timer(budget))
      throw CLI::ValidationError("--cachegrind-pair", "the deadline budget's timer thread would not be in the forked child: use --repeat");
    if (std::string why = wasm::engine_unavailable(mode, place, budget); !why.empty())
      throw CLI::ValidationError(unavailable_engine_option(mode, place, budget), why);
    if (std::string why = wasm::engine_unavailable(mode, place, budget, bounds); !why.empty()) throw CLI::ValidationError("--bounds", why);
    wasm::Lowering lowering = *wasm::parse_lowering(o->lowering);
    lowering.ir = *wasm::parse_ir(o->ir);
    std::string ir_why = profile ? wasm::ir_unavailable(lowering.ir, place) : wasm::ir_unavailable(lowering.ir, mode, place, budget, bounds);
    if (!ir_why.empty()) throw CLI::ValidationError("--ir", ir_why);
    wasm::Runtime rt(wasm::EngineConfig{mode, place, budget, bounds, lowering});
    if (o->heap_limit) rt.set_heap_limit(o->heap_limit);
    if (profile) {
      rt.enable_profile();
      // Every function lowered at instantiation: the counts are the program's dispatches alone (no
      // lower_on_call), and the code words the whole module's, as before lazy lowering.
      rt.set_lazy_lowering(false);
    }
    // Said however the run ends (a trap, an exit), if asked for.
    struct GcReport {
      const wasm::Runtime& rt;
      bool on;
      ~GcReport() {
        if (!on) return;
        fmt::print(stderr, "dlab: gc: {}\n", gc_summary(rt.gc_stats()));
      }
    } gc_report{rt, o->gc_stats};
    wasm::WasiOptions wasi;
    wasi.args.push_back(std::filesystem::path(o->file).filename().string());
    if (o->invoke.empty()) wasi.args.insert(wasi.args.end(), o->args.begin(), o->args.end());
    wasi.env = o->env;
    wasi.fixed_clock_step_ns = wasm::parse_clock(o->clock);
    wasi.preopens = wasi_preopens(o->dirs);
    // A guest blocked in fd_read or poll_oneoff checks this (the deadline engine checks the
    // guest's own code at every branch and call): the run's deadline, armed with the budget.
    auto deadline_at = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::time_point::max());
    if (o->deadline_ms) wasi.deadline_passed = [deadline_at] { return std::chrono::steady_clock::now() >= *deadline_at; };
    // What the profile counted so far, written when the run ends in a trap or an uncaught exception.
    auto write_profile_so_far = [&] {
      if (profile) write_profile_json(report_profile(rt.profile(), wasm::lowered_code_words(rt), o->top), o->json, o->force);
    };
    int exit_code = 0;
    try {
      exit_code = run_reporting_failures("dlab", o->file, rt, [&] {
        // In the try: a WASI import of the wrong type is a link error, said with the file's name.
        wasm::register_wasi(rt, m, wasi);
        if (o->trap_unknown_imports) wasm::link_unknown_imports_as_traps(rt, m);
        wasm::Instance& inst = rt.instantiate(std::move(m));
        std::string entry = o->invoke.empty() ? "_start" : o->invoke;
        auto ex = inst.exports.find(entry);
        if (ex == inst.exports.end() || ex->second.kind != wasm::ExternKind::kFunc) {
          std::string funcs;
          for (const auto& [name, v] : inst.exports)
            if (v.kind == wasm::ExternKind::kFunc) funcs += (funcs.empty() ? "" : ", ") + name;
          throw std::runtime_error(fmt::format("{}: no exported function {}{}; exported functions: {}", o->file, entry,
                                               o->invoke.empty() ? " (not a WASI command: pass --invoke NAME)" : "",
                                               funcs.empty() ? "none" : funcs));
        }
        const wasm::FuncType& type = ex->second.func->type;
        std::vector<wasm::Value> args;
        if (!o->invoke.empty()) {
          if (o->args.size() != type.params.size())
            throw std::runtime_error(fmt::format("{} takes {} arguments, {} given", entry, type.params.size(), o->args.size()));
          for (size_t i = 0; i < o->args.size(); ++i) args.push_back(parse_arg(o->args[i], type.params[i], i));
        }
        if (o->invoke.empty() && o->repeat != 1) throw std::runtime_error("--repeat needs --invoke (a WASI command's _start runs once)");
        std::vector<wasm::Value> results;
        // The budget is set afresh for every call; a suspended call is resumed --refills times.
        uint64_t suspensions = 0, spent = 0;
        auto arm = [&] {
          if (o->fuel) rt.set_fuel(o->fuel);
          if (o->deadline_ms) {
            rt.set_deadline(std::chrono::milliseconds(o->deadline_ms));
            *deadline_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(o->deadline_ms);
          }
        };
        auto call = [&](uint64_t repetitions) {
        for (uint64_t i = 0; i < repetitions; ++i) {
          arm();
          for (bool first = true;; first = false) {
            try {
              results = first ? rt.invoke(ex->second.func, args) : rt.resume();
              if (o->fuel) spent += o->fuel - rt.fuel_left();
              break;
            } catch (const wasm::Suspended& s) {
              if (o->fuel) spent += o->fuel;
              if (suspensions == o->refills) throw;
              ++suspensions;
              fmt::print(stderr, "dlab: {}: {} ({} of --refills {}); resuming with the same budget\n", o->file, s.what(), suspensions,
                         o->refills);
              arm();
            }
          }
        }
        };
        if (o->cachegrind_pair) count_forked_pair(o->cachegrind_pair, call);
        call(o->repeat);
        if (o->fuel) fmt::print(stderr, "dlab: fuel: {} branches and calls charged, {} suspensions\n", spent, suspensions);
        for (const auto& r : results) fmt::print("{}\n", format_value(r, ex->second.func->instance));
      }, write_profile_so_far);
    } catch (const wasm::Suspended& e) {
      std::fflush(stdout);
      write_profile_so_far();
      throw std::runtime_error(fmt::format("{}: trap: {} (the {} budget: {}{})", o->file, e.what(), wasm::budget_name(budget),
                                           o->fuel ? fmt::format("--fuel {}", o->fuel) : fmt::format("--deadline {}", o->deadline_ms),
                                           o->refills ? fmt::format(", refilled {} times", o->refills) : ""));
    }
    std::fflush(stdout);
    if (profile) {
      nlohmann::json j = report_profile(rt.profile(), wasm::lowered_code_words(rt), o->top);
      if (!predict_engines.empty() && exit_code != 0) {
        // The traced runs would end the same way, which run_traced takes for a failure.
        fmt::print(stderr, "dlab: --predict not run: the program exited with code {}\n", exit_code);
      } else if (!predict_engines.empty()) {
        // The same command line, as `dlab wasm run` in each engine (its own stdout discarded: the
        // program's output was this run's).
        std::vector<bench::SimulatedCase> cases;
        for (const auto& e : predict_engines) {
          std::vector<std::string> argv{self_executable(), "wasm", "run"}, flags = e.argv();
          argv.insert(argv.end(), flags.begin(), flags.end());
          argv.insert(argv.end(), {"--clock", o->clock, "--heap-limit", std::to_string(o->heap_limit), "--repeat", std::to_string(o->repeat)});
          if (!o->invoke.empty()) argv.insert(argv.end(), {"--invoke", o->invoke});
          if (o->trap_unknown_imports) argv.push_back("--trap-unknown-imports");
          for (const auto& kv : o->env) argv.insert(argv.end(), {"--env", kv});
          for (const auto& d : o->dirs.read_only) argv.insert(argv.end(), {"--dir", d});
          for (const auto& d : o->dirs.writable) argv.insert(argv.end(), {"--dir-rw", d});
          argv.push_back(o->file);
          argv.push_back("--");
          argv.insert(argv.end(), o->args.begin(), o->args.end());
          cases.push_back({fmt::format("{}/{}", std::filesystem::path(o->file).filename().string(), wasm::dispatch_name(e.dispatch)), argv, e,
                           bench::engine_params(e, {{"module", std::filesystem::path(o->file).filename().string()}})});
        }
        fmt::print(stderr, "\nsimulated (--predict):\n");
        j["simulated"] = bench::run_simulated_cases(cases, o->predict, std::nullopt, "");
      }
      write_profile_json(j, o->json, o->force);
    }
    std::fflush(stderr);
    // Through main, not std::exit: main still checks that standard output was written.
    if (exit_code) throw ExitStatus{exit_code};
  });
}

}  // namespace

void add_wasm_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("wasm", "the WebAssembly interpreter: decode, run a module, run the spec suite");
  cmd->require_subcommand(1);
  if (!command_selected(*cmd)) return;  // its subcommands only when the command line names it

  auto* decode = cmd->add_subcommand("decode", "decode and validate a .wasm module and summarise it, or say why it is malformed or invalid");
  auto file = std::make_shared<std::string>();
  decode->add_option("module", *file, "module.wasm")->required()->check(CLI::ExistingFile);
  decode->callback([file] {
    std::vector<uint8_t> bytes = read_module(*file);  // a regular file: /dev/zero is refused, not read forever
    try {
      wasm::Module m;
      try {
        m = wasm::decode_valid_module(bytes);
      } catch (const wasm::ValidationError& e) {
        throw std::runtime_error(fmt::format("{}: invalid: {}", *file, e.what()));
      }
      fmt::print("{}: {} types, {} imports, {} functions, {} tables, {} memories, {} globals, {} exports, {} element and {} data "
                 "segments{}\n",
                 *file, m.types.size(), m.imports.size(), m.functions.size(), m.tables.size(), m.memories.size(), m.globals.size(),
                 m.exports.size(), m.elements.size(), m.data.size(), m.start ? fmt::format(", start {}", *m.start) : "");
    } catch (const wasm::DecodeError& e) {
      throw std::runtime_error(fmt::format("{}: malformed at byte {}: {}", *file, e.offset(), e.what()));
    }
  });

  add_run_command(*cmd, false);
  add_run_command(*cmd, true);
  add_wasm_bench_command(*cmd);
  add_wasm_programs_command(*cmd);

  // Which engines this build has: a default build leaves out those only the measurements compare
  // and the one-function modes' placements beyond sp (engines.def's BUILD column), and tail_pn
  // needs clang's preserve_none.
  auto* engines = cmd->add_subcommand("engines", "list the interpreter's engines (engines.def's rows): each one's dispatch mode, "
                                                 "placement, budget and bounds, and whether this build has it or why not");
  engines->callback([] {
    fmt::print("{:<22} {:<8} {:<9} {:<13} {:<6} {}\n", "engine", "dispatch", "placement", "budget", "bounds", "in this build");
    for (const auto& e : wasm::engine_configs()) {
      std::string why = wasm::engine_unavailable(e.dispatch, e.placement, e.budget, e.bounds);
      fmt::print("{:<22} {:<8} {:<9} {:<13} {:<6} {}\n", e.engine_name(), wasm::dispatch_name(e.dispatch),
                 wasm::placement_name(e.placement), wasm::budget_name(e.budget), wasm::bounds_name(e.bounds),
                 why.empty() ? "built" : why);
    }
  });

  auto* spec = cmd->add_subcommand("spec", "run the WebAssembly spec tests (.wast converted with wast2json at run time, .bin.wast read directly), per file and in total");

  if (!command_selected(*spec)) return;  // its options only when the command line names it
  auto suite = std::make_shared<std::string>(DLAB_WASM_TESTSUITE);
  auto verbose = std::make_shared<bool>(false);
  auto stage = std::make_shared<std::string>("execute");
  auto dispatch = std::make_shared<std::string>("all");
  auto placement = std::make_shared<std::string>(wasm::placement_name(wasm::EngineConfig{}.placement));
  auto only = std::make_shared<std::string>();
  auto lowering = std::make_shared<std::string>(default_lowering());
  auto budget = std::make_shared<std::string>(wasm::budget_name(wasm::EngineConfig{}.budget));
  auto ir = std::make_shared<std::string>(wasm::ir_name(wasm::EngineConfig{}.lowering.ir));
  auto bounds = std::make_shared<std::string>(wasm::bounds_name(wasm::EngineConfig{}.bounds));
  spec->add_option("--stage", *stage,
                   "decode; validate (also the validator); link (also import resolution, register, assert_unlinkable); "
                   "execute (everything: instantiation, actions, every assertion)")
      ->check(CLI::IsMember({"decode", "validate", "link", "execute"}))
      ->capture_default_str();
  spec->add_option("--dispatch", *dispatch, "execute stage: " + join(dispatch_choices()) + ", or all (each mode in turn; one this build lacks is said not run, with how to build it)")
      ->check(CLI::IsMember(dispatch_choices(true)))
      ->capture_default_str();
  spec->add_option("--placement", *placement, "execute stage: a stack placement, or all (each in turn)")
      ->check(CLI::IsMember(placement_choices(true)))
      ->capture_default_str();
  refuse_renamed_option(spec, "--variant", "--placement");
  spec->add_option("--lowering", *lowering, "execute stage: " + wasm::lowering_help())
      ->check(CLI::IsMember(lowering_choices()))
      ->capture_default_str();
  add_ir_option(spec, *ir);
  spec->add_option("--budget", *budget,
                   "execute stage: " + join(budget_choices()) + " (a budgeted engine, its budget never reached: counting must change no result)")
      ->check(CLI::IsMember(budget_choices()))
      ->capture_default_str();
  add_bounds_option(spec, *bounds)->description("execute stage: " + bounds_help());
  spec->add_option("--suite", *suite,
                   "the suite's folder, searched recursively: its .bin.wast scripts (the WebAssembly 3.0 suite's binary form), "
                   "or, where it has none, its .wast files (through wast2json)")
      ->capture_default_str();
  spec->add_option("--only", *only, "run only files whose path contains this text");
  spec->add_flag("--verbose", *verbose, "list every failure");
  auto counting = std::make_shared<bool>(false);
  spec->add_flag("--counting", *counting,
                 "execute stage: run in the counting engine of `dlab wasm profile` (tail dispatch, sp placement, bounds "
                 "checks; the register forms built) instead of --dispatch's, which checks at every dispatch that each "
                 "handler consumes the words its layout declares");
  auto modules_out = std::make_shared<std::string>();
  spec->add_option("--modules-out", *modules_out,
                   "instead of running: write every module of the suite's .bin.wast scripts into this (new or empty) folder as "
                   "<script>-<n>.wasm, e.g. to seed the fuzzer (`just fuzz`)");
  spec->callback([suite, verbose, stage, dispatch, placement, only, lowering, budget, ir, bounds, modules_out, counting] {
    if (!modules_out->empty()) {
      size_t n = wasm::write_suite_modules(*suite, *only, *modules_out);
      fmt::print(stderr, "wrote {} modules into {}\n", n, *modules_out);
      return;
    }
    std::error_code ec;
    if (std::filesystem::exists(*suite, ec) && !std::filesystem::is_directory(*suite, ec))
      throw std::runtime_error(*suite + " is not a directory: --suite takes the folder of .wast files");
    if (!std::filesystem::is_directory(*suite, ec))
      throw std::runtime_error(ec && ec != std::errc::no_such_file_or_directory
                                   ? fmt::format("{}: cannot read: {}", *suite, ec.message())
                                   : *suite + " not found: pass --suite (or see the README's spec suite section: DLAB_WASM_TESTSUITE, tools/spec-suite)");
    wasm::SpecStage st = *stage == "link"       ? wasm::SpecStage::kLink
                         : *stage == "validate" ? wasm::SpecStage::kValidate
                         : *stage == "execute"  ? wasm::SpecStage::kExecute
                                                : wasm::SpecStage::kDecode;
    // The counting engine has the axes of a default EngineConfig (tail, sp, no budget, checked
    // bounds), its own; "all" or any other value of an axis is refused.
    auto is = [](const auto& parsed, const auto& value) { return parsed && *parsed == value; };
    const wasm::EngineConfig counting_engine{};
    if (*counting && (st != wasm::SpecStage::kExecute || !is(wasm::parse_dispatch(*dispatch), counting_engine.dispatch) ||
                      !is(wasm::parse_placement(*placement), counting_engine.placement) ||
                      !is(wasm::parse_budget(*budget), counting_engine.budget) || !is(wasm::parse_bounds(*bounds), counting_engine.bounds)))
      throw CLI::ValidationError("--counting", "the counting engine runs the execute stage with --dispatch tail --placement sp "
                                               "--budget none --bounds check (its own); give those, or leave --counting out");
    std::vector<wasm::Dispatch> modes;
    if (st != wasm::SpecStage::kExecute) modes = {wasm::Dispatch::kTail};  // earlier stages run no code
    else if (*dispatch == "all") modes = wasm::every_dispatch_mode();  // one this build lacks is said not run
    else modes = {*wasm::parse_dispatch(*dispatch)};
    std::vector<wasm::Placement> places;
    if (st != wasm::SpecStage::kExecute) places = {wasm::Placement::kSp};
    else if (*placement == "all") places = wasm::placements();
    else places = {*wasm::parse_placement(*placement)};
    wasm::Budget bud = st == wasm::SpecStage::kExecute ? *wasm::parse_budget(*budget) : wasm::Budget::kNone;
    wasm::Bounds bnd = st == wasm::SpecStage::kExecute ? *wasm::parse_bounds(*bounds) : wasm::Bounds::kCheck;
    std::vector<std::pair<wasm::Dispatch, wasm::Placement>> engines;
    for (auto mode : modes)
      for (auto place : places) {
        // A pair that cannot exist is said, not silently dropped; asked for alone, it is an error.
        std::string why = wasm::engine_unavailable(mode, place, bud, bnd);
        const char* option = why.empty() ? "--ir" : unavailable_engine_option(mode, place, bud);
        if (why.empty() && st == wasm::SpecStage::kExecute) why = wasm::ir_unavailable(*wasm::parse_ir(*ir), mode, place, bud, bnd);
        if (!why.empty()) {
          if (modes.size() == 1 && places.size() == 1) throw CLI::ValidationError(option, why);
          fmt::print("== not run: {} ==\n\n", why);
          continue;
        }
        engines.emplace_back(mode, place);
      }
    int total_failed = 0, total_errors = 0;
    size_t files_run = 0, files_with_commands = 0;
    // The suite's scripts, listed once: folders that cannot be read are errors named here, and
    // every readable script still runs.
    std::vector<std::string> unreadable;
    const std::vector<std::string> files = wasm::spec_files(*suite, &unreadable);
    for (const auto& why : unreadable) fmt::print("ERROR {}\n", why);
    total_errors += static_cast<int>(unreadable.size());
    for (auto [mode, place] : engines) {
      int passed = 0, failed = 0, errors = 0;
      std::map<std::string, int> skipped;
      std::map<std::string, int> skipped_files;  // reason -> files with such skips
      std::string engine = fmt::format("{} dispatch, {} placement, {} lowering, {} IR{}", wasm::dispatch_name(mode), wasm::placement_name(place),
                                       *lowering, *ir, wasm::budget_bounded(bud) ? fmt::format(", {} budget", wasm::budget_name(bud)) : "");
      if (bnd != wasm::Bounds::kCheck) engine += fmt::format(", {} bounds", wasm::bounds_name(bnd));
      if (*counting) engine += ", the counting engine (every length checked)";
      wasm::Lowering spec_lowering = *wasm::parse_lowering(*lowering);
      spec_lowering.ir = *wasm::parse_ir(*ir);
      if (st == wasm::SpecStage::kExecute) fmt::print("== {} ==\n", engine);
      for (const auto& f : files) {
        if (!only->empty() && f.find(*only) == std::string::npos) continue;
        ++files_run;
        auto r = wasm::run_spec_file(f, st, wasm::EngineConfig{mode, place, bud, bnd, spec_lowering}, *counting);
        int sk = 0;
        for (const auto& [why, n] : r.skipped) {
          skipped[why] += n;
          ++skipped_files[why];
          sk += n;
        }
        // The script's path below the suite as it was found, not resolved: a symbolic link is
        // listed under its own name, not its target's.
        std::string name = std::filesystem::path(f).lexically_relative(*suite).string();
        if (name.empty() || name.rfind("..", 0) == 0) name = f;
        if (!r.error.empty()) {
          ++errors;
          fmt::print("ERROR {:<40} {}\n", name, r.error);
          continue;
        }
        if (r.passed + r.failed + sk == 0) {
          // Nothing in it to run (the 3.0 suite has two such scripts: their every case is a text
          // module, left out of the binary form): said as such, neither passed nor failed.
          fmt::print("{:<5} {:<40} no commands\n", "empty", name);
          continue;
        }
        ++files_with_commands;
        fmt::print("{:<5} {:<40} {} passed, {} failed, {} skipped\n", r.failed ? "FAIL" : "ok", name, r.passed, r.failed, sk);
        for (const auto& [why, n] : r.skipped) fmt::print("        skipped {:>5}  {}\n", n, why);
        if (*verbose || r.failed) {
          size_t shown = 0;
          for (const auto& why : r.failures) {
            if (!*verbose && ++shown > 20) {
              fmt::print("        ... {} more (--verbose lists all)\n", r.failures.size() - 20);
              break;
            }
            fmt::print("        {}\n", why);
          }
        }
        passed += r.passed;
        failed += r.failed;
      }
      int total_skipped = 0;
      for (const auto& [why, n] : skipped) total_skipped += n;
      fmt::print("\nskipped, by reason:\n");
      for (const auto& [why, n] : skipped) fmt::print("  {:>6} commands in {:>3} files  {}\n", n, skipped_files[why], why);
      fmt::print("\nspec{}: {} passed, {} failed, {} skipped\n\n",
                 st == wasm::SpecStage::kExecute ? fmt::format(" ({})", engine) : "", passed, failed,
                 total_skipped);
      total_failed += failed;
      total_errors += errors;
    }
    if (files_run == 0 && total_errors == 0)
      throw std::runtime_error(only->empty() ? fmt::format("no .wast files in {}", *suite)
                                             : fmt::format("no spec file's path contains '{}'", *only));
    if (files_with_commands == 0 && total_errors == 0)
      throw std::runtime_error(fmt::format("the {} scripts run hold no commands: nothing was tested", files_run));
    if (total_failed || total_errors)
      throw std::runtime_error(fmt::format("{} spec commands failed, {} files or folders could not be read or converted",
                                           total_failed, total_errors));
  });
}

}  // namespace dlab::cli
