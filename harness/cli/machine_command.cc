#include <fmt/format.h>

#include "commands.h"

namespace dlab::cli {

void add_machine_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("machine", "print the machine fingerprint (CPU, PMU, VM, TSC, build, commit)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON (what result sidecars record)");
  cmd->callback([json] {
    const auto& m = this_machine();
    if (*json) {
      fmt::print("{}\n", m.to_json().dump(2));
      return;
    }
    fmt::print("cpu           {} (vendor {}, family {}, model {}, stepping {})\n", m.cpu_name, m.cpu_vendor, m.cpu_family,
               m.cpu_model, m.cpu_stepping);
    fmt::print("arch          {}, {} logical CPUs\n", m.arch, m.logical_cpus);
    fmt::print("pmu           {}{}\n", m.pmu.empty() ? "(libpfm4 knows none)" : m.pmu,
               m.pmu_description.empty() ? "" : " - " + m.pmu_description);
    fmt::print("catalog       {}\n", m.catalog_source.empty() ? "(no source for this CPU)" : m.catalog_source);
    fmt::print("vm            {}{}\n", m.is_vm ? "yes" : "no", m.hypervisor.empty() ? "" : " (" + m.hypervisor + ")");
    fmt::print("kernel pmu    {}\n", m.kernel_core_pmu ? "exposed" : "none in /sys/bus/event_source/devices");
    fmt::print("kernel        {}\n", m.kernel);
    fmt::print("paranoid      {}\n", m.perf_event_paranoid ? std::to_string(*m.perf_event_paranoid) : "unreadable");
    fmt::print("clocksource   {}\n", m.clocksource);
    fmt::print("tsc           {} at {:.6f} GHz{}; ~{:.4f} core cycles/tick (estimate)\n", m.tsc.counter, m.tsc.tsc_hz / 1e9,
               m.tsc.invariant ? ", invariant" : ", NOT invariant", m.tsc.core_cycles_per_tick);
    fmt::print("compiler      {} [{}] {}\n", m.build.compiler, m.build.preset, m.build.cxx_flags);
    fmt::print("commit        {}\n", m.build.git_commit);
    fmt::print("results dir   results/{}/\n", m.cpu_slug());
  });
}

}  // namespace dlab::cli
