// The machine fingerprint written beside every result: what CPU, which microarchitecture, whether
// it is a VM, the TSC, and how the measuring binary was built.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/emulation.h"
#include "dispatchlab/harness/tsc.h"

namespace dlab {

struct BuildInfo {
  std::string compiler;     // "Clang 19.1.7"
  std::string build_type;   // "Release"
  std::string preset;       // "release", "asan"
  std::string cxx_flags;    // every flag that affects generated code
  std::string git_commit;   // full hash, "+dirty" appended when the tree had changes; "unknown (why)" otherwise
  static BuildInfo of_this_binary();
};

// How git_commit begins when there is no commit, by why: not a git checkout; git refused to read
// the checkout (its own reason follows: "detected dubious ownership in repository at ..."); no git
// to run. A run directory is named after which (commit_for_run_name).
inline constexpr const char* kNoGitCheckout = "unknown (no git checkout";
inline constexpr const char* kGitRefused = "unknown (git refused";
inline constexpr const char* kGitMissing = "unknown (cannot run git";

// The commit of the git checkout at `dir` ("+dirty" with uncommitted changes), or "unknown (...)"
// beginning with one of the prefixes above.
std::string git_commit_of(const std::string& dir);

// What a run directory's name says of git_commit: its first 12 hex digits ("-dirty" appended),
// or "nogit" (no checkout), "gitrefused" (git would not read it), "gitmissing" (no git to run),
// so a refused checkout is never mistaken for a folder without git.
std::string commit_for_run_name(const std::string& git_commit);

struct MachineFingerprint {
  std::string arch;
  std::string cpu_vendor;
  // -1 where /proc/cpuinfo does not say; written as null, never as a number.
  int cpu_family = -1, cpu_model = -1, cpu_stepping = -1;
  std::string cpu_name;
  std::string pmu;              // libpfm4 core PMU name, "" when libpfm4 knows none
  std::string pmu_description;
  CpuIdentity identity;         // microarchitecture, core types and catalog source (cpus.json)
  std::string event_encoding;   // "libpfm4" or "raw": how the catalog source's events are handed over
  int logical_cpus = 0;
  std::string kernel;
  bool is_vm = false;
  std::string hypervisor;       // CPUID hypervisor signature, when a VM
  // Whether an emulator or binary translator runs this process, and how that was known; an emulated
  // machine's numbers are never measurements (no cycle estimate, rows marked `emulated`).
  Emulation emulation;
  bool kernel_core_pmu = false; // /sys/bus/event_source/devices has a core PMU
  std::optional<int> perf_event_paranoid;  // absent when /proc/sys/kernel/perf_event_paranoid is unreadable
  std::string clocksource;
  TscCalibration tsc;
  BuildInfo build;

  // "<key>-<family>-<model>" ("icx-6-106", "emr-6-207"), the key from the CPU table: what
  // results/<cpu>/ is named after; "-emulated" is appended under an emulator, so emulated runs
  // never share a folder with the hardware's own.
  std::string cpu_slug() const;
  nlohmann::json to_json() const;
};

// Collects everything; `tsc` is the calibration to record (from the TscBackend in use).
MachineFingerprint collect_fingerprint(const TscCalibration& tsc);

// The kinds of core with their CPUs (Firestorm (P): 4-7 ...), as the fingerprint lists them.
nlohmann::json core_kinds_json(const CpuIdentity& id);

// The calibration as the fingerprint records it (both chains, the verdict, the method).
nlohmann::json tsc_calibration_json(const TscCalibration& tsc);

}  // namespace dlab
