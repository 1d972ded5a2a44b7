// The powercap RAPL backend: package (or core) zones found by name, energy_uj read at the start
// and the end of a sample, each zone's difference taken across a wrap, the zones summed.
#include "dispatchlab/harness/powercap.h"

#include <algorithm>
#include <cerrno>
#include <map>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab {

namespace {

constexpr const char* kPowercap = "/sys/class/powercap";

// "intel-rapl:0" -> {"intel-rapl", "0"}; "intel-rapl:0:0" -> {"intel-rapl", "0", "0"}; other names: {}.
std::vector<std::string> rapl_zone_parts(const std::string& id) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    size_t colon = id.find(':', pos);
    parts.push_back(id.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos));
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  const std::string suffix = "-rapl";
  const std::string& type = parts.front();
  bool rapl = type.size() > suffix.size() && type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (!rapl || parts.size() < 2 || parts.size() > 3) return {};
  for (size_t i = 1; i < parts.size(); ++i)
    if (parts[i].empty() || parts[i].find_first_not_of("0123456789") != std::string::npos) return {};
  return parts;
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

PowercapZone zone(const SysfsRoot& root, const std::string& id, const std::string& name, const std::string& package) {
  PowercapZone z;
  z.id = id;
  z.name = name;
  z.package = package;
  z.dir = std::string(kPowercap) + "/" + id;
  std::string f = z.dir + "/max_energy_range_uj";
  z.max_energy_range_uj = parse_unsigned(root.read(f), root.path(f));
  return z;
}

}  // namespace

std::string PowercapDomain::scope() const {
  std::vector<std::string> packages, ids;
  for (const auto& z : zones) {
    ids.push_back(z.id);
    packages.push_back(z.package);
  }
  std::string where = zones.size() == 1 ? fmt::format("{} ({})", packages.front(), ids.front())
                                        : fmt::format("{} summed ({})", joined(packages, "+"), joined(ids, ", "));
  if (native == "powercap/core") return (zones.size() == 1 ? "core domain (PP0) of " : "core domains (PP0) of ") + where;
  return where;
}

PowercapDomain find_powercap_domain(const SysfsRoot& root, const std::string& native_event) {
  PowercapDomain d;
  d.native = native_event;
  bool core = native_event == "powercap/core";
  if (!core && native_event != "powercap/package") {
    d.reason = fmt::format("{} is not a powercap domain (powercap/package or powercap/core)", quote_input(native_event));
    return d;
  }
  if (!root.exists(kPowercap)) {
    d.reason = fmt::format("no RAPL powercap zone ({} absent: a VM, a CPU without RAPL, or no RAPL powercap driver loaded)",
                           root.path(kPowercap));
    return d;
  }
  try {
    std::vector<std::string> packages, seen;
    std::vector<std::pair<std::string, std::string>> cores;  // (id, package id)
    std::map<std::string, std::string> names;
    for (const auto& id : root.list(kPowercap)) {
      auto parts = rapl_zone_parts(id);
      if (parts.empty()) continue;
      std::string name = names[id] = root.read(std::string(kPowercap) + "/" + id + "/name");
      seen.push_back(id + "=" + name);
      if (parts.size() == 2 && name.rfind("package-", 0) == 0) packages.push_back(id);
      if (parts.size() == 3 && name == "core") cores.emplace_back(id, parts[0] + ":" + parts[1]);
    }
    if (packages.empty()) {
      d.reason = fmt::format("no RAPL package zone in {} (RAPL zones there: {})", root.path(kPowercap),
                             seen.empty() ? "none" : joined(seen, ", "));
      return d;
    }
    for (const auto& id : packages)
      if (!core) d.zones.push_back(zone(root, id, names[id], names[id]));
    if (core) {
      for (const auto& [id, parent] : cores)
        if (std::find(packages.begin(), packages.end(), parent) != packages.end())
          d.zones.push_back(zone(root, id, "core", names[parent]));
      if (d.zones.empty())
        d.reason = fmt::format("no RAPL core zone (a subzone named 'core') under {} in {}: this CPU reports no core domain",
                               joined(packages, ", "), root.path(kPowercap));
    }
  } catch (const std::exception& e) {  // SysfsError, a malformed number
    d.zones.clear();
    d.reason = e.what();
  }
  return d;
}

uint64_t powercap_delta_uj(uint64_t begin, uint64_t end, uint64_t max_energy_range_uj) {
  if (end >= begin) return end - begin;
  // Wrapped: from `begin` up to the range, then from 0 to `end`.
  return (max_energy_range_uj > begin ? max_energy_range_uj - begin : 0) + end;
}

std::string explain_energy_read_error(const SysfsError& e) {
  if (e.err() == EACCES || e.err() == EPERM)
    return std::string(e.what()) +
           " (energy_uj is readable by root only since Linux 5.10, the PLATYPUS fix CVE-2020-8694: run as root)";
  return e.what();
}

uint64_t read_energy_uj(const SysfsRoot& root, const PowercapZone& zone) {
  std::string text;
  try {
    text = root.read(zone.energy_file());
  } catch (const SysfsError& e) {
    throw CounterError(explain_energy_read_error(e));
  }
  try {
    return parse_unsigned(text, root.path(zone.energy_file()));
  } catch (const std::invalid_argument& e) {
    throw CounterError(e.what());
  }
}

namespace {

class PowercapGroup final : public CounterGroup {
 public:
  PowercapGroup(const SysfsRoot& root, std::vector<PowercapDomain> domains) : root_(root), domains_(std::move(domains)) {
    snapshot();  // every file readable now, or the group does not open
  }
  void start() override { begin_ = snapshot(); }
  void stop() override { end_ = snapshot(); }
  std::vector<CounterReading> read() override {
    if (begin_.size() != domains_.size() || end_.size() != domains_.size())
      throw CounterError("powercap group read before start() and stop()");
    std::vector<CounterReading> out(domains_.size());
    for (size_t i = 0; i < domains_.size(); ++i) {
      uint64_t uj = 0;
      for (size_t k = 0; k < domains_[i].zones.size(); ++k)
        uj += powercap_delta_uj(begin_[i][k], end_[i][k], domains_[i].zones[k].max_energy_range_uj);
      CounterReading& r = out[i];
      r.raw = uj;
      if (uj == 0)
        r.no_value_reason = fmt::format("{} did not change during the sample (RAPL updates about every millisecond: "
                                        "the sample was too short to measure)", domains_[i].native);
      else
        r.value = static_cast<double>(uj) * 1e-6;
    }
    return out;
  }
  std::string read_method() const override { return "read(energy_uj)"; }

 private:
  std::vector<std::vector<uint64_t>> snapshot() {
    std::vector<std::vector<uint64_t>> s(domains_.size());
    for (size_t i = 0; i < domains_.size(); ++i)
      for (const auto& z : domains_[i].zones) s[i].push_back(read_energy_uj(root_, z));
    return s;
  }
  SysfsRoot root_;
  std::vector<PowercapDomain> domains_;
  std::vector<std::vector<uint64_t>> begin_, end_;
};

}  // namespace

Availability PowercapBackend::probe(const std::string& native_event) {
  PowercapDomain d = find_powercap_domain(root_, native_event);
  if (!d.reason.empty()) return Availability::no(d.reason);
  try {
    PowercapGroup g(root_, {d});
  } catch (const CounterError& e) {
    return Availability::no(e.what());
  }
  std::vector<std::string> ranges;
  for (const auto& z : d.zones) ranges.push_back(fmt::format("{} wraps at {} uJ", z.id, z.max_energy_range_uj));
  return Availability::yes(fmt::format("{}; energy_uj in microjoules, {}", d.scope(), joined(ranges, ", ")));
}

std::unique_ptr<CounterGroup> PowercapBackend::open_group(const std::vector<std::string>& native_events) {
  if (native_events.empty()) throw CounterError("empty powercap group");
  std::vector<PowercapDomain> domains;
  for (const auto& n : native_events) {
    PowercapDomain d = find_powercap_domain(root_, n);
    if (!d.reason.empty()) throw CounterError(d.reason);
    domains.push_back(std::move(d));
  }
  return std::make_unique<PowercapGroup>(root_, std::move(domains));
}

std::string PowercapBackend::scope(const std::string& native_event) {
  PowercapDomain d = find_powercap_domain(root_, native_event);
  return d.reason.empty() ? d.scope() : "";
}

}  // namespace dlab
