// Finding a RAPL event in sysfs: the power PMU's type, the event's config through the PMU's
// format files, its scale and unit, and the CPUs (one per package) it is read on.
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/rapl_perf.h"
#include "dispatchlab/harness/quote.h"

namespace dlab {

namespace {

constexpr const char* kPmuDir = "/sys/bus/event_source/devices/power";

// "power/energy-pkg/" -> "energy-pkg"; "" when the string is not a power PMU event.
std::string event_name(const std::string& native) {
  const std::string prefix = "power/";
  if (native.rfind(prefix, 0) != 0 || native.size() <= prefix.size() + 1 || native.back() != '/') return "";
  std::string name = native.substr(prefix.size(), native.size() - prefix.size() - 1);
  return name.find('/') == std::string::npos ? name : "";
}

// The bits of `config` a format file gives a term: "config:0-7" or "config:12".
uint64_t place(const SysfsRoot& root, const std::string& term, uint64_t value) {
  std::string file = std::string(kPmuDir) + "/format/" + term;
  std::string spec = root.read(file);
  auto unsupported = [&] {
    return std::runtime_error(fmt::format("{}: {} is not a format this harness reads (config:LO-HI)", root.path(file), quote_input(spec)));
  };
  if (spec.rfind("config:", 0) != 0) throw unsupported();
  std::string bits = spec.substr(7);
  size_t dash = bits.find('-');
  unsigned lo, hi;
  try {
    lo = static_cast<unsigned>(parse_unsigned(bits.substr(0, dash), root.path(file)));
    hi = dash == std::string::npos ? lo : static_cast<unsigned>(parse_unsigned(bits.substr(dash + 1), root.path(file)));
  } catch (const std::invalid_argument&) {
    throw unsupported();
  }
  if (hi < lo || hi > 63) throw unsupported();
  unsigned width = hi - lo + 1;
  if (width < 64 && value >> width)
    throw std::runtime_error(fmt::format("{}: {}={:#x} does not fit {}", root.path(file), term, value, spec));
  return value << lo;
}

// "event=0x02" (terms joined by ',') -> config.
uint64_t parse_config(const SysfsRoot& root, const std::string& event_file, const std::string& text) {
  uint64_t config = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t eq = part.find('=');
    std::string term = part.substr(0, eq);
    uint64_t value = eq == std::string::npos ? 1 : parse_unsigned(part.substr(eq + 1), root.path(event_file));
    if (term.empty() || term.find('/') != std::string::npos)
      throw std::runtime_error(fmt::format("{}: {} is not a term=value list", root.path(event_file), quote_input(text)));
    config |= place(root, term, value);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return config;
}

double parse_scale(const SysfsRoot& root, const std::string& file) {
  std::string text = root.read(file);
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0))
    throw std::runtime_error(fmt::format("{}: {} is not a positive scale", root.path(file), quote_input(text)));
  return v;
}

std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

}  // namespace

std::string RaplPerfEvent::scope() const {
  std::vector<std::string> cpu_names;
  for (int c : cpus) cpu_names.push_back(std::to_string(c));
  std::string where = packages.size() == 1
                          ? fmt::format("package {} (cpu {})", packages.front(), cpu_names.front())
                          : fmt::format("packages {} summed (cpus {})", joined(packages, "+"), joined(cpu_names, ","));
  if (name == "energy-pkg") return where;
  if (name == "energy-cores") return (packages.size() == 1 ? "core domain (PP0) of " : "core domains (PP0) of ") + where;
  return name + " of " + where;
}

RaplPerfLookup find_rapl_perf_event(const SysfsRoot& root, const std::string& native_event) {
  RaplPerfLookup out;
  std::string name = event_name(native_event);
  if (name.empty()) {
    out.reason = fmt::format("{} is not a power PMU event (power/<event>/)", quote_input(native_event));
    return out;
  }
  if (!root.exists(kPmuDir)) {
    out.reason = fmt::format("no RAPL PMU ({} absent: a VM or a CPU without RAPL)", root.path(kPmuDir));
    return out;
  }
  std::string event_file = std::string(kPmuDir) + "/events/" + name;
  if (!root.exists(event_file)) {
    out.reason = fmt::format("the RAPL PMU has no {} event ({} absent", name, root.path(event_file));
    if (name == "energy-cores") out.reason += ": AMD Zen and Intel server CPUs have no core domain in the power PMU";
    out.reason += ")";
    return out;
  }
  try {
    RaplPerfEvent ev;
    ev.native = native_event;
    ev.name = name;
    std::string type_file = std::string(kPmuDir) + "/type";
    ev.type = static_cast<uint32_t>(parse_unsigned(root.read(type_file), root.path(type_file)));
    ev.config = parse_config(root, event_file, root.read(event_file));
    std::string unit = root.read(event_file + ".unit");
    if (unit != "Joules")
      throw std::runtime_error(fmt::format("{} says {}, not Joules", root.path(event_file + ".unit"), quote_input(unit)));
    ev.joules_per_count = parse_scale(root, event_file + ".scale");
    std::string mask_file = std::string(kPmuDir) + "/cpumask";
    std::string mask = root.read(mask_file);
    try {
      ev.cpus = parse_cpu_list(mask);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("{}: {}", root.path(mask_file), e.what()));
    }
    if (ev.cpus.empty()) throw std::runtime_error(fmt::format("{} lists no CPU", root.path(mask_file)));
    for (int cpu : ev.cpus) {
      std::string f = fmt::format("/sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpu);
      ev.packages.push_back(std::to_string(parse_unsigned(root.read(f), root.path(f))));
    }
    out.event = std::move(ev);
  } catch (const std::exception& e) {  // SysfsError, a malformed file
    out.reason = e.what();
  }
  return out;
}

}  // namespace dlab
