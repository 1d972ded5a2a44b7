// Which CPU this is, as data: the facts a machine reports (x86 CPUID through /proc/cpuinfo, arm64
// MIDR fields, a macOS brand string, what libpfm4 detected) go through the CPU table
// (harness/catalog/cpus.json) to a microarchitecture, its core types, the metric-catalog source
// that counts it and the latencies of the calibration chains. Facts can be parsed from recorded
// /proc/cpuinfo text, so identification is tested for CPUs the test machine is not.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlab {

class MetricCatalog;
class SysfsRoot;

// One arm64 CPU's MIDR_EL1 fields, with the kernel's CPU number.
struct ArmCpu {
  int cpu = -1;
  unsigned implementer = 0, variant = 0, part = 0, revision = 0;
  uint64_t midr() const { return (uint64_t{implementer} << 24) | (uint64_t{variant} << 20) | (0xfull << 16) | (uint64_t{part} << 4) | revision; }
};

struct CpuFacts {
  std::string arch;    // "x86_64", "aarch64"
  std::string os;      // "linux", "darwin"
  std::string vendor;  // x86 CPUID vendor ("GenuineIntel", "AuthenticAMD"); "" on arm64
  int family = -1, model = -1, stepping = -1;  // x86 CPUID, -1 when not reported
  // arm64: the distinct (implementer, part) pairs of all cores, in the order first seen (a
  // big.LITTLE system reports two or three).
  std::vector<std::pair<unsigned, unsigned>> arm_cores;
  // arm64: every CPU's MIDR with its number (from /proc/cpuinfo's processor blocks, or from sysfs,
  // which lists offline CPUs too and wins when it is there).
  std::vector<ArmCpu> arm_cpus;
  std::string brand;            // "model name" / machdep.cpu.brand_string
  std::set<std::string> flags;  // x86 "flags" / arm64 "Features"
  std::string libpfm_pmu;       // core PMU libpfm4 detected, "" when none
};

// Parses /proc/cpuinfo text. Throws std::runtime_error("<origin>:<line>: ...") on a malformed
// numeric field.
CpuFacts parse_cpuinfo(std::string_view text, const std::string& arch, const std::string& origin);
// arm64: /sys/devices/system/cpu/cpu<N>/regs/identification/midr_el1 of every CPU, through `root`
// (empty when the kernel exposes none). Throws std::runtime_error on a malformed value.
std::vector<ArmCpu> read_arm_midrs(const SysfsRoot& root);
// Replaces the facts' arm64 CPUs with sysfs's (when it lists any) and recomputes arm_cores.
void adopt_arm_midrs(CpuFacts& facts, std::vector<ArmCpu> cpus);
// This machine: /proc/cpuinfo (and on arm64 the sysfs MIDRs), uname and libpfm4's detection.
CpuFacts this_cpu_facts();

// One kind of core of a heterogeneous (or any arm64) chip: its name, P/E, the kernel's perf PMU
// that counts it (apple_firestorm_pmu) and the CPUs that are of it.
struct CoreKind {
  std::string core;        // "Firestorm (P)"
  std::string kind;        // "P", "E", or "" where the chip has one kind
  std::string kernel_pmu;  // /sys/bus/event_source/devices/<name>, "" when the table names none
  std::string midr;        // "0x611f0231" (the first CPU's)
  std::vector<int> cpus;
};

struct CpuIdentity {
  std::string key;                 // results folder key ("emr", "zen4"); the arch when unknown
  std::string name;                // "Emerald Rapids", or "unknown ..." with what was seen
  std::vector<std::string> cores;  // core types; two or more on hybrid parts
  std::string catalog_source;      // metrics.json source key that counts this CPU ("" when none)
  std::string matched_by;          // "CPUID GenuineIntel 6:207", "MIDR 0x41:0xd4f", "brand 'Apple M2'", ...
  std::string note;                // caveats: approximated events, a contradicted CPUID model
  bool known = false;              // matched a table entry (or a feature class)
  // Calibration (latency_chains.h names): the chain that calibrates, the one that cross-checks it,
  // and every chain latency known for this core (architecture defaults, then the entry's own).
  std::string primary_chain, cross_check_chain;
  std::map<std::string, double> chain_latency;
  double calibration_tolerance = 0.10;
  // arm64 (from MIDR): each kind of core with its CPUs, performance cores first; empty on x86.
  std::vector<CoreKind> core_kinds;
  std::vector<std::string> systems;  // machines built on this CPU ("AWS Graviton4", "Google Axion"), for the reader
  // The simulated predictor rows (docs/predictors.md) this CPU is closest to, by role ("indirect"),
  // and why ("why"): by a published size only; empty where nothing is published.
  std::map<std::string, std::string> predictors;
  // llvm-mca-19's name for this CPU (-mcpu) and whose scheduling model LLVM 19 gives it ("LLVM 19's
  // own", or the core it borrows: Zen 5 gets Zen 4's, every Apple core Cyclone's); empty when the
  // table names none. The ideal bound's `native` CPU (predictors/llvm_mca.h).
  std::string llvm_mcpu, llvm_model;

  // The CPUs a measurement should run on: the performance kind's where the chip has kinds; empty
  // means any CPU.
  std::vector<int> measuring_cpus() const;
  // The core type of CPU `cpu` ("Firestorm (P)"), or the one core type of a homogeneous CPU; "" when unknown.
  std::string core_of(int cpu) const;
  // The kernel PMU counting the measuring kind ("apple_firestorm_pmu"), "" when none is named.
  std::string measuring_kernel_pmu() const;
};

class CpuTable {
 public:
  // The table compiled into this binary (harness/catalog/cpus.json at build time).
  static const CpuTable& builtin();
  // Throws std::runtime_error naming the origin and the offending entry.
  static CpuTable from_json_text(const std::string& text, const std::string& origin);

  // By CPUID / MIDR / brand; an entry whose `lacks` features the CPU has is contradicted (a
  // hypervisor presenting another model), and the feature classes decide instead. Without a match,
  // the source listing libpfm4's detected PMU, else the catalog's fallback.
  CpuIdentity identify(const CpuFacts& facts, const MetricCatalog& catalog) const;

  struct Entry;
  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<Entry>& feature_classes() const { return classes_; }

 private:
  struct ArchCalibration {
    std::string primary, cross_check;
    std::map<std::string, double> latency;
  };
  std::vector<Entry> entries_;
  std::vector<Entry> classes_;
  std::map<std::string, ArchCalibration> calibration_;
  double tolerance_ = 0.10;
};

struct CpuTable::Entry {
  struct Part {
    std::string core, kind, kernel_pmu, chip;
  };
  std::string key, name, note, source, vendor, brand;
  std::map<std::string, std::string> source_by_os;  // {"linux": ..., "darwin": ...}: wins over `source` for that OS
  std::map<unsigned, Part> part_info;              // arm64 part -> its core (from an object "parts")
  std::vector<std::string> systems;
  std::vector<std::string> cores;
  int family = -1;
  std::vector<std::pair<int, int>> models, steppings;  // inclusive ranges; empty steppings: any
  unsigned implementer = 0;
  std::vector<unsigned> parts;
  std::vector<std::string> lacks, requires_features;
  std::map<std::string, double> latency;
  std::map<std::string, std::string> predictors;  // role -> predictor row, and "why"
  std::string llvm_mcpu, llvm_model;               // "llvm_mca": {"mcpu", "model"}
};

// The identity of this machine (computed once).
const CpuIdentity& this_cpu_identity();

}  // namespace dlab
