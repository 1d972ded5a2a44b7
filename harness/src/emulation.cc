#include "dispatchlab/harness/emulation.h"

#include <sys/auxv.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/quote.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

extern char** environ;

namespace dlab {

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\0')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

std::optional<std::string> read_optional(const SysfsRoot& root, const std::string& path) {
  try {
    return root.read(path);
  } catch (const SysfsError&) {
    return std::nullopt;
  }
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

#if defined(__x86_64__)
ExecutedCpuId executed_cpuid() {
  ExecutedCpuId x;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return x;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  x.vendor = vendor;
  __cpuid(1, a, b, c, d);
  int family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 15) family += (a >> 20) & 0xff;
  if (family >= 6) model += ((a >> 16) & 0xf) << 4;
  x.family = family;
  x.model = model;
  x.hypervisor_bit = (c >> 31) & 1;
  unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
  if (max_ext >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      __cpuid(0x80000002 + i, a, b, c, d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
    x.brand = trimmed(brand);
  }
  // Leaf 0x40000000 means something only under a hypervisor (or a translator that says it is one);
  // on bare metal it returns the highest basic leaf's registers.
  if (x.hypervisor_bit) {
    __cpuid(0x40000000, a, b, c, d);
    char sig[13] = {};
    std::memcpy(sig, &b, 4);
    std::memcpy(sig + 4, &c, 4);
    std::memcpy(sig + 8, &d, 4);
    x.hypervisor_signature = trimmed(std::string(sig, 12));
  }
  return x;
}
#elif defined(__aarch64__)
ExecutedCpuId executed_cpuid() {
  ExecutedCpuId x;
  // MRS MIDR_EL1 at EL0 traps; Linux emulates it (and says so with HWCAP_CPUID, bit 11). Without
  // that hwcap the read would be SIGILL, so it is not made.
  constexpr unsigned long kHwcapCpuid = 1ul << 11;
  if (getauxval(AT_HWCAP) & kHwcapCpuid) {
    uint64_t midr;
    asm volatile("mrs %0, midr_el1" : "=r"(midr));
    x.midr = midr;
  }
  return x;
}
#else
ExecutedCpuId executed_cpuid() { return {}; }
#endif

#if defined(__x86_64__)
constexpr const char* kBinaryArch = "x86_64";
#elif defined(__aarch64__)
constexpr const char* kBinaryArch = "aarch64";
#else
constexpr const char* kBinaryArch = "unknown";
#endif

// What one sign points at: a named emulator, qemu (user or system mode decided from the other
// signs), or a translator of no known name; `user_mode` signs say the translation is of this
// process (not of a whole machine, as qemu-system's is).
struct Sign {
  EmulationEvidence evidence;
  std::string emulator;  // "qemu", "qemu-user", "FEX-Emu", "box64", "Rosetta 2", "valgrind", ""
  bool user_mode = false;
};

std::string midr_text(unsigned implementer, unsigned part) { return fmt::format("implementer {:#04x} part {:#05x}", implementer, part); }

}  // namespace

std::map<std::string, std::string> parse_auxv_text(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.starts_with("AT_")) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    if (key.find(' ') != std::string::npos) continue;  // "AT_??? (0x1b): 0x1c": not a named entry
    out[key] = trimmed(line.substr(colon + 1));
  }
  return out;
}

EmulationView EmulationView::of_this_process() {
  EmulationView v;
  v.binary_arch = kBinaryArch;
  v.executed = executed_cpuid();
  auto hex = [](unsigned long x) { return fmt::format("{:#x}", x); };
  auto entry = [&](const char* name, unsigned long type, bool is_string) {
    errno = 0;
    unsigned long value = getauxval(type);
    if (errno == ENOENT) return;
    v.auxv[name] = is_string ? (value ? std::string(reinterpret_cast<const char*>(value)) : "") : hex(value);
  };
  entry("AT_SYSINFO_EHDR", AT_SYSINFO_EHDR, false);
  entry("AT_BASE", AT_BASE, false);
  entry("AT_HWCAP", AT_HWCAP, false);
  entry("AT_PLATFORM", AT_PLATFORM, true);
  entry("AT_EXECFN", AT_EXECFN, true);
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (kv.starts_with("FEX_") || kv.starts_with("BOX64_") || kv.starts_with("QEMU_")) {
      size_t eq = kv.find('=');
      v.environment[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
  }
  return v;
}

EmulationView EmulationView::recorded(const std::string& dir, const std::string& binary_arch) {
  EmulationView v;
  v.binary_arch = binary_arch;
  v.root = SysfsRoot(dir);
  if (auto text = read_optional(v.root, "/executed.json")) {
    auto j = nlohmann::json::parse(*text);
    v.executed.vendor = j.value("vendor", "");
    v.executed.family = j.value("family", -1);
    v.executed.model = j.value("model", -1);
    v.executed.brand = j.value("brand", "");
    v.executed.hypervisor_bit = j.value("hypervisor_bit", false);
    v.executed.hypervisor_signature = j.value("hypervisor_signature", "");
    if (j.contains("midr")) v.executed.midr = parse_unsigned(j.at("midr").get<std::string>(), dir + "/executed.json midr");
  }
  if (auto text = read_optional(v.root, "/auxv.txt")) v.auxv = parse_auxv_text(*text);
  if (auto text = read_optional(v.root, "/environment.txt")) {
    size_t pos = 0;
    while (pos < text->size()) {
      size_t nl = text->find('\n', pos);
      std::string line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text->size() : nl + 1;
      size_t eq = line.find('=');
      if (eq != std::string::npos && eq > 0) v.environment[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return v;
}

Emulation detect_emulation(const EmulationView& v) {
  std::vector<Sign> signs;
  auto sign = [&](std::string method, std::string detail, bool decisive, std::string emulator, bool user_mode) {
    signs.push_back({{std::move(method), std::move(detail), decisive}, std::move(emulator), user_mode});
  };
  if (v.os == "darwin") {
    // Rosetta 2 on macOS says so through sysctl.proc_translated (1 under Rosetta); dlab is not built
    // for macOS, so this is where that check would go (docs/harness.md).
    return {};
  }

  // What the kernel says about the CPU and itself.
  std::optional<CpuFacts> kernel_cpu;
  if (auto text = read_optional(v.root, "/proc/cpuinfo")) {
    try {
      kernel_cpu = parse_cpuinfo(*text, v.binary_arch, "/proc/cpuinfo");
    } catch (const std::runtime_error&) {
    }
  }
  bool cpuinfo_is_x86 = kernel_cpu && !kernel_cpu->vendor.empty();
  bool cpuinfo_is_arm = kernel_cpu && !kernel_cpu->arm_cores.empty();

  if (auto arch = read_optional(v.root, "/proc/sys/kernel/arch"); arch && !arch->empty() && *arch != v.binary_arch)
    sign("kernel-arch",
         fmt::format("the kernel is {} (/proc/sys/kernel/arch) but this binary is {}: it runs translated", escape_input(*arch),
                     v.binary_arch),
         true, "", true);
  if (v.binary_arch == "aarch64" && cpuinfo_is_x86 && !cpuinfo_is_arm)
    sign("cpuinfo-arch",
         fmt::format("/proc/cpuinfo describes an x86 CPU ({} family {} model {}) but this binary is aarch64: it runs translated",
                     escape_input(kernel_cpu->vendor), kernel_cpu->family, kernel_cpu->model),
         true, "", true);
  if (v.binary_arch == "x86_64" && cpuinfo_is_arm && !cpuinfo_is_x86)
    sign("cpuinfo-arch",
         fmt::format("/proc/cpuinfo describes an arm64 CPU (MIDR {}) but this binary is x86_64: it runs translated",
                     midr_text(kernel_cpu->arm_cores.front().first, kernel_cpu->arm_cores.front().second)),
         true, "", true);

  // What this process's own CPUID answers.
  const auto& x = v.executed;
  if (x.hypervisor_signature == "TCGTCGTCGTCG")
    sign("hypervisor-leaf", "CPUID leaf 0x40000000 says TCGTCGTCGTCG: QEMU's TCG translator answers CPUID", true, "qemu", false);
  else if (x.hypervisor_signature == "FEXIFEXIEMU")
    sign("hypervisor-leaf", "CPUID leaf 0x40000000 says FEXIFEXIEMU: FEX-Emu answers CPUID", true, "FEX-Emu", true);
  if (x.brand.starts_with("QEMU TCG CPU"))
    sign("cpuid-brand", fmt::format("the CPUID brand string is '{}': QEMU's TCG CPU model", escape_input(x.brand)), true, "qemu", false);
  else if (x.brand.starts_with("Box64 on"))
    sign("cpuid-brand", fmt::format("the CPUID brand string is '{}': box64 answers CPUID", escape_input(x.brand)), true, "box64", true);
  else if (x.brand.starts_with("VirtualApple"))
    sign("cpuid-brand", fmt::format("the CPUID brand string is '{}': Rosetta 2 answers CPUID", escape_input(x.brand)), true,
         "Rosetta 2", true);
  if (v.binary_arch == "x86_64" && cpuinfo_is_x86 && !x.vendor.empty() &&
      (x.vendor != kernel_cpu->vendor || x.family != kernel_cpu->family || x.model != kernel_cpu->model))
    sign("cpuid-vs-cpuinfo",
         fmt::format("CPUID in this process says {} {}:{} '{}' but /proc/cpuinfo says {} {}:{} '{}': something between the "
                     "program and the CPU answers CPUID itself",
                     escape_input(x.vendor), x.family, x.model, escape_input(x.brand), escape_input(kernel_cpu->vendor),
                     kernel_cpu->family, kernel_cpu->model, escape_input(kernel_cpu->brand)),
         true, "", true);

  // arm64: the MIDR this process reads against the kernel's cores (cpuinfo and sysfs).
  if (v.binary_arch == "aarch64") {
    std::set<std::pair<unsigned, unsigned>> kernel_midrs;
    if (cpuinfo_is_arm)
      for (const auto& c : kernel_cpu->arm_cores) kernel_midrs.insert(c);
    try {
      for (const auto& cpu : v.root.list("/sys/devices/system/cpu")) {
        if (!cpu.starts_with("cpu") || cpu.size() < 4 || !std::isdigit(static_cast<unsigned char>(cpu[3]))) continue;
        if (auto m = read_optional(v.root, "/sys/devices/system/cpu/" + cpu + "/regs/identification/midr_el1")) {
          uint64_t midr = parse_unsigned(*m, "midr_el1");
          kernel_midrs.insert({static_cast<unsigned>((midr >> 24) & 0xff), static_cast<unsigned>((midr >> 4) & 0xfff)});
        }
      }
    } catch (const std::exception&) {
    }
    auto qemu_max = [](std::pair<unsigned, unsigned> m) { return m.first == 0x00 && m.second == 0x051; };
    for (auto m : kernel_midrs)
      if (qemu_max(m))
        sign("midr", "the kernel's CPU has MIDR implementer 0x00 part 0x051: QEMU's 'max' CPU model, which only its TCG translator presents",
             true, "qemu", false);
    if (x.midr) {
      std::pair<unsigned, unsigned> mine{static_cast<unsigned>((*x.midr >> 24) & 0xff), static_cast<unsigned>((*x.midr >> 4) & 0xfff)};
      if (qemu_max(mine) && !kernel_midrs.count(mine))
        sign("midr", fmt::format("MRS MIDR_EL1 in this process reads {:#x}: QEMU's 'max' CPU model (implementer 0x00 part 0x051)", *x.midr),
             true, "qemu", true);
      else if (!kernel_midrs.empty() && !kernel_midrs.count(mine))
        sign("midr",
             fmt::format("MRS MIDR_EL1 in this process reads {} but the kernel's cores are {}: a translator answers the read itself",
                         midr_text(mine.first, mine.second), midr_text(kernel_midrs.begin()->first, kernel_midrs.begin()->second)),
             true, "", true);
    }
  }

  // The process itself: its name, its mappings, its auxiliary vector, its environment.
  if (auto comm = read_optional(v.root, "/proc/self/comm")) {
    std::string c = trimmed(*comm);
    if (c.starts_with("qemu-"))
      sign("comm", fmt::format("/proc/self/comm is '{}': this process is a qemu-user binary", escape_input(c)), true, "qemu-user", true);
    else if (c.starts_with("FEXInterpreter") || c.starts_with("FEXLoader"))
      sign("comm", fmt::format("/proc/self/comm is '{}': this process is FEX-Emu's loader", escape_input(c)), true, "FEX-Emu", true);
    else if (c == "box64")
      sign("comm", "/proc/self/comm is 'box64': this process is box64", true, "box64", true);
  }
  if (auto maps = read_optional(v.root, "/proc/self/maps"); maps && !maps->empty()) {
    bool any_exec = false;
    std::set<std::string> named;
    size_t pos = 0;
    while (pos < maps->size()) {
      size_t nl = maps->find('\n', pos);
      std::string line = maps->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? maps->size() : nl + 1;
      // "start-end perms offset dev inode   path"
      size_t sp = line.find(' ');
      if (sp == std::string::npos || sp + 5 > line.size()) continue;
      std::string perms = line.substr(sp + 1, 4);
      size_t slash = line.find('/');
      std::string path = slash == std::string::npos ? "" : trimmed(line.substr(slash));
      if (perms.size() == 4 && perms[2] == 'x' && line.find("[vsyscall]") == std::string::npos) any_exec = true;
      std::string base = basename_of(path);
      if (base.starts_with("qemu-")) named.insert("qemu-user\n" + path);
      else if (base.starts_with("FEXInterpreter") || base.starts_with("FEXLoader") || base.starts_with("libFEXCore")) named.insert("FEX-Emu\n" + path);
      else if (base == "box64") named.insert("box64\n" + path);
      else if (base == "rosetta" || path.find("/rosetta/") != std::string::npos) named.insert("Rosetta 2\n" + path);
      // valgrind's preloaded core (vgpreload_core-amd64-linux.so ...): it translates this process
      // and answers CPUID itself (a made-up CPU), so its signs would otherwise read as qemu's.
      else if (base.starts_with("vgpreload_")) named.insert("valgrind\n" + path);
    }
    for (const auto& n : named) {
      std::string emulator = n.substr(0, n.find('\n')), path = n.substr(n.find('\n') + 1);
      sign("maps", fmt::format("/proc/self/maps maps {}: {} runs in this process", escape_input(path), emulator), true, emulator, true);
    }
    if (!any_exec)
      sign("maps",
           "/proc/self/maps has no executable mapping (at most [vsyscall]): this code does not run from its own pages; "
           "qemu-user write-protects every guest page it has translated (a large program keeps untranslated pages r-x, so "
           "this sign is often absent)",
           true, "qemu-user", true);
  }
  if (!v.auxv.empty()) {
    auto ehdr = v.auxv.find("AT_SYSINFO_EHDR");
    if (ehdr == v.auxv.end() || ehdr->second == "0x0" || ehdr->second == "0")
      sign("auxv",
           "no AT_SYSINFO_EHDR in the auxiliary vector: no vDSO, which Linux maps into every process unless booted with vdso=0 "
           "(qemu-user 7.2 gives its guests none)",
           false, "qemu-user", true);
    if (auto base = v.auxv.find("AT_BASE"); base != v.auxv.end()) {
      try {
        uint64_t b = parse_unsigned(base->second, "AT_BASE");
        if (b >= 0x4000000000ull && b < 0x5000000000ull)
          sign("auxv",
               fmt::format("AT_BASE is {:#x}: the dynamic loader sits at qemu-user's guest mapping base (0x4000000000 and up), "
                           "never where Linux puts it",
                           b),
               false, "qemu-user", true);
      } catch (const std::invalid_argument&) {
      }
    }
  }
  for (const auto& [name, value] : v.environment) {
    (void)value;
    std::string emulator = name.starts_with("FEX_") ? "FEX-Emu" : name.starts_with("BOX64_") ? "box64" : "qemu-user";
    sign("environment", fmt::format("the environment has {} ({}'s variable; set by hand it proves nothing alone)", name, emulator), false,
         emulator, true);
    break;  // one variable says as much as several
  }
  // binfmt_misc: a handler that runs binaries of this architecture through a translator. Only a
  // supporting sign: it says what would translate, not that this process was.
  try {
    for (const auto& entry : v.root.list("/proc/sys/fs/binfmt_misc")) {
      if (entry == "register" || entry == "status") continue;
      auto text = read_optional(v.root, "/proc/sys/fs/binfmt_misc/" + entry);
      if (!text || !text->starts_with("enabled")) continue;
      size_t at = text->find("interpreter ");
      std::string interpreter = at == std::string::npos ? "" : trimmed(text->substr(at + 12, text->find('\n', at) - at - 12));
      std::string what = entry + " " + interpreter;
      std::string emulator = what.find("qemu-" + v.binary_arch) != std::string::npos ? "qemu-user"
                             : v.binary_arch == "x86_64" && what.find("FEX") != std::string::npos  ? "FEX-Emu"
                             : v.binary_arch == "x86_64" && what.find("box64") != std::string::npos ? "box64"
                             : v.binary_arch == "x86_64" && what.find("rosetta") != std::string::npos ? "Rosetta 2"
                                                                                                    : "";
      if (!emulator.empty())
        sign("binfmt",
             fmt::format("binfmt_misc entry {} runs {} binaries through {}", escape_input(entry), v.binary_arch, escape_input(interpreter)),
             false, emulator, false);
    }
  } catch (const SysfsError&) {
  }

  Emulation e;
  int supporting = 0;
  bool decisive = false, user_mode = false;
  for (const auto& s : signs) {
    e.evidence.push_back(s.evidence);
    if (s.evidence.decisive) decisive = true;
    else ++supporting;
  }
  e.emulated = decisive || supporting >= 2;
  for (const auto& s : signs)
    if (s.user_mode && (s.evidence.decisive || supporting >= 2)) user_mode = true;
  if (!e.emulated) return e;
  // The emulator: a named one from a decisive sign (FEX, box64, Rosetta) first; else qemu, in user
  // mode when anything says this process is translated, else a whole machine under TCG.
  for (const auto& s : signs)
    if (s.evidence.decisive && !s.emulator.empty() && !s.emulator.starts_with("qemu")) {
      e.emulator = s.emulator;
      return e;
    }
  bool qemu = std::any_of(signs.begin(), signs.end(), [](const Sign& s) { return s.emulator.starts_with("qemu"); });
  if (qemu) e.emulator = user_mode ? "qemu-user" : "qemu-system (TCG)";
  else {
    for (const auto& s : signs)
      if (!s.emulator.empty()) {
        e.emulator = s.emulator;
        return e;
      }
    e.emulator = "an emulator or binary translator";
  }
  return e;
}

std::string Emulation::reason() const {
  if (!emulated) return "";
  std::vector<std::string> methods;
  for (const auto& ev : evidence)
    if (ev.decisive && std::find(methods.begin(), methods.end(), ev.method) == methods.end()) methods.push_back(ev.method);
  if (methods.empty())
    for (const auto& ev : evidence)
      if (std::find(methods.begin(), methods.end(), ev.method) == methods.end()) methods.push_back(ev.method);
  return fmt::format("emulated: {} (found by {}; the fingerprint's emulation.evidence says what each saw): time is the "
                     "translator's, not a core's",
                     emulator, fmt::join(methods, ", "));
}

std::string Emulation::row_label() const {
  if (!emulated) return "";
  std::vector<std::string> methods;
  for (const auto& ev : evidence)
    if (std::find(methods.begin(), methods.end(), ev.method) == methods.end()) methods.push_back(ev.method);
  return fmt::format("{} ({})", emulator, fmt::join(methods, ", "));
}

nlohmann::json Emulation::to_json() const {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : evidence) ev.push_back({{"method", e.method}, {"detail", e.detail}, {"decisive", e.decisive}});
  return {{"emulated", emulated}, {"emulator", emulator}, {"reason", reason()}, {"evidence", ev}};
}

const Emulation& this_process_emulation() {
  static const Emulation e = detect_emulation(EmulationView::of_this_process());
  return e;
}

}  // namespace dlab
