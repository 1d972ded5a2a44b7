// `dlab probes`: the ABI register budget and the handlers' state placement, for every target and
// calling convention, from the compiler's own output; and `dlab probes fit` for one signature.
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/commands.h"
#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/models/models.h"
#include "dispatchlab/probes/clang_runner.h"
#include "dispatchlab/probes/probe_report.h"

namespace dlab::cli {

namespace {

// Probe outputs are facts about a compiler, not measurements of a machine: the same compiler
// gives the same files, so they are rewritten in place (atomically, every write checked) and git
// shows any change.
void replace_file(const std::filesystem::path& p, const std::string& content) { replace_file_atomically(p, content); }

// Checked before probing, so a read-only or impossible --out fails at once with its reason.
void check_output_folder(const std::filesystem::path& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", out.string(), ec.message()));
  if (::access(out.c_str(), W_OK) != 0)
    throw std::runtime_error(fmt::format("cannot write into {}: {}", out.string(), std::strerror(errno)));
}

std::string compiler_name() { return this_machine().build.compiler; }

}  // namespace

void add_probes_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("probes",
                                 "ABI register probes (24 int / 24 float arguments, every target and convention) and the "
                                 "models' handler state placement, measured from clang's output");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  struct Options {
    std::string targets, conventions, placements, out = "results/probes", args, engines;
    int count = 24;
    bool verbose = false, no_save = false, skip_placement = false;
  };
  auto o = std::make_shared<Options>();
  auto target_help = "targets, comma-separated (default all: " + [] {
    std::string s;
    for (const auto& t : probes::all_targets()) s += (s.empty() ? "" : ", ") + t;
    return s;
  }() + ")";
  cmd->add_option("--targets", o->targets, target_help);
  cmd->add_option("--conventions", o->conventions, "default, preserve_none, preserve_most, ms_abi, sysv_abi, regcall (default all)");
  cmd->add_option("--count", o->count, fmt::format("integer and float arguments per probe (1..{})", probes::kMaxProbeArguments))
      ->check(CLI::Range(1, static_cast<int>(probes::kMaxProbeArguments)))
      ->capture_default_str();
  cmd->add_option("--placements", o->placements, "stack-state placements for the placement report (default all)");
  refuse_renamed_option(cmd, "--variants", "--placements");
  cmd->add_flag("--verbose", o->verbose, "also list the register of every argument");
  cmd->add_flag("--skip-placement", o->skip_placement, "register budget only");
  auto* out = cmd->add_option("--out", o->out, "output folder (its probes files are replaced: they are facts about the compiler)")
                   ->capture_default_str();
  cmd->add_flag("--no-save", o->no_save, "print only")->excludes(out);

  auto* fit = cmd->add_subcommand("fit", "which arguments of a handler signature stay in registers, per target and convention");
  fit->fallthrough();  // --targets and --conventions of `dlab probes` also work after `fit`
  auto* fit_args = fit->add_option("--args", o->args, "argument types, e.g. \"ptr,ptr,u64,u64,u32,u32\" (ptr u64 i64 u32 f64 f32)");
  std::string tail_engines;
  for (const auto& e : wasm::engine_configs())
    if (!e.handler_signature().empty()) tail_engines += (tail_engines.empty() ? "" : ",") + e.engine_name();
  fit->add_option("--engines", o->engines,
                  "instead of --args: the interpreter's tail-call engines' handler signatures (engines.def's placement and budget "
                  "columns), each in its own convention (tail: default, tail_pn: preserve_none) unless --conventions is given; "
                  "a comma-separated subset of " + tail_engines + ", or all")
      ->excludes(fit_args);

  fit->callback([o, fit, tail_engines] {
    if (!o->engines.empty()) {
      auto names = choose_from(o->engines == "all" ? tail_engines : o->engines, split_commas(tail_engines), "--engines");
      auto targets = choose_from(o->targets, probes::all_targets(), "--targets");
      std::string out = fmt::format("handler signatures of the interpreter's tail-call engines, {}\n", compiler_name());
      for (const auto& e : wasm::engine_configs()) {
        if (std::find(names.begin(), names.end(), e.engine_name()) == names.end()) continue;
        probes::Signature sig = probes::parse_signature(e.handler_signature());
        std::vector<std::string> conventions =
            !o->conventions.empty() ? choose_from(o->conventions, probes::all_conventions(), "--conventions")
                                    : std::vector<std::string>{wasm::dispatch_convention(e.dispatch)};
        std::vector<probes::BudgetRow> rows;
        for (const auto& t : targets)
          for (const auto& c : conventions) rows.push_back({"fit", probes::probe(t, c, sig)});
        out += fmt::format("\n### {} ({} placement, {} budget): ({})\n\n{}", e.engine_name(), wasm::placement_name(e.placement),
                           wasm::budget_name(e.budget), probes::to_string(sig), probes::fit_markdown(rows));
      }
      fmt::print("{}", out);
      return;
    }
    if (o->args.empty()) throw CLI::RequiredError("fit needs --args or --engines");
    (void)fit;
    probes::Signature sig;
    try {
      sig = probes::parse_signature(o->args);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--args", e.what());
    }
    auto targets = choose_from(o->targets, probes::all_targets(), "--targets");
    auto conventions = choose_from(o->conventions, probes::all_conventions(), "--conventions");
    std::vector<probes::BudgetRow> rows;
    for (const auto& t : targets)
      for (const auto& c : conventions) rows.push_back({"fit", {t, c, sig, "", "", {}, {}, false}});
    // One probe per (target, convention): every argument located by both methods.
    for (auto& r : rows) r.result = probes::probe(r.result.triple, r.result.convention, sig);
    fmt::print("signature ({}), {}\n\n{}", probes::to_string(sig), compiler_name(), probes::fit_markdown(rows));
  });

  cmd->callback([o, cmd] {
    if (cmd->got_subcommand("fit")) return;
    auto targets = choose_from(o->targets, probes::all_targets(), "--targets");
    auto conventions = choose_from(o->conventions, probes::all_conventions(), "--conventions");
    std::vector<std::string> all_placements;
    for (const auto& e : models::all_entries())
      if (e.model == "stack1") all_placements.push_back(e.placement);
    auto chosen_placements = choose_from(o->placements, all_placements, "--placements");
    if (!o->no_save) check_output_folder(o->out);
    auto t0 = std::chrono::steady_clock::now();
    fmt::print(stderr, "[probes] register budget: {} targets x {} conventions x 3 shapes\n", targets.size(), conventions.size());
    auto budget = probes::run_register_budget(targets, conventions, o->count);
    std::string budget_md = probes::register_budget_markdown(budget, o->verbose);
    fmt::print("## Register budget ({})\n\n{}\n", compiler_name(), budget_md);
    std::vector<probes::HandlerPlacement> placement;
    std::string placement_md;
    if (!o->skip_placement) {
      std::vector<std::string> place_conventions;
      for (const auto& c : {"default", "preserve_none", "sysv_abi"})
        if (std::find(conventions.begin(), conventions.end(), c) != conventions.end()) place_conventions.push_back(c);
      fmt::print(stderr, "[probes] state placement: {} placements x {} targets x {} conventions\n", chosen_placements.size(), targets.size(),
                 place_conventions.size());
      placement = probes::run_state_placement(DLAB_MODELS_DIR, chosen_placements, targets, place_conventions);
      placement_md = probes::state_placement_markdown(placement);
      fmt::print("## Handler state placement\n\n{}\n", placement_md);
    }
    fmt::print(stderr, "[probes] done in {:.1f} s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (o->no_save) return;
    std::filesystem::path out = o->out;
    std::string head = fmt::format("<!-- generated by `dlab probes` with {}; facts about the compiler, not this machine -->\n\n",
                                   compiler_name());
    replace_file(out / "register_budget.md", head + "# Register budget\n\n" + budget_md);
    replace_file(out / "register_budget.csv", probes::register_budget_table(budget, compiler_name()).to_csv());
    if (!o->skip_placement) {
      replace_file(out / "state_placement.md", head + "# Handler state placement\n\n" + placement_md);
      replace_file(out / "state_placement.csv", probes::state_placement_table(placement, compiler_name()).to_csv());
    }
    fmt::print(stderr, "wrote {}/register_budget.{{md,csv}}{}\n", out.string(), o->skip_placement ? "" : " and state_placement.{md,csv}");
  });
}

}  // namespace dlab::cli
