// Small facts about the running machine that several parts of the harness need (internal).
#pragma once

#include <optional>
#include <string>

namespace dlab::platform {

std::optional<std::string> read_file_trimmed(const std::string& path);
// The value of `key` in the first processor block of /proc/cpuinfo ("model name", "flags", ...).
std::optional<std::string> cpuinfo_field(const std::string& key);
bool cpuinfo_has_flag(const std::string& flag);

// CPUID leaf 1 ECX bit 31 on x86 (and the /proc/cpuinfo "hypervisor" flag elsewhere).
bool running_under_hypervisor();
// CPUID 0x40000000 signature ("KVMKVMKVM", "VMwareVMware", "Microsoft Hv") or "".
std::string hypervisor_signature();

// Whether the kernel exposes a core PMU in /sys/bus/event_source/devices (cpu, cpu_core,
// cpu_atom, armv8_*/arm_*): without one hardware events cannot count whatever libpfm4 detects.
bool kernel_has_core_pmu();
// perf_event type number of a sysfs PMU (cpu_core on hybrid Intel), if present.
// "" when the kernel exposes a core PMU; else why hardware events cannot count here, in words a
// user can act on ("no hardware PMU: VM (KVMKVMKVM) exposes no counters to this guest").
std::string no_core_pmu_reason();
std::optional<unsigned> sysfs_pmu_type(const std::string& pmu);
std::optional<int> perf_event_paranoid();

}  // namespace dlab::platform
