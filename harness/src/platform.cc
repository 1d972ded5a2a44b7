#include "platform.h"

#include <dirent.h>

#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace dlab::platform {

std::optional<std::string> read_file_trimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

std::optional<std::string> cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    if (k != key) continue;
    std::string v = line.substr(colon + 1);
    if (!v.empty() && v.front() == ' ') v.erase(0, 1);
    return v;
  }
  return std::nullopt;
}

bool cpuinfo_has_flag(const std::string& flag) {
  auto flags = cpuinfo_field("flags");
  if (!flags) flags = cpuinfo_field("Features");  // arm64
  if (!flags) return false;
  std::istringstream ss(*flags);
  std::string f;
  while (ss >> f)
    if (f == flag) return true;
  return false;
}

bool running_under_hypervisor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) return (c >> 31) & 1;
  return false;
#else
  return cpuinfo_has_flag("hypervisor") || read_file_trimmed("/sys/hypervisor/type").has_value();
#endif
}

std::string hypervisor_signature() {
#if defined(__x86_64__) || defined(__i386__)
  if (!running_under_hypervisor()) return "";
  unsigned a, b, c, d;
  __cpuid(0x40000000, a, b, c, d);
  char sig[13] = {};
  std::memcpy(sig + 0, &b, 4);
  std::memcpy(sig + 4, &c, 4);
  std::memcpy(sig + 8, &d, 4);
  std::string s(sig);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
#else
  return read_file_trimmed("/sys/hypervisor/type").value_or("");
#endif
}

bool kernel_has_core_pmu() {
  DIR* d = opendir("/sys/bus/event_source/devices");
  if (!d) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "cpu" || n == "cpu_core" || n == "cpu_atom" || n.rfind("armv8", 0) == 0 ||
        n.rfind("arm_", 0) == 0 || n.rfind("apple_", 0) == 0) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

std::string no_core_pmu_reason() {
  if (kernel_has_core_pmu()) return "";
  if (running_under_hypervisor()) {
    std::string sig = hypervisor_signature();
    return "no hardware PMU: VM" + (sig.empty() ? std::string() : " (" + sig + ")") + " exposes no counters to this guest";
  }
  return "no hardware PMU: the kernel exposes no core PMU in /sys/bus/event_source/devices";
}

std::optional<unsigned> sysfs_pmu_type(const std::string& pmu) {
  auto s = read_file_trimmed("/sys/bus/event_source/devices/" + pmu + "/type");
  if (!s) return std::nullopt;
  return static_cast<unsigned>(std::stoul(*s));
}

std::optional<int> perf_event_paranoid() {
  auto s = read_file_trimmed("/proc/sys/kernel/perf_event_paranoid");
  if (!s) return std::nullopt;
  return std::stoi(*s);
}

}  // namespace dlab::platform
