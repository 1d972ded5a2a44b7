// Whether this process runs under an emulator or binary translator (qemu-user, qemu-system TCG,
// FEX-Emu, box64, Rosetta 2), and how that was known. Under one, time is the translator's, not a
// core's: no cycle estimate is made, hardware counters count the translator, and every result row
// says it was emulated (the report, the RFC table and fleet merges leave such rows out).
//
// Detection reads an EmulationView: the kernel's files through a root folder (like SysfsRoot), what
// this process's own CPUID / MRS MIDR_EL1 instructions answer, its auxiliary vector and a few
// environment variables. A view is made from this process, or read from a recorded fixture
// (harness/tests/fixtures/emulation/), so every method is tested on a machine without the emulator.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dispatchlab/harness/sysfs_root.h"

namespace dlab {

// What this process's own instructions answer: CPUID on x86-64, MRS MIDR_EL1 on arm64 (which Linux
// emulates for user space). A translator answers these itself; the kernel's /proc/cpuinfo is the
// hardware's (or the translator's own fake, which then names it).
struct ExecutedCpuId {
  std::string vendor;                 // CPUID leaf 0
  int family = -1, model = -1;        // CPUID leaf 1, extended family/model folded in
  std::string brand;                  // CPUID 0x80000002-4, spaces trimmed
  bool hypervisor_bit = false;        // CPUID leaf 1 ECX[31]
  std::string hypervisor_signature;   // CPUID 0x40000000 EBX:ECX:EDX when the bit is set (or the leaf answers)
  std::optional<uint64_t> midr;       // arm64 MIDR_EL1
};

struct EmulationView {
  std::string binary_arch;    // the architecture this binary was compiled for ("x86_64", "aarch64")
  std::string os = "linux";
  SysfsRoot root{"/"};        // /proc/cpuinfo, /proc/self/{comm,maps}, /proc/sys/kernel/arch, /sys/.../midr_el1, binfmt_misc
  ExecutedCpuId executed;
  // The auxiliary vector as LD_SHOW_AUXV=1 names it ("AT_SYSINFO_EHDR" -> "0x7ff..."); empty when unknown.
  std::map<std::string, std::string> auxv;
  // Environment variables a translator sets or reads (FEX_*, BOX64_*, QEMU_*), by name.
  std::map<std::string, std::string> environment;

  static EmulationView of_this_process();
  // A recorded view: `dir` is the root (proc/..., sys/...), plus dir/executed.json (ExecutedCpuId's
  // fields; "midr" as a 0x string), dir/auxv.txt (LD_SHOW_AUXV=1 output) and dir/environment.txt
  // (NAME=value lines), each optional.
  static EmulationView recorded(const std::string& dir, const std::string& binary_arch);
};

struct EmulationEvidence {
  std::string method;   // "hypervisor-leaf", "cpuid-vs-cpuinfo", "kernel-arch", "cpuinfo-arch", "midr", "comm", "maps", "auxv", "cpuid-brand", "environment", "binfmt"
  std::string detail;   // what was seen, in words
  bool decisive = false;  // enough on its own; otherwise two independent supporting signs are needed
};

struct Emulation {
  bool emulated = false;
  std::string emulator;  // "qemu-user", "qemu-system (TCG)", "FEX-Emu", "box64", "Rosetta 2", "an emulator or binary translator"
  std::vector<EmulationEvidence> evidence;  // every sign seen, decisive or not (also when not emulated)

  // "emulated: qemu-user (found by hypervisor-leaf, comm; ...): ..."; "" when not emulated. The
  // reason every cycle estimate and hardware metric is unavailable with (the details are in `evidence`).
  std::string reason() const;
  // The short form result rows carry ("qemu-user: hypervisor-leaf, cpuid-vs-cpuinfo, comm"); "" natively.
  std::string row_label() const;
  nlohmann::json to_json() const;
};

Emulation detect_emulation(const EmulationView& view);
// This process (detected once).
const Emulation& this_process_emulation();

// LD_SHOW_AUXV=1 text ("AT_PAGESZ:            4096") -> {"AT_PAGESZ": "4096"}.
std::map<std::string, std::string> parse_auxv_text(const std::string& text);

}  // namespace dlab
