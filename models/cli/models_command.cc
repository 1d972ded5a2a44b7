// `dlab models`: sweeps the reduction models under the harness (interleaved, with the run
// protocol) or under cachegrind (`--valgrind`), and writes one result table.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <future>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/models/case_simulation.h"
#include "dispatchlab/models/ideal_bound.h"
#include "dispatchlab/models/model_case.h"
#include "dispatchlab/predictors/llvm_mca.h"

namespace dlab::cli {

namespace {

using models::ModelCase;

// A comma-separated list of integers in [lo, hi]; anything else is an error that names the option.
std::vector<uint64_t> parse_list(const std::string& s, const char* option, uint64_t lo, uint64_t hi) {
  std::vector<uint64_t> out;
  for (const auto& x : split_commas(s)) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(x.data(), x.data() + x.size(), v);
    if (ec != std::errc() || end != x.data() + x.size() || v < lo || v > hi)
      throw CLI::ValidationError(option, fmt::format("'{}' is not an integer in {}..{}", x, lo, hi));
    out.push_back(v);
  }
  if (out.empty()) throw CLI::ValidationError(option, "needs at least one value");
  return out;
}

struct GridOptions {
  std::string which = "all";  // kcopy, stack, all
  std::string kinds, copies, orders, dispatch, lengths, stack_copies, statements, stack_dispatch, placements, mode_placements;
  bool quick = false;
  uint64_t seed = 1;
};

// A group is run as one interleaved protocol run; its first case is the baseline of its ratios.
struct Group {
  std::string label;
  std::vector<ModelCase> cases;
  std::vector<std::string> not_generated;  // cases the grid asked for that the spec excludes, with why
};

// The grid's groups, and the groups it could not form (a mode group whose placement exists in one
// mode only has nothing to compare), each with the reason: reported, never silently dropped.
struct Grid {
  std::vector<Group> groups;
  std::vector<std::pair<std::string, std::string>> skipped;  // label, why
};

Grid make_grid(GridOptions o, bool valgrind) {
  // Defaults: the full grid; --quick and --valgrind take smaller ones (cachegrind is ~50x slower).
  // Program lengths default to the research's (4,096 K-copy elements, 64 statements); the stack
  // model also runs at 16-2000 statements, the predictability sweep (where mispredicts take over),
  // and at 17 copies per kind: 171 handlers, the research's configuration.
  // Options of one model family given with --model for the other would be silently ignored:
  // refused instead.
  if (o.which == "stack")
    for (auto [given, name] : {std::pair{&o.kinds, "--kinds"}, {&o.copies, "--copies"}, {&o.orders, "--orders"},
                               {&o.dispatch, "--dispatch"}, {&o.lengths, "--length"}})
      if (!given->empty())
        throw CLI::ValidationError(name, "applies to the K-copy models, not --model stack (the stack model's dispatch modes "
                                         "are --stack-dispatch and --mode-placements)");
  if (o.which == "kcopy")
    for (auto [given, name] : {std::pair{&o.stack_copies, "--stack-copies"}, {&o.statements, "--statements"},
                               {&o.stack_dispatch, "--stack-dispatch"}, {&o.placements, "--placements"},
                               {&o.mode_placements, "--mode-placements"}})
      if (!given->empty()) throw CLI::ValidationError(name, "applies to the stack model, not --model kcopy");
  if (o.which != "all" && o.which != "kcopy" && o.which != "stack")
    throw CLI::ValidationError("--model", fmt::format("unknown '{}' (valid: kcopy, stack, all)", o.which));
  std::vector<std::string> modes;
  for (const auto& d : models::dispatch_modes()) modes.push_back(d.name);
  // The stack model's placements, in the spec's order, each once (a placement is built in some
  // modes only: not_built).
  std::vector<std::string> stack_placements;
  for (const auto& e : models::all_entries())
    if (e.model == "stack" && std::find(stack_placements.begin(), stack_placements.end(), e.placement) == stack_placements.end())
      stack_placements.push_back(e.placement);
  bool small = o.quick || valgrind;
  if (o.kinds.empty()) o.kinds = small ? "u,o" : "u,o,p";
  if (o.copies.empty()) o.copies = valgrind ? "1,16,512" : o.quick ? "1,8,32,128,512" : "1,2,4,8,16,24,32,48,64,128,256,512";
  if (o.orders.empty()) o.orders = valgrind ? "cyclic" : o.quick ? "cyclic,random" : "cyclic,random,block8";
  if (o.dispatch.empty()) o.dispatch = valgrind ? "tail,switch" : "tail,tail_pn,goto,goto_nodup,switch";
  if (o.lengths.empty()) o.lengths = std::to_string(models::kDefaultKCopyLength);
  if (o.stack_copies.empty()) o.stack_copies = valgrind ? "17" : o.quick ? "17,64" : "1,4,17,64";
  if (o.statements.empty()) o.statements = valgrind ? "64" : "16,64,256,2000";
  if (o.stack_dispatch.empty()) o.stack_dispatch = "tail";
  if (o.mode_placements.empty()) o.mode_placements = small ? "sp" : "vec,sp,sp_wt_nr";
  Grid grid;
  auto& groups = grid.groups;
  auto add = [](Group& g, ModelCase c) {
    if (models::has_entry(c.model, c.placement, c.dispatch)) {
      g.cases.push_back(std::move(c));
      return;
    }
    try {
      models::find_entry(c.model, c.placement, c.dispatch);
    } catch (const std::invalid_argument& e) {
      g.not_generated.push_back(e.what());
    }
  };
  if (o.which == "all" || o.which == "kcopy") {
    std::vector<models::Order> orders;
    std::vector<std::string> order_names;
    for (const auto& name : split_commas(o.orders)) {
      try {
        orders.push_back(models::Order::parse(name));
      } catch (const std::invalid_argument& e) {
        throw CLI::ValidationError("--orders", e.what());
      }
      if (std::find(order_names.begin(), order_names.end(), name) != order_names.end())
        throw CLI::ValidationError("--orders", fmt::format("'{}' is listed twice", name));
      order_names.push_back(name);
    }
    auto kinds = choose_from(o.kinds, {"u", "o", "p"}, "--kinds", false);
    auto dispatch = choose_from(o.dispatch, modes, "--dispatch", false);
    auto copies = parse_list(o.copies, "--copies", 1, 512);
    for (auto len : parse_list(o.lengths, "--length", 1, 1u << 22))
      for (const auto& order : orders)
        for (const auto& d : dispatch) {
          Group g{fmt::format("kcopy {} {} L{}", order.name(), d, len), {}, {}};
          for (const auto& k : kinds)
            for (auto c : copies) add(g, {models::kcopy_model(k[0]), "sp", d, static_cast<int>(c), order, o.seed, len});
          groups.push_back(std::move(g));
        }
  }
  if (o.which == "all" || o.which == "stack") {
    auto placements = choose_from(o.placements, stack_placements, "--placements");
    auto stack_dispatch = choose_from(o.stack_dispatch, modes, "--stack-dispatch", false);
    auto mode_placements = o.mode_placements == "none" ? std::vector<std::string>{}
                                                       : choose_from(o.mode_placements, stack_placements, "--mode-placements", false);
    // The baseline (switch: one shared indirect jump) first in a mode group, as in `dlab wasm bench`.
    std::stable_partition(modes.begin(), modes.end(), [](const std::string& m) { return models::dispatch_mode(m).is_baseline(); });
    for (auto c : parse_list(o.stack_copies, "--stack-copies", 1, 64))
      for (auto n : parse_list(o.statements, "--statements", 1, 1'000'000)) {
        // Placement groups: every state placement in one dispatch mode, against vec.
        for (const auto& d : stack_dispatch) {
          Group g{fmt::format("stack x{} s{} {}", c, n, d), {}, {}};
          for (const auto& v : placements) add(g, {"stack", v, d, static_cast<int>(c), {}, o.seed, n});
          groups.push_back(std::move(g));
        }
        // Mode groups: one state placement in every dispatch mode, against switch.
        for (const auto& v : mode_placements) {
          Group g{fmt::format("stack modes {} x{} s{}", v, c, n), {}, {}};
          for (const auto& d : modes) add(g, {"stack", v, d, static_cast<int>(c), {}, o.seed, n});
          if (g.cases.size() < 2 || !models::dispatch_mode(g.cases.front().dispatch).is_baseline()) {
            std::string why = "fewer than two dispatch modes, or no switch baseline:";
            for (const auto& ng : g.not_generated) why += " " + ng + ";";
            grid.skipped.emplace_back(g.label, why);
            fmt::print(stderr, "[models] {}: not run: {}\n", g.label, why);
            continue;
          }
          groups.push_back(std::move(g));
        }
      }
  }
  if (groups.empty()) throw std::invalid_argument("the grid is empty: nothing to measure");
  for (const auto& g : groups) {
    if (g.cases.empty()) throw std::invalid_argument("group " + g.label + " has no generated case: " + g.not_generated.front());
    for (const auto& why : g.not_generated) fmt::print(stderr, "[models] {}: skipped: {}\n", g.label, why);
  }
  return grid;
}

std::string sites_file() {
  // Written at build time next to the dlab binary's build tree (models/dispatch_sites.tsv).
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path() / "models" / "dispatch_sites.tsv").string();
}

// A program built beside dlab (dlab-model-exec, models_bench), or an error saying to build it.
std::string program_beside_dlab(const char* name) {
  std::error_code ec;
  std::string path = (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / name).string();
  if (!std::filesystem::exists(path)) throw std::runtime_error(path + " not found: build it (`just build`)");
  return path;
}

std::map<std::string, std::string> case_params(const ModelCase& c, size_t dispatches, const std::map<std::string, int>& sites) {
  auto p = c.params();
  p["dispatches_per_run"] = std::to_string(dispatches);
  auto it = sites.find(fmt::format("{}_{}_{}", c.model, c.placement, c.dispatch));
  p["indirect_jump_sites"] = it == sites.end() ? "" : std::to_string(it->second);
  return p;
}

void print_list() {
  auto sites = models::load_dispatch_sites(sites_file());
  fmt::print("models:\n");
  for (const auto& d : models::model_docs()) fmt::print("  {:<10} {}\n", d.name, d.doc);
  fmt::print("handler kinds:\n");
  for (const auto& d : models::kind_docs()) fmt::print("  {:<10} {}\n", d.name, d.doc);
  fmt::print("stack-state placements:\n");
  for (const auto& d : models::placement_docs()) fmt::print("  {:<16} {}\n", d.name, d.doc);
  fmt::print("dispatch modes:\n");
  for (const auto& d : models::dispatch_docs()) fmt::print("  {:<11} {}\n", d.name, d.doc);
  fmt::print("generated entries (indirect-jump sites in the compiled code):\n");
  for (const auto& e : models::all_entries()) {
    auto it = sites.find(fmt::format("{}_{}_{}", e.model, e.placement, e.dispatch));
    fmt::print("  {:<8} {:<16} {:<11} {:<14} {}\n", e.model, e.placement, e.dispatch, e.convention(),
               it == sites.end() ? "?" : std::to_string(it->second));
  }
  if (!models::not_built().empty()) {
    fmt::print("generated but not built in this build (configure with -DDLAB_ALL_MODELS=ON; `just models` does):\n");
    for (const auto& n : models::not_built()) fmt::print("  {:<8} {:<16} {}\n", n.model, n.placement, n.dispatch);
  }
}

// Wide view of one group for the terminal: one line per case with the key metrics.
void print_group(const ExperimentTables& t, size_t first_row) {
  std::map<std::pair<std::string, std::string>, size_t> at;
  std::vector<std::string> order;
  for (size_t r = first_row; r < t.summary.size(); ++r) {
    auto v = t.summary.at(r, "case");
    if (at.empty() || std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
    at[{v, t.summary.at(r, "metric")}] = r;
  }
  auto cell = [&](const std::string& v, const std::string& m, double scale, bool with_ratio) -> std::string {
    auto it = at.find({v, m});
    if (it == at.end() || t.summary.at(it->second, "median").empty()) return "-";
    std::string s = fmt::format("{:.3g}", std::stod(t.summary.at(it->second, "median")) * scale);
    if (with_ratio && !t.summary.at(it->second, "ratio").empty())
      s += fmt::format(" ({:+.0f}% {}/{})", (std::stod(t.summary.at(it->second, "ratio")) - 1) * 100,
                       t.summary.at(it->second, "smaller_k"), t.summary.at(it->second, "smaller_n"));
    return s;
  };
  fmt::print("  {:<34} {:>24} {:>9} {:>9} {:>10} {:>9}\n", "case", "cycles/disp (TSC est.)", "cycles", "instr", "flush/1k", "be-bound");
  for (const auto& v : order)
    fmt::print("  {:<34} {:>24} {:>9} {:>9} {:>10} {:>9}\n", v, cell(v, "cycles_tsc_estimate", 1, true), cell(v, "cycles", 1, false),
               cell(v, "instructions", 1, false), cell(v, "memory_order_flushes", 1000, false), cell(v, "backend_bound", 1, false));
}

struct ModelsOptions {
  GridOptions grid;
  RunProtocol protocol;
  bool list = false, valgrind = false, no_save = false, gbench = false;
  uint64_t target_dispatches = 400'000;  // per sample
  uint64_t valgrind_reps = 2;
  std::string predict;  // predictor names (docs/predictors.md), "all"; empty: no simulation
  uint32_t predict_window = 64;
  std::string ideal_mcpu = "native";  // llvm-mca's -mcpu for the ideal bound; "none": no bound
  uint32_t predict_load_addresses = 1;  // the branch rows at this many load addresses, a sample each
  // Counted per traced run: the research's 4,096-element K-copy program 16 times (two dispatches an
  // element), about 3 million instructions, so that the store sets' clearing (every 10^6) runs in
  // it: after the warm-up a count over 16,384 dispatches saw none, and store sets 0 flushes where
  // their steady state is about 0.016 x K per 1,000 (kcopy_u at 32 copies: 0.00 against 0.51 over
  // 200,000 dispatches).
  uint64_t predict_dispatches = 131'072;
  uint64_t predict_warmup = 16'384;      // dispatches traced before those counted (whole repetitions)
  RunDirectoryOptions out;
};

void run_harness_sweep(ModelsOptions& o) {
  Grid grid = make_grid(o.grid, false);
  const auto& groups = grid.groups;
  auto sites = models::load_dispatch_sites(sites_file());
  const auto& machine = this_machine();
  BackendSet backends = BackendSet::for_this_machine();
  CounterPlan plan = plan_counters(MetricCatalog::builtin(), backends, this_host_cpu());
  Meter meter(plan, backends);
  std::optional<RunDirectory> dir;
  if (!o.no_save) dir = o.out.resolve(machine, experiment_files("models"));
  std::string run_id = dir ? dir->run_id() : "unsaved";
  ExperimentTables all;
  nlohmann::json group_log = nlohmann::json::array();
  RunResult last;
  size_t total_cases = 0;
  for (const auto& g : groups) total_cases += g.cases.size();
  fmt::print(stderr, "[models] {} groups, {} cases, {} (+{} warm-up), interleaved within each group\n", groups.size(),
             total_cases, o.protocol.rounds_text(), o.protocol.warmup_rounds);
  bool tty = isatty(fileno(stderr));
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    std::vector<std::unique_ptr<models::ModelInstance>> instances;
    std::vector<MeasuredCase> measured;
    uint64_t checksum = 0;
    for (const auto& c : g.cases) {
      auto inst = std::make_unique<models::ModelInstance>(models::find_entry(c.model, c.placement, c.dispatch), c.program(), c.seed);
      uint64_t reps = std::max<uint64_t>(1, o.target_dispatches / inst->dispatches_per_run());
      models::ModelInstance* p = inst.get();
      measured.push_back({c.name(), [p, reps] { p->run(reps); }, static_cast<double>(reps * p->dispatches_per_run()), "dispatch",
                          case_params(c, p->dispatches_per_run(), sites)});
      instances.push_back(std::move(inst));
    }
    auto progress = [&](int done, int total, const std::string& v) {
      if (tty) fmt::print(stderr, "\r[models] group {}/{} {:<22} sample {}/{} {:<34}", gi + 1, groups.size(), g.label, done, total, v);
    };
    last = run_protocol(o.protocol, meter, measured, progress);
    if (tty) fmt::print(stderr, "\r{:<120}\r", "");
    // Same program, same state, same repetitions: within a group of one model every case must
    // end with the same checksum, or a case computes something else.
    std::map<std::string, uint64_t> model_sum;
    for (size_t i = 0; i < g.cases.size(); ++i) {
      if (g.cases[i].is_kcopy()) continue;
      auto [it, fresh] = model_sum.emplace(g.cases[i].model, instances[i]->checksum());
      if (!fresh && it->second != instances[i]->checksum())
        throw std::runtime_error(fmt::format("checksum mismatch in group {}: {} differs from the group's first case", g.label,
                                             g.cases[i].name()));
      checksum = it->second;
    }
    size_t first_row = all.summary.size();
    auto t = experiment_tables(run_id, "models", last, measured, machine);
    all.summary.append(t.summary);
    all.samples.append(t.samples);
    fmt::print("{} (baseline {}):\n", g.label, g.cases.front().name());
    print_group(all, first_row);
    nlohmann::json entry = {{"group", g.label}, {"baseline", g.cases.front().name()}, {"cases", g.cases.size()},
                            {"pinned_cpu", last.pinned_cpu}, {"not_generated", g.not_generated}, {"rounds", last.rounds},
                            {"stop", last.stop_note}};
    if (!last.stop_note.empty()) fmt::print(stderr, "[models] {}: {}\n", g.label, last.stop_note);
    if (!model_sum.empty()) entry["checksum_all_cases"] = fmt::format("{:016x}", checksum);
    group_log.push_back(entry);
  }
  if (dir) {
    auto sidecar = sidecar_json(run_id, machine, &last, {"summary", "samples"});
    sidecar["groups"] = group_log;
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& [label, why] : grid.skipped) skipped.push_back({{"group", label}, {"why", why}});
    sidecar["skipped_groups"] = skipped;
    sidecar["dispatch_sites_file"] = sites_file();
    write_experiment(*dir, "models", all, sidecar);
    fmt::print(stderr, "wrote {}/models.summary.csv\n", dir->path().string());
  }
}

void run_valgrind_sweep(ModelsOptions& o) {
  auto groups = make_grid(o.grid, true).groups;
  auto sites = models::load_dispatch_sites(sites_file());
  const auto& machine = this_machine();
  std::string exec = program_beside_dlab("dlab-model-exec");
  const auto& cat = MetricCatalog::builtin();
  std::optional<RunDirectory> dir;
  if (!o.no_save) dir = o.out.resolve(machine, experiment_files("models_valgrind"));
  RunResult r = cachegrind_result(cat);
  std::vector<MeasuredCase> measured;
  size_t n_cases = 0, done = 0;
  for (const auto& g : groups) n_cases += g.cases.size();
  uint64_t n = o.valgrind_reps;
  fmt::print("{:<34} {:>9} {:>8} {:>8} {:>10}   (per dispatch, cachegrind, {}x vs {}x repetitions)\n", "case", "instr", "loads",
             "stores", "mispredict", 2 * n, n);
  for (const auto& g : groups)
    for (const auto& c : g.cases) {
      fmt::print(stderr, "[models --valgrind] {}/{} {}\n", ++done, n_cases, c.name());
      auto d = models::cachegrind_counts(c, exec, n);
      size_t per_run = c.program().size();
      CaseSamples vs{c.name(), {cachegrind_values(cat, d)}};
      std::map<std::string, double> shown;
      for (size_t i = 0; i < r.metrics.size(); ++i)
        if (vs.samples[0][i].value) shown[r.metrics[i].name] = *vs.samples[0][i].value / static_cast<double>(n * per_run);
      auto col = [&](const char* m, int width, int digits) {
        auto it = shown.find(m);
        return it == shown.end() ? fmt::format("{:>{}}", "-", width) : fmt::format("{:>{}.{}f}", it->second, width, digits);
      };
      fmt::print("{:<34} {} {} {} {}\n", c.name(), col("cg_instructions", 9, 2), col("cg_loads", 8, 2), col("cg_stores", 8, 2),
                 col("cg_mispredicts", 10, 3));
      r.cases.push_back(std::move(vs));
      measured.push_back({c.name(), nullptr, static_cast<double>(n * per_run), "dispatch", case_params(c, per_run, sites)});
    }
  if (!dir) return;
  auto t = experiment_tables(dir->run_id(), "models_valgrind", r, measured, machine);
  auto sidecar = sidecar_json(dir->run_id(), machine, &r, {"summary", "samples"});
  sidecar["valgrind_repetitions"] = {n, 2 * n};
  write_experiment(*dir, "models_valgrind", t, sidecar);
  fmt::print(stderr, "wrote {}/models_valgrind.summary.csv\n", dir->path().string());
}

// The simulation's grid, where not given: the K-copy series of the research's table (copies 1 to
// 64 in tail dispatch, the three kinds) and the stack model at its configuration (171 handlers,
// 64 statements) in every placement, plus sp in every dispatch mode. About 36 cases, each about a
// second under dlabtrace.
void predict_grid_defaults(GridOptions& g) {
  auto fill = [](std::string& field, const char* value) {
    if (field.empty()) field = value;
  };
  if (g.which != "stack") {
    fill(g.kinds, "u,o,p");
    fill(g.copies, "1,8,16,24,32,64");
    fill(g.orders, "cyclic");
    fill(g.dispatch, "tail");
  }
  if (g.which != "kcopy") {
    fill(g.stack_copies, "17");
    fill(g.statements, "64");
    fill(g.mode_placements, "sp");
  }
}

// Memory-order flushes and branch mispredicts per dispatch, simulated on lackey traces of
// dlab-model-exec (models/case_simulation.h), in their own experiment (models_simulated): every
// metric's name says simulated and by which predictor, its backend is "simulation", and it is
// marked estimated, so that nothing reads it as a counted metric.
void run_predict_sweep(ModelsOptions& o) {
  namespace pr = predictors;
  pr::PredictorSelection rows;
  try {
    rows = pr::select_any_predictors(o.predict);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--predict", e.what());
  }
  if (std::string why = pr::tracer_unavailable(); !why.empty()) throw std::runtime_error(why);
  // The ideal bound's CPU: llvm-mca's name for it (native resolved, so the result says which).
  const predictors::McaCpu ideal_cpu = resolve_ideal_mcpu(o.ideal_mcpu);
  const std::string& mcpu = ideal_cpu.mcpu;  // "" for none
  predict_grid_defaults(o.grid);
  auto groups = make_grid(o.grid, true).groups;
  auto sites = models::load_dispatch_sites(sites_file());
  const auto& machine = this_machine();
  std::string exec = program_beside_dlab("dlab-model-exec");
  std::optional<RunDirectory> dir;
  if (!o.no_save) dir = o.out.resolve(machine, experiment_files("models_simulated"));
  const models::TracedBinary binary(exec);
  std::vector<ModelCase> cases;
  for (const auto& g : groups)
    for (const auto& c : g.cases) cases.push_back(c);
  // Two cases at once where there is a second core: the counts are the trace's, whatever runs
  // beside it. A case took 8 to 20 s under lackey on a 2-vCPU Zen 5 guest (lackey writes the whole
  // process, a write per line); under dlabtrace, which traces the handlers only, about half a second.
  const size_t parallel = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  constexpr double kCaseTimeoutS = 900;
  fmt::print(stderr, "[models --predict] {} cases under valgrind (dlabtrace), {} at a time; predictors: {}\n", cases.size(), parallel, o.predict);
  // Each case traced for about the same number of dispatches (whole repetitions of its program), so
  // that a predictor's learning takes the same share of every case's count.
  // Before them, whole repetitions for the predictors' warm-up, left out of the counts (as the
  // timed runs leave out their warm-up rounds): a learning predictor's first passes over a
  // program are its cold misses, which no timed sample has.
  std::vector<uint64_t> reps, warmup_reps, per_run;
  for (const auto& c : cases) {
    per_run.push_back(models::ModelInstance(models::find_entry(c.model, c.placement, c.dispatch), c.program(), c.seed).dispatches_per_run());
    reps.push_back(std::max<uint64_t>(1, (o.predict_dispatches + per_run.back() - 1) / per_run.back()));
    warmup_reps.push_back((o.predict_warmup + per_run.back() - 1) / per_run.back());
  }
  std::vector<models::CaseSimulation> results(cases.size());
  std::vector<models::IdealBound> ideal(cases.size());
  for (size_t first = 0; first < cases.size(); first += parallel) {
    std::vector<std::future<models::CaseSimulation>> running;
    for (size_t i = first; i < std::min(cases.size(), first + parallel); ++i) {
      fmt::print(stderr, "[models --predict] {}/{} {}\n", i + 1, cases.size(), cases[i].name());
      running.push_back(std::async(std::launch::async, [&, i] {
        if (!mcpu.empty()) ideal[i] = models::ideal_bound(cases[i], binary, mcpu);
        return models::simulate_case(cases[i], binary, warmup_reps[i] + reps[i], rows, o.predict_window, kCaseTimeoutS,
                                     o.predict_load_addresses, warmup_reps[i] * per_run[i]);
      }));
    }
    for (size_t j = 0; j < running.size(); ++j) results[first + j] = running[j].get();
  }
  RunResult r = single_count_result("trace-simulation", "not pinned: simulated counts depend on the binary, not on the CPU that ran it");
  r.protocol.samples = r.rounds = static_cast<int>(o.predict_load_addresses);  // a sample per load address
  r.metrics = pr::simulated_metrics(results.front().layouts.front(),
                                    fmt::format("on valgrind's trace (dlabtrace) of the case's handlers (dlab-model-exec, whole programs for "
                                                "about {} dispatches, counted after a warm-up of about {})", o.predict_dispatches, o.predict_warmup));
  if (!mcpu.empty())
    for (auto& m : predictors::ideal_bound_metrics(ideal_cpu, "each handler's machine code (its function), weighted by the program's dispatches to it"))
      r.metrics.push_back(std::move(m));
  std::vector<MeasuredCase> measured;
  fmt::print("{:<34} {:>10} {:>22} {:>22} {:>10} {:>10}   (per 1,000 dispatches, simulated{}; ideal and ordered: cycles per dispatch, llvm-mca)\n",
             "case", "dispatches", "flushes (first row)", "indirect misp. (first)", "ideal", "ordered",
             o.predict_load_addresses > 1 ? fmt::format("; at the trace's own load address, the files hold all {}", o.predict_load_addresses) : "");
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& res = results[i];
    // A sample per load address (the memory rows and the ideal bound the same in each).
    CaseSamples vs{cases[i].name(), {}};
    std::string flushes = "-", indirect = "-";
    for (const auto& layout : res.layouts) {
      vs.samples.emplace_back();
      for (const auto& sc : layout) vs.samples.back().push_back({static_cast<double>(sc.count), "", 1.0, "dlabtrace trace"});
    }
    for (const auto& sc : res.layouts.front()) {
      double per_1k = 1000.0 * static_cast<double>(sc.count) / static_cast<double>(res.dispatches);
      if (sc.quantity == "memory_order_flushes" && flushes == "-") flushes = fmt::format("{:.2f} {}", per_1k, sc.predictor);
      if (sc.quantity == "indirect_mispredicts" && indirect == "-") indirect = fmt::format("{:.2f} {}", per_1k, sc.predictor);
    }
    if (!mcpu.empty())
      for (auto& round : vs.samples)
        for (const auto& bound : {ideal[i].cycles_per_dispatch, ideal[i].ordered_cycles_per_dispatch, ideal[i].resource_cycles_per_dispatch}) {
          if (bound)
            round.push_back({*bound * static_cast<double>(res.dispatches), "", 1.0, "llvm-mca"});
          else
            round.push_back({std::nullopt, ideal[i].reason, 1.0, "llvm-mca"});
        }
    auto cell = [](const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : std::string("-"); };
    fmt::print("{:<34} {:>10} {:>22} {:>22} {:>10} {:>10}\n", cases[i].name(), res.dispatches, flushes, indirect,
               cell(ideal[i].cycles_per_dispatch), cell(ideal[i].ordered_cycles_per_dispatch));
    r.cases.push_back(std::move(vs));
    auto params = case_params(cases[i], res.dispatches / reps[i], sites);
    params["traced_repetitions"] = std::to_string(reps[i]);
    params["warmup_repetitions"] = std::to_string(warmup_reps[i]);
    params["handler_code"] = fmt::format("{:x}-{:x}", res.code.lo, res.code.hi);
    params["branch_sites"] = std::to_string(res.branch_sites);
    params["trace_instructions"] = std::to_string(res.trace_instructions);
    if (o.predict_load_addresses > 1) params["load_addresses"] = std::to_string(o.predict_load_addresses);
    measured.push_back({cases[i].name(), nullptr, static_cast<double>(res.dispatches), "dispatch", params});
  }
  if (!dir) return;
  auto t = experiment_tables(dir->run_id(), "models_simulated", r, measured, machine);
  auto sidecar = sidecar_json(dir->run_id(), machine, &r, {"summary", "samples"});
  sidecar["simulation"] = {{"predictors", o.predict}, {"window_instructions", o.predict_window}, {"traced_dispatches_target", o.predict_dispatches}, {"warmup_dispatches_target", o.predict_warmup}, {"ideal_mcpu", mcpu}, {"ideal_mcpu_why", ideal_cpu.why}, {"code_shifts", pr::load_address_shifts(o.predict_load_addresses)},
                           {"tracer", "valgrind --tool=dlabtrace (lackey's trace of the handlers' code range; predictors/valgrind_tool)"}, {"binary", exec},
                           {"note", "every metric is simulated (docs/predictors.md): counts of the predictor named in the metric, "
                                    "on the trace of the case's handler code; the CPU that ran valgrind does not enter them"}};
  write_experiment(*dir, "models_simulated", t, sidecar);
  fmt::print(stderr, "wrote {}/models_simulated.summary.csv\n", dir->path().string());
}

// Drives the Google Benchmark binary (models_bench) over the grid's cases: one benchmark per case,
// repetitions interleaved at random by Google Benchmark, harness metrics as user counters. Its
// JSON goes into the run directory as models.gbench.json (Google Benchmark's own format).
void run_gbench(ModelsOptions& o) {
  auto groups = make_grid(o.grid, false).groups;
  std::string bench = program_beside_dlab("models_bench");
  std::string cases;
  for (const auto& g : groups)
    for (const auto& c : g.cases)
      cases += fmt::format("{} {} {} {} {} {} {}\n", c.model, c.placement, c.dispatch, c.copies, c.order.name(), c.seed,
                           c.program_length());
  setenv("DLAB_BENCH_CASES", cases.c_str(), 1);
  std::vector<std::string> args = {bench, "--benchmark_repetitions=" + std::to_string(o.protocol.samples),
                                   "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=true"};
  std::optional<RunDirectory> dir;
  if (!o.no_save) dir = o.out.resolve(this_machine(), {"models.gbench.json"});
  if (dir) args.push_back("--benchmark_out=" + (dir->path() / "models.gbench.json").string());
  fmt::print(stderr, "[models --gbench] {}\n", fmt::join(args, " "));
  ProcessResult rc = run_process(args);
  if (!rc.ok()) throw std::runtime_error(rc.describe("models_bench"));
  if (dir) fmt::print(stderr, "wrote {}/models.gbench.json\n", dir->path().string());
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("models",
                                 "sweep the reduction models (K-copy and stack-state placements) under the harness, or "
                                 "under cachegrind with --valgrind, and write models.summary.csv");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  auto o = std::make_shared<ModelsOptions>();
  o->protocol.samples = 11;
  cmd->add_flag("--list", o->list, "list models, kinds, placements, dispatch modes and their indirect-jump sites");
  cmd->add_flag("--quick", o->grid.quick, "small grid, 5 to 10 rounds per group (on while an interval is wider than 2%; under a minute)");
  cmd->add_flag("--valgrind", o->valgrind,
                "deterministic cachegrind counts per dispatch (instructions, loads, stores, simulated mispredicts)");
  cmd->add_option("--model", o->grid.which, "kcopy, stack or all")->capture_default_str();
  cmd->add_option("--kinds", o->grid.kinds, "K-copy kinds, comma-separated: u (update top), p (push/pop), o (own slot, no alias)");
  cmd->add_option("--copies", o->grid.copies, "K values, comma-separated (1..512)");
  cmd->add_option("--length", o->grid.lengths,
                  fmt::format("K-copy elements per program, comma-separated (default {}, the research's)", models::kDefaultKCopyLength));
  cmd->add_option("--orders", o->grid.orders, "cyclic, random, blockN, comma-separated");
  std::string mode_list;
  for (const auto& d : models::dispatch_docs()) mode_list += (mode_list.empty() ? "" : ", ") + d.name;
  cmd->add_option("--dispatch", o->grid.dispatch, mode_list + " (K-copy), comma-separated");
  cmd->add_option("--stack-copies", o->grid.stack_copies,
                  "copies per kind for the stack model (1..64; 17 = 171 handlers, the research's), comma-separated");
  cmd->add_option("--statements", o->grid.statements,
                  fmt::format("statements per stack program, comma-separated (default 16,64,256,2000; {} is the research's)",
                              models::kDefaultStackStatements));
  cmd->add_option("--stack-dispatch", o->grid.stack_dispatch,
                  "dispatch modes of the stack placement groups (each a group against vec), comma-separated (default tail)");
  cmd->add_option("--placements", o->grid.placements, "stack-state placements, comma-separated (default: all)");
  refuse_renamed_option(cmd, "--variants", "--placements");
  cmd->add_option("--mode-placements", o->grid.mode_placements,
                  "stack placements run in every dispatch mode, a group each against switch (default sp; full grid vec,sp,sp_wt_nr; "
                  "none for no mode groups)");
  refuse_renamed_option(cmd, "--mode-variants", "--mode-placements");
  cmd->add_option("--seed", o->grid.seed, "program seed")->capture_default_str();
  add_protocol_options(cmd, o->protocol, "measured rounds per group");
  cmd->add_option("--dispatches", o->target_dispatches, "dispatches per sample (1..10^10)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10'000'000'000}))
      ->capture_default_str();
  cmd->add_option("--valgrind-reps", o->valgrind_reps, "N for the N vs 2N cachegrind runs (1..1000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1000}))
      ->capture_default_str();
  cmd->add_flag("--gbench", o->gbench,
                "run the grid's cases as Google Benchmark benchmarks (models_bench; random interleaving, --samples "
                "repetitions) and keep its JSON as models.gbench.json");
  cmd->add_option("--predict", o->predict,
                  "simulate memory-order flushes and branch mispredicts per case with these predictors (comma-separated "
                  "names of docs/predictors.md's tables, or all) on valgrind traces of the handlers (dlabtrace), into models_simulated.*; its own "
                  "grid where not given (K-copy u,o,p at copies 1-64 in tail; the stack model at 171 handlers)");
  cmd->add_option("--predict-window", o->predict_window,
                  "instructions after which a store's address is known to younger loads (the memory simulation's one timing "
                  "assumption; 1..1048576)")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  add_ideal_mcpu_option(cmd, o->ideal_mcpu, "");
  cmd->add_option("--predict-load-addresses", o->predict_load_addresses,
                  "with --predict: the branch rows with the binary at N load addresses (the trace's own, then whole pages "
                  "apart, as ASLR moves it), each a sample: a small table's cell is one layout's conflicts (1..64)")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  cmd->add_option("--predict-warmup", o->predict_warmup,
                  "with --predict: dispatches traced before those counted, whole repetitions of the case's program, left out "
                  "of the counts as a timed run's warm-up rounds are (0: count from the first; 0..10^7)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{10'000'000}))
      ->capture_default_str();
  cmd->add_option("--predict-dispatches", o->predict_dispatches,
                  "dispatches each case counts at least, after its warm-up (whole repetitions of the case's program; 1..10^7)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10'000'000}))
      ->capture_default_str();
  cmd->add_flag("--no-save", o->no_save, "print only, write no files");
  o->out.add_to(cmd, "results");
  cmd->callback([o, cmd] {
    if (o->list) return print_list();
    // The sampling rule is the harness's: cachegrind counts a fixed number of runs (--valgrind-reps)
    // and Google Benchmark repeats --samples times, so the rule's options would do nothing there.
    for (const char* opt : {"--max-samples", "--stop-half-width"})
      if (cmd->count(opt) && (o->valgrind || o->gbench))
        throw CLI::ValidationError(opt, fmt::format("applies to the harness's rounds, not to {}", o->valgrind ? "--valgrind" : "--gbench"));
    if (o->grid.quick) apply_quick_protocol(cmd, o->protocol);
    if (!o->predict.empty() && (o->valgrind || o->gbench || o->grid.quick))
      throw CLI::ValidationError("--predict", fmt::format("is a sweep of its own: not with {}", o->valgrind ? "--valgrind" : o->gbench ? "--gbench" : "--quick"));
    for (const char* opt : {"--predict-window", "--predict-dispatches", "--predict-warmup", "--predict-load-addresses", "--ideal-mcpu"})
      if (cmd->count(opt) && o->predict.empty()) throw CLI::ValidationError(opt, "applies to --predict");
    if (!o->predict.empty()) run_predict_sweep(*o);
    else if (o->valgrind) run_valgrind_sweep(*o);
    else if (o->gbench) run_gbench(*o);
    else run_harness_sweep(*o);
  });
}

}  // namespace dlab::cli
