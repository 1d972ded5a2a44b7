#include "dispatchlab/harness/cpu_identity.h"

#include <sys/utsname.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "dispatchlab/harness/perf_event_backend.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/harness/sysfs_root.h"

namespace dlab {

extern const char* const kBuiltinCpuTableJson;  // generated from harness/catalog/cpus.json

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Decimal for x86 fields ("model : 106"), hexadecimal with 0x for arm64 MIDR fields.
long parse_number(std::string_view v, int base, const std::string& where) {
  std::string_view digits = v;
  if (base == 16) {
    if (digits.size() < 3 || digits[0] != '0' || (digits[1] != 'x' && digits[1] != 'X'))
      throw std::runtime_error(fmt::format("{}: {} is not a 0x-prefixed hexadecimal number", where, quote_input(v)));
    digits.remove_prefix(2);
  }
  long out = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, base);
  if (ec != std::errc() || end != digits.data() + digits.size() || out < 0)
    throw std::runtime_error(fmt::format("{}: {} is not a {} number", where, quote_input(v), base == 16 ? "hexadecimal" : "decimal"));
  return out;
}

std::set<std::string> words(std::string_view s) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.emplace(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

CpuFacts parse_cpuinfo(std::string_view text, const std::string& arch, const std::string& origin) {
  CpuFacts f;
  f.arch = arch;
  f.os = "linux";
  long implementer = -1;
  ArmCpu cpu;  // the processor block being read (arm64)
  bool cpu_has_part = false;
  auto flush_cpu = [&] {
    if (cpu_has_part) f.arm_cpus.push_back(cpu);
    cpu = ArmCpu{};
    cpu_has_part = false;
  };
  size_t line_no = 0;
  bool first_block = true;  // x86 fields are read from the first processor; arm64 MIDRs from all
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    std::string where = fmt::format("{}:{}", origin, line_no);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      if (trim(line).empty() && f.family >= 0) first_block = false;
      continue;
    }
    std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "processor") {
      flush_cpu();
      // arm64 numbers every block; x86 too. Only a number is a CPU number.
      long n = -1;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec == std::errc() && end == value.data() + value.size()) cpu.cpu = static_cast<int>(n);
    } else if (key == "CPU variant") {
      cpu.variant = static_cast<unsigned>(parse_number(value, 16, where));
    } else if (key == "CPU revision") {
      cpu.revision = static_cast<unsigned>(parse_number(value, 10, where));
    }
    if (key == "CPU implementer") {
      implementer = parse_number(value, 16, where);
    } else if (key == "CPU part") {
      if (implementer < 0) throw std::runtime_error(where + ": 'CPU part' before any 'CPU implementer'");
      std::pair<unsigned, unsigned> core{static_cast<unsigned>(implementer), static_cast<unsigned>(parse_number(value, 16, where))};
      if (std::find(f.arm_cores.begin(), f.arm_cores.end(), core) == f.arm_cores.end()) f.arm_cores.push_back(core);
      cpu.implementer = core.first;
      cpu.part = core.second;
      cpu_has_part = true;
    } else if (!first_block) {
      continue;
    } else if (key == "vendor_id") {
      f.vendor = value;
    } else if (key == "cpu family") {
      f.family = static_cast<int>(parse_number(value, 10, where));
    } else if (key == "model") {
      f.model = static_cast<int>(parse_number(value, 10, where));
    } else if (key == "stepping") {
      f.stepping = static_cast<int>(parse_number(value, 10, where));
    } else if (key == "model name") {
      f.brand = value;
    } else if ((key == "flags" || key == "Features") && f.flags.empty()) {
      f.flags = words(value);
    }
  }
  flush_cpu();
  return f;
}

std::vector<ArmCpu> read_arm_midrs(const SysfsRoot& root) {
  std::vector<ArmCpu> out;
  const std::string base = "/sys/devices/system/cpu";
  if (!root.exists(base)) return out;
  for (const auto& name : root.list(base)) {
    if (name.size() < 4 || !name.starts_with("cpu") || !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    std::string path = base + "/" + name + "/regs/identification/midr_el1";
    if (!root.exists(path)) continue;
    uint64_t midr = 0;
    try {
      midr = parse_unsigned(root.read(path), root.path(path));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
    ArmCpu c;
    c.cpu = std::stoi(name.substr(3));
    c.implementer = (midr >> 24) & 0xff;
    c.variant = (midr >> 20) & 0xf;
    c.part = (midr >> 4) & 0xfff;
    c.revision = midr & 0xf;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const ArmCpu& a, const ArmCpu& b) { return a.cpu < b.cpu; });
  return out;
}

void adopt_arm_midrs(CpuFacts& f, std::vector<ArmCpu> cpus) {
  if (cpus.empty()) return;
  f.arm_cpus = std::move(cpus);
  f.arm_cores.clear();
  for (const auto& c : f.arm_cpus) {
    std::pair<unsigned, unsigned> core{c.implementer, c.part};
    if (std::find(f.arm_cores.begin(), f.arm_cores.end(), core) == f.arm_cores.end()) f.arm_cores.push_back(core);
  }
}

CpuFacts this_cpu_facts() {
  utsname u;
  uname(&u);
  std::string text = read_text_file("/proc/cpuinfo");
  CpuFacts f = parse_cpuinfo(text, u.machine, "/proc/cpuinfo");
  if (f.arch == "aarch64") {
    try {
      adopt_arm_midrs(f, read_arm_midrs(SysfsRoot("/")));
    } catch (const std::exception&) {
      // an unreadable or odd sysfs value: /proc/cpuinfo's MIDRs stand
    }
  }
  f.libpfm_pmu = detect_core_pmu().name;
  return f;
}

namespace {

std::vector<std::pair<int, int>> parse_ranges(const nlohmann::json& j, const std::string& where) {
  std::vector<std::pair<int, int>> out;
  for (const auto& v : j) {
    if (v.is_number_integer()) {
      out.emplace_back(v.get<int>(), v.get<int>());
      continue;
    }
    int lo = 0, hi = 0;
    if (!v.is_string() || std::sscanf(v.get<std::string>().c_str(), "%d-%d", &lo, &hi) != 2 || lo > hi)
      throw std::runtime_error(fmt::format("{}: '{}' is neither a number nor a 'lo-hi' range", where, v.dump()));
    out.emplace_back(lo, hi);
  }
  return out;
}

bool in_ranges(int v, const std::vector<std::pair<int, int>>& ranges) {
  return std::any_of(ranges.begin(), ranges.end(), [v](auto r) { return v >= r.first && v <= r.second; });
}

CpuTable::Entry parse_entry(const nlohmann::json& j, const std::string& where, const MetricCatalog& catalog) {
  CpuTable::Entry e;
  e.key = j.at("key");
  e.name = j.at("name");
  std::string here = where + " " + quote_input(e.key);
  auto check_source = [&](const std::string& s) {
    if (!catalog.source(s)) throw std::runtime_error(fmt::format("{}: source {} is not in metrics.json", here, quote_input(s)));
  };
  if (j.at("source").is_object()) {
    for (const auto& [os, s] : j.at("source").items()) {
      check_source(s.get<std::string>());
      e.source_by_os[os] = s.get<std::string>();
    }
    if (e.source_by_os.empty()) throw std::runtime_error(here + ": 'source' names no OS");
    e.source = e.source_by_os.count("linux") ? e.source_by_os.at("linux") : e.source_by_os.begin()->second;
  } else {
    e.source = j.at("source");
    check_source(e.source);
  }
  e.systems = j.value("systems", std::vector<std::string>{});
  e.note = j.value("note", "");
  e.vendor = j.value("vendor", "");
  e.brand = j.value("brand", "");
  e.cores = j.value("cores", std::vector<std::string>{});
  e.family = j.value("family", -1);
  if (j.contains("models")) e.models = parse_ranges(j.at("models"), here);
  if (j.contains("steppings")) e.steppings = parse_ranges(j.at("steppings"), here);
  if (j.contains("implementer")) e.implementer = static_cast<unsigned>(parse_number(j.at("implementer").get<std::string>(), 16, here));
  if (j.contains("parts") && j.at("parts").is_object()) {
    for (const auto& [p, info] : j.at("parts").items()) {
      unsigned part = static_cast<unsigned>(parse_number(p, 16, here));
      e.parts.push_back(part);
      CpuTable::Entry::Part pi{info.value("core", ""), info.value("kind", ""), info.value("kernel_pmu", ""), info.value("chip", "")};
      if (pi.core.empty()) throw std::runtime_error(fmt::format("{}: part {} names no core", here, p));
      if (!pi.kind.empty() && pi.kind != "P" && pi.kind != "E")
        throw std::runtime_error(fmt::format("{}: part {}: kind {} is neither P nor E", here, p, quote_input(pi.kind)));
      e.part_info[part] = pi;
    }
  } else {
    for (const auto& p : j.value("parts", std::vector<std::string>{})) e.parts.push_back(static_cast<unsigned>(parse_number(p, 16, here)));
  }
  e.lacks = j.value("lacks", std::vector<std::string>{});
  e.requires_features = j.value("requires", std::vector<std::string>{});
  if (j.contains("latency"))
    for (const auto& [chain, cycles] : j.at("latency").items()) e.latency[chain] = cycles.get<double>();
  if (j.contains("predictors")) {
    if (!j.at("predictors").is_object()) throw std::runtime_error(here + ": 'predictors' must be an object {role: predictor row, \"why\": ...}");
    for (const auto& [role, row] : j.at("predictors").items()) {
      if (!row.is_string() || row.get<std::string>().empty())
        throw std::runtime_error(fmt::format("{}: predictors.{} must be a predictor row's name", here, quote_input(role)));
      e.predictors[role] = row.get<std::string>();
    }
    if (!e.predictors.count("why") || e.predictors.size() < 2)
      throw std::runtime_error(here + ": 'predictors' names a row and says why (\"why\": where its size is published)");
  }
  if (j.contains("llvm_mca")) {
    const auto& m = j.at("llvm_mca");
    if (!m.is_object() || !m.contains("mcpu") || !m.contains("model") || !m.at("mcpu").is_string() || !m.at("model").is_string() ||
        m.at("mcpu").get<std::string>().empty() || m.at("model").get<std::string>().empty())
      throw std::runtime_error(here + ": 'llvm_mca' must be {\"mcpu\": llvm-mca's CPU name, \"model\": whose scheduling model LLVM gives it}");
    e.llvm_mcpu = m.at("mcpu").get<std::string>();
    e.llvm_model = m.at("model").get<std::string>();
  }
  return e;
}

std::string cpuid_text(const CpuFacts& f) {
  return fmt::format("CPUID {} {}:{}{}", f.vendor, f.family, f.model, f.stepping >= 0 ? fmt::format(" stepping {}", f.stepping) : "");
}

}  // namespace

CpuTable CpuTable::from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", origin, e.what()));
  }
  const MetricCatalog& catalog = MetricCatalog::builtin();
  CpuTable t;
  try {
    const auto& cal = doc.at("calibration");
    t.tolerance_ = cal.at("tolerance");
    for (const char* arch : {"x86_64", "aarch64"}) {
      ArchCalibration a;
      a.primary = cal.at(arch).at("primary");
      a.cross_check = cal.at(arch).at("cross_check");
      for (const auto& [chain, cycles] : cal.at(arch).at("latency").items()) a.latency[chain] = cycles.get<double>();
      t.calibration_[arch] = a;
    }
    size_t i = 0;
    for (const auto& j : doc.at("cpus")) t.entries_.push_back(parse_entry(j, fmt::format("{}: cpus[{}]", origin, i++), catalog));
    i = 0;
    for (const auto& j : doc.at("feature_classes"))
      t.classes_.push_back(parse_entry(j, fmt::format("{}: feature_classes[{}]", origin, i++), catalog));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", origin, e.what()));
  }
  return t;
}

const CpuTable& CpuTable::builtin() {
  static const CpuTable t = from_json_text(kBuiltinCpuTableJson, "builtin harness/catalog/cpus.json");
  return t;
}

CpuIdentity CpuTable::identify(const CpuFacts& f, const MetricCatalog& catalog) const {
  CpuIdentity id;
  id.calibration_tolerance = tolerance_;
  if (auto it = calibration_.find(f.arch); it != calibration_.end()) {
    id.primary_chain = it->second.primary;
    id.cross_check_chain = it->second.cross_check;
    id.chain_latency = it->second.latency;
  }
  auto has = [&](const std::string& flag) { return f.flags.count(flag) > 0; };
  auto adopt = [&](const Entry& e, std::string matched_by) {
    id.known = true;
    id.key = e.key;
    id.name = e.name;
    id.cores = e.cores;
    id.systems = e.systems;
    id.predictors = e.predictors;
    id.llvm_mcpu = e.llvm_mcpu;
    id.llvm_model = e.llvm_model;
    id.catalog_source = e.source;
    if (auto it = e.source_by_os.find(f.os); it != e.source_by_os.end()) id.catalog_source = it->second;
    id.matched_by = std::move(matched_by);
    id.note = e.note;
    for (const auto& [chain, cycles] : e.latency) id.chain_latency[chain] = cycles;
  };

  const Entry* match = nullptr;
  std::string matched_by;
  for (const auto& e : entries_) {
    if (f.os == "darwin") {
      // macOS names Apple silicon only by brand ("Apple M2 Pro"): the entry's brand and a word break.
      if (!e.brand.empty() && f.brand.rfind(e.brand, 0) == 0 &&
          (f.brand.size() == e.brand.size() || f.brand[e.brand.size()] == ' ')) {
        match = &e;
        matched_by = fmt::format("brand '{}'", f.brand);
      }
    } else if (!e.vendor.empty()) {
      if (e.vendor == f.vendor && e.family == f.family && in_ranges(f.model, e.models) &&
          (e.steppings.empty() || in_ranges(f.stepping, e.steppings))) {
        match = &e;
        matched_by = cpuid_text(f);
      }
    } else if (!e.parts.empty()) {
      std::vector<std::string> parts;
      for (auto [impl, part] : f.arm_cores)
        if (impl == e.implementer && std::find(e.parts.begin(), e.parts.end(), part) != e.parts.end()) {
          match = &e;
          parts.push_back(fmt::format("{:#05x}", part));
        }
      if (match)
        matched_by = fmt::format("MIDR implementer {:#x} part{} {}", e.implementer, parts.size() > 1 ? "s" : "", fmt::join(parts, ", "));
    }
    if (match) break;
  }

  std::string chip;  // "Apple M1 Pro": the part numbers name the chip
  if (match && !match->parts.empty()) {
    // arm64: the kinds of core, from every CPU's MIDR (or the distinct parts when CPU numbers are
    // unknown), performance cores first.
    std::vector<ArmCpu> cpus = f.arm_cpus;
    if (cpus.empty())
      for (auto [impl, part] : f.arm_cores) cpus.push_back({-1, impl, 0, part, 0});
    for (const auto& c : cpus) {
      auto info = match->part_info.find(c.part);
      std::string core = info != match->part_info.end() ? info->second.core
                         : match->cores.size() == 1  ? match->cores.front()
                                                     : fmt::format("part {:#05x}", c.part);
      if (c.implementer != match->implementer)
        core = fmt::format("MIDR implementer {:#x} part {:#05x} (not {})", c.implementer, c.part, match->name);
      auto it = std::find_if(id.core_kinds.begin(), id.core_kinds.end(), [&](const CoreKind& k) { return k.core == core; });
      if (it == id.core_kinds.end()) {
        CoreKind k;
        k.core = core;
        if (info != match->part_info.end() && c.implementer == match->implementer) {
          k.kind = info->second.kind;
          k.kernel_pmu = info->second.kernel_pmu;
          if (!info->second.chip.empty()) chip = info->second.chip;
        }
        k.midr = c.cpu >= 0 || c.variant || c.revision ? fmt::format("{:#010x}", c.midr()) : "";
        id.core_kinds.push_back(k);
        it = id.core_kinds.end() - 1;
      }
      if (c.cpu >= 0) it->cpus.push_back(c.cpu);
    }
    std::stable_sort(id.core_kinds.begin(), id.core_kinds.end(), [](const CoreKind& a, const CoreKind& b) {
      auto rank = [](const std::string& k) { return k == "P" ? 0 : k == "E" ? 2 : 1; };
      return rank(a.kind) < rank(b.kind);
    });
  }

  if (match) {
    std::vector<std::string> contradicting;
    for (const auto& flag : match->lacks)
      if (has(flag)) contradicting.push_back(flag);
    if (contradicting.empty()) {
      adopt(*match, matched_by);
      if (!chip.empty()) id.name = chip;
    } else {
      std::string why = fmt::format("{} says {}, but the CPU reports {}, which {} never has: a hypervisor presents a model "
                                    "that is not the hardware's",
                                    matched_by, match->name, fmt::join(contradicting, ", "), match->name);
      for (const auto& c : classes_) {
        if (c.vendor != f.vendor) continue;
        if (!std::all_of(c.requires_features.begin(), c.requires_features.end(), has)) continue;
        adopt(c, fmt::format("CPU features ({})", fmt::join(c.requires_features, ", ")));
        id.note = why + "; identified by its features instead";
        break;
      }
      if (!id.known) id.note = why + "; no feature class in the CPU table matches either";
    }
  }

  if (!id.known) {
    // Not in the table: what libpfm4 detected, then the architecture's generic fallback.
    std::string seen = f.arch == "aarch64" && !f.arm_cores.empty()
                           ? fmt::format("MIDR implementer {:#x} part {:#05x}", f.arm_cores.front().first, f.arm_cores.front().second)
                       : f.os == "darwin" ? fmt::format("brand '{}'", f.brand)
                                          : cpuid_text(f);
    id.matched_by = seen;
    id.name = fmt::format("unknown ({} is not in harness/catalog/cpus.json)", seen);
    id.key = f.arch;
    std::string note = id.note;
    if (const EventSource* s = catalog.source_for_libpfm_pmu(f.arch, f.libpfm_pmu)) {
      id.catalog_source = s->key;
      id.key = f.libpfm_pmu;
      id.matched_by = fmt::format("libpfm4 PMU {} ({})", f.libpfm_pmu, seen);
      note += (note.empty() ? "" : "; ") + fmt::format("events chosen by libpfm4's detection ({})", f.libpfm_pmu);
    } else if (const EventSource* fb = catalog.fallback_source(f.arch)) {
      id.catalog_source = fb->key;
      note += (note.empty() ? "" : "; ") + std::string("only the kernel's generic hardware events");
    }
    id.note = note;
  }

  // A source for another OS (Apple's kperf on Linux) cannot count here.
  if (const EventSource* s = catalog.source(id.catalog_source); s && !s->os.empty() && s->os != f.os) {
    const EventSource* fb = catalog.fallback_source(f.arch);
    id.note += (id.note.empty() ? "" : "; ") +
               fmt::format("{} needs {}; here only the kernel's generic hardware events", s->key, s->os);
    id.catalog_source = fb ? fb->key : "";
  }
  return id;
}

std::vector<int> CpuIdentity::measuring_cpus() const {
  for (const auto& k : core_kinds)
    if (k.kind == "P") return k.cpus;
  return {};
}

std::string CpuIdentity::core_of(int cpu) const {
  for (const auto& k : core_kinds)
    if (std::find(k.cpus.begin(), k.cpus.end(), cpu) != k.cpus.end()) return k.core;
  if (core_kinds.size() == 1) return core_kinds.front().core;
  if (core_kinds.empty() && cores.size() == 1) return cores.front();
  return "";
}

std::string CpuIdentity::measuring_kernel_pmu() const {
  for (const auto& k : core_kinds)
    if (k.kind == "P") return k.kernel_pmu;
  return core_kinds.size() == 1 ? core_kinds.front().kernel_pmu : "";
}

const CpuIdentity& this_cpu_identity() {
  static const CpuIdentity id = CpuTable::builtin().identify(this_cpu_facts(), MetricCatalog::builtin());
  return id;
}

}  // namespace dlab
