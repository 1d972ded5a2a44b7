// Which CPU this is, as data: the facts a machine reports (x86 CPUID through /proc/cpuinfo, arm64
// MIDR fields, a macOS brand string, what libpfm4 detected) go through the CPU table
// (harness/catalog/cpus.json) to a microarchitecture, its core types, the metric-catalog source
// that counts it and the latencies of the calibration chains. Facts can be parsed from recorded
// /proc/cpuinfo text, so identification is tested for CPUs the test machine is not.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlab {

class MetricCatalog;

struct CpuFacts {
  std::string arch;    // "x86_64", "aarch64"
  std::string os;      // "linux", "darwin"
  std::string vendor;  // x86 CPUID vendor ("GenuineIntel", "AuthenticAMD"); "" on arm64
  int family = -1, model = -1, stepping = -1;  // x86 CPUID, -1 when not reported
  // arm64: the distinct (implementer, part) pairs of all cores, in the order first seen (a
  // big.LITTLE system reports two or three).
  std::vector<std::pair<unsigned, unsigned>> arm_cores;
  std::string brand;            // "model name" / machdep.cpu.brand_string
  std::set<std::string> flags;  // x86 "flags" / arm64 "Features"
  std::string libpfm_pmu;       // core PMU libpfm4 detected, "" when none
};

// Parses /proc/cpuinfo text. Throws std::runtime_error("<origin>:<line>: ...") on a malformed
// numeric field.
CpuFacts parse_cpuinfo(std::string_view text, const std::string& arch, const std::string& origin);
// This machine: /proc/cpuinfo, uname and libpfm4's detection.
CpuFacts this_cpu_facts();

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
  std::string key, name, note, source, vendor, brand;
  std::vector<std::string> cores;
  int family = -1;
  std::vector<std::pair<int, int>> models, steppings;  // inclusive ranges; empty steppings: any
  unsigned implementer = 0;
  std::vector<unsigned> parts;
  std::vector<std::string> lacks, requires_features;
  std::map<std::string, double> latency;
};

// The identity of this machine (computed once).
const CpuIdentity& this_cpu_identity();

}  // namespace dlab
