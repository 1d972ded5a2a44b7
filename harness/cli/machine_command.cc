#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"

namespace dlab::cli {

void add_machine_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("machine", "print the machine fingerprint (CPU, PMU, VM, TSC, build, commit)");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
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
    const CpuIdentity& id = m.identity;
    fmt::print("uarch         {}{} [by {}]\n", id.name, id.cores.empty() ? "" : fmt::format(" ({})", fmt::join(id.cores, " + ")),
               id.matched_by);
    if (!id.note.empty()) fmt::print("              note: {}\n", id.note);
    if (!id.systems.empty()) fmt::print("              in: {}\n", fmt::join(id.systems, ", "));
    for (const auto& k : id.core_kinds)
      fmt::print("  cores       {:<16} {}cpus {}{}{}\n", k.core, k.midr.empty() ? "" : "MIDR " + k.midr + ", ",
                 k.cpus.empty() ? "?" : fmt::format("{}", fmt::join(k.cpus, ",")), k.kernel_pmu.empty() ? "" : ", perf PMU " + k.kernel_pmu,
                 k.kind == "P" ? " (measurements run here)" : "");
    fmt::print("catalog       {}, events as {}\n", id.catalog_source.empty() ? "(no source for this CPU)" : id.catalog_source,
               m.event_encoding == "raw" ? "raw codes (libpfm4 did not detect this CPU's PMU)" : "libpfm4 names");
    fmt::print("libpfm4       {}{}\n", m.pmu.empty() ? "detects no PMU for this CPU" : m.pmu,
               m.pmu_description.empty() ? "" : " - " + m.pmu_description);
    fmt::print("vm            {}{}\n", m.is_vm ? "yes" : "no", m.hypervisor.empty() ? "" : " (" + m.hypervisor + ")");
    if (m.emulation.emulated) {
      fmt::print("emulated      YES: {}; no number this process takes is a measurement of a core\n", m.emulation.emulator);
      for (const auto& ev : m.emulation.evidence)
        fmt::print("  {:<11} {} {}\n", ev.method, ev.decisive ? "(decisive)  " : "(supporting)", ev.detail);
    } else {
      fmt::print("emulated      no{}\n", m.emulation.evidence.empty() ? "" : fmt::format(" ({} supporting sign(s) alone, see --json)", m.emulation.evidence.size()));
    }
    fmt::print("kernel pmu    {}\n", m.kernel_core_pmu ? "exposed" : "none in /sys/bus/event_source/devices");
    fmt::print("kernel        {}\n", m.kernel);
    fmt::print("paranoid      {}\n", m.perf_event_paranoid ? std::to_string(*m.perf_event_paranoid) : "unreadable");
    fmt::print("clocksource   {}\n", m.clocksource);
    fmt::print("tsc           {} at {:.6f} GHz{}\n", m.tsc.counter, m.tsc.tsc_hz / 1e9, m.tsc.invariant ? ", invariant" : ", NOT invariant");
    for (const auto& c : m.tsc.chains)
      fmt::print("  chain       {:<8} {:<16} latency {:>7}  {:.4f} ticks/op  {}\n", c.chain, c.instruction,
                 c.latency_cycles ? fmt::format("{:g} cyc", *c.latency_cycles) : "unknown", c.ticks_per_op,
                 c.cycles_per_tick ? fmt::format("{:.4f} core cycles/tick", *c.cycles_per_tick) : "");
    if (m.tsc.core_cycles_per_tick)
      fmt::print("  estimate    {:.4f} core cycles/tick (a {:.2f} GHz core), the chains agree within {:.0f}%\n",
                 *m.tsc.core_cycles_per_tick, *m.tsc.core_cycles_per_tick * m.tsc.tsc_hz / 1e9, m.tsc.tolerance * 100);
    else
      fmt::print("  estimate    none: {}\n", m.tsc.refused);
    fmt::print("compiler      {} [{}] {}\n", m.build.compiler, m.build.preset, m.build.cxx_flags);
    fmt::print("commit        {}\n", m.build.git_commit);
    fmt::print("results dir   results/{}/\n", m.cpu_slug());
  });
}

}  // namespace dlab::cli
