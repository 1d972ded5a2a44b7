#include <fmt/format.h>

#include "cli/commands.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/result_rows.h"

namespace dlab::cli {

namespace {

nlohmann::json plan_json(const CounterPlan& plan) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : plan.candidates) {
    const MetricCandidate* sel = plan.selection(c.metric->name);
    rows.push_back({{"metric", c.metric->name},
                    {"unit", c.metric->unit},
                    {"backend", c.backend()},
                    {"source", c.source ? c.source->key : ""},
                    {"native_event", c.native_event()},
                    {"scope", c.scope},
                    {"encoding", c.encoding_name()},
                    {"selected", sel && sel->source == c.source && sel->availability.available},
                    {"available", c.availability.available},
                    {"estimated", c.metric->estimated},
                    {"reason", c.availability.reason}});
  }
  // Per metric, what a measurement uses: the selected candidate, or the joined reason none is.
  nlohmann::json selected = nlohmann::json::array();
  for (const auto& c : plan.selected)
    selected.push_back({{"metric", c.metric->name},
                        {"available", c.availability.available},
                        {"source", c.source ? c.source->key : ""},
                        {"native_event", c.availability.available ? c.native_event() : ""},
                        {"scope", c.scope},
                        {"encoding", c.availability.available ? c.encoding_name() : ""},
                        {"reason", c.availability.reason}});
  return {{"pmu", plan.host.libpfm_pmu},
          {"metrics", selected},
          {"catalog_source", plan.pmu_source},
          {"event_encoding", to_string(plan.encoding)},
          {"no_pmu", plan.host.no_pmu},
          {"counters", rows}};
}

void print_plan(const CounterPlan& plan, const MachineFingerprint& m) {
  fmt::print("CPU {} | {} | catalog source {} (events as {}) | VM {}\n", m.cpu_name, m.identity.name,
             plan.pmu_source.empty() ? "(none)" : plan.pmu_source, to_string(plan.encoding), m.is_vm ? "yes" : "no");
  if (!plan.host.no_pmu.empty()) fmt::print("{}: every hardware metric is unavailable here\n", plan.host.no_pmu);
  fmt::print("\n");
  fmt::print("{:<22} {:<12} {:<11} {}\n", "METRIC", "STATUS", "BACKEND", "NATIVE EVENT (* = used when measuring)");
  std::string last;
  for (const auto& c : plan.candidates) {
    const MetricCandidate* sel = plan.selection(c.metric->name);
    bool used = sel && sel->source == c.source && c.availability.available;
    std::string status = !c.availability.available ? "unavailable" : (c.metric->estimated ? "estimated" : "available");
    std::string name = c.metric->name == last ? "" : c.metric->name;
    last = c.metric->name;
    fmt::print("{:<22} {:<12} {:<11} {}{}\n", name, status, c.backend().empty() ? "-" : c.backend(), used ? "* " : "",
               c.native_event().empty() ? "-" : c.native_event());
    if (!c.availability.reason.empty())
      fmt::print("{:<22} {:<12} {:<11} {}{}\n", "", "", "", c.availability.available ? "note: " : "reason: ",
                 c.availability.reason);
  }
}

}  // namespace

void add_counters_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "counters", "list every catalog metric with its backend, native event, and whether it counts here (and why not)");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  auto json = std::make_shared<bool>(false);
  auto catalog_path = std::make_shared<std::string>();
  auto out = std::make_shared<RunDirectoryOptions>();
  cmd->add_flag("--json", *json, "print JSON");
  cmd->add_option("--catalog", *catalog_path, "use this metric catalog instead of the built-in one")->check(CLI::ExistingFile);
  out->add_to(cmd, "");
  cmd->callback([json, catalog_path, out] {
    MetricCatalog catalog = catalog_path->empty() ? MetricCatalog::builtin() : MetricCatalog::from_file(*catalog_path);
    BackendSet backends = BackendSet::for_this_machine();
    const auto& m = this_machine();
    auto dir = out->resolve(m, {"counters.csv", "counters.json"});
    CounterPlan plan = plan_counters(catalog, backends, this_host_cpu());
    if (*json) fmt::print("{}\n", plan_json(plan).dump(2));
    else print_plan(plan, m);
    if (dir) {
      write_files_atomically(dir->path(), {{"counters.csv", counters_table(plan).to_csv()},
                                           {"counters.json", sidecar_json(dir->run_id(), m, nullptr, {"counters"}).dump(2) + "\n"}});
      fmt::print(stderr, "wrote {}/counters.csv\n", dir->path().string());
    }
  });
}

}  // namespace dlab::cli
