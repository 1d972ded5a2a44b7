#include "dispatchlab/interpreter/wasi.h"

#include <sys/random.h>
#include <time.h>

#include <cerrno>
#include <charconv>
#include <stdexcept>
#include <cstring>
#include <memory>
#include <set>

#include <fmt/format.h>

namespace dlab::wasm {

namespace {

// preview1 errno values
constexpr uint32_t kSuccess = 0, kBadf = 8, kFault = 21, kInval = 28, kIo = 29, kNospc = 51, kNosys = 52, kPipe = 64, kSpipe = 70;

// The host's errno of a failed write, as WASI preview1's errno.
uint32_t wasi_errno_of(int err) {
  switch (err) {
    case ENOSPC: return kNospc;
    case EPIPE: return kPipe;
    case EBADF: return kBadf;
    default: return kIo;
  }
}

// Guest memory access with the bounds check every host function needs.
struct Guest {
  MemoryInst* mem;
  bool ok(uint64_t addr, uint64_t len) const { return mem && addr + len <= mem->bytes; }
  uint8_t* at(uint64_t addr) const { return mem->data + addr; }
  uint32_t u32(uint64_t addr) const {
    uint32_t v;
    std::memcpy(&v, at(addr), 4);
    return v;
  }
  void put_u32(uint64_t addr, uint32_t v) const { std::memcpy(at(addr), &v, 4); }
  void put_u64(uint64_t addr, uint64_t v) const { std::memcpy(at(addr), &v, 8); }
};

uint32_t arg32(const HostCall& hc, int i) { return static_cast<uint32_t>(hc.slots[i]); }

// args_get / environ_get: pointers into one buffer of NUL-terminated strings.
uint32_t write_strings(const Guest& g, const std::vector<std::string>& strs, uint32_t ptrs, uint32_t buf) {
  uint64_t need = 0;
  for (const auto& s : strs) need += s.size() + 1;
  if (!g.ok(ptrs, 4ull * strs.size()) || !g.ok(buf, need)) return kFault;
  uint64_t at = buf;
  for (size_t i = 0; i < strs.size(); ++i) {
    g.put_u32(ptrs + 4 * i, static_cast<uint32_t>(at));
    std::memcpy(g.at(at), strs[i].c_str(), strs[i].size() + 1);
    at += strs[i].size() + 1;
  }
  return kSuccess;
}

uint32_t write_sizes(const Guest& g, const std::vector<std::string>& strs, uint32_t count_ptr, uint32_t size_ptr) {
  if (!g.ok(count_ptr, 4) || !g.ok(size_ptr, 4)) return kFault;
  uint64_t bytes = 0;
  for (const auto& s : strs) bytes += s.size() + 1;
  g.put_u32(count_ptr, static_cast<uint32_t>(strs.size()));
  g.put_u32(size_ptr, static_cast<uint32_t>(bytes));
  return kSuccess;
}

clockid_t host_clock(uint32_t id) {
  switch (id) {
    case 0: return CLOCK_REALTIME;
    case 1: return CLOCK_MONOTONIC;
    case 2: return CLOCK_PROCESS_CPUTIME_ID;
    default: return CLOCK_THREAD_CPUTIME_ID;
  }
}

void set(HostCall& hc, uint32_t err) { hc.slots[0] = err; }

// clock_res_get / clock_time_get: a host clock reading in nanoseconds written to guest memory, or
// under a fixed-step clock the next step (time) / the step (resolution).
void clock_call(HostCall& hc, const WasiOptions& o, uint32_t id, uint32_t out, int (*read)(clockid_t, timespec*)) {
  Guest g{hc.memory};
  if (id > 3) return set(hc, kInval);
  if (!g.ok(out, 8)) return set(hc, kFault);
  if (o.fixed_clock_step_ns) {
    if (read != clock_getres) {
      // The clock would wrap past 2^64 ns (about 584 years of steps) and read earlier than before:
      // a monotonic clock never does, so the run stops saying why instead.
      if (o.fixed_clock_now_ns > UINT64_MAX - o.fixed_clock_step_ns)
        throw Trap(fmt::format("the fixed clock (--clock fixed:{}) would pass 2^64 ns at this read: give a smaller step", o.fixed_clock_step_ns));
      o.fixed_clock_now_ns += o.fixed_clock_step_ns;
    }
    g.put_u64(out, read == clock_getres ? o.fixed_clock_step_ns : o.fixed_clock_now_ns);
    return set(hc, kSuccess);
  }
  timespec ts{};
  read(host_clock(id), &ts);
  g.put_u64(out, static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec));
  set(hc, kSuccess);
}

using Impl = void (*)(HostCall&, const WasiOptions&);
struct Entry {
  const char* signature;  // preview1's: "ii:i" = (i32, i32) -> i32 errno; l = i64
  Impl impl;
};

std::string signature_of(const FuncType& t) {
  auto letter = [](ValType v) { return v == ValType::kI32 ? 'i' : v == ValType::kI64 ? 'l' : '?'; };
  std::string s;
  for (auto p : t.params) s += letter(p);
  s += ':';
  for (auto r : t.results) s += letter(r);
  return s;
}

const std::map<std::string, Entry>& implementations() {
  static const std::map<std::string, Entry> impls = {
      {"args_get", Entry{"ii:i", [](HostCall& hc, const WasiOptions& o) { set(hc, write_strings({hc.memory}, o.args, arg32(hc, 0), arg32(hc, 1))); }}},
      {"args_sizes_get", Entry{"ii:i", [](HostCall& hc, const WasiOptions& o) { set(hc, write_sizes({hc.memory}, o.args, arg32(hc, 0), arg32(hc, 1))); }}},
      {"environ_get", Entry{"ii:i", [](HostCall& hc, const WasiOptions& o) { set(hc, write_strings({hc.memory}, o.env, arg32(hc, 0), arg32(hc, 1))); }}},
      {"environ_sizes_get", Entry{"ii:i", [](HostCall& hc, const WasiOptions& o) { set(hc, write_sizes({hc.memory}, o.env, arg32(hc, 0), arg32(hc, 1))); }}},
      {"clock_res_get", Entry{"ii:i", [](HostCall& hc, const WasiOptions& o) { clock_call(hc, o, arg32(hc, 0), arg32(hc, 1), clock_getres); }}},
      // slot 1: the requested precision, which the host clocks ignore
      {"clock_time_get", Entry{"ili:i", [](HostCall& hc, const WasiOptions& o) { clock_call(hc, o, arg32(hc, 0), arg32(hc, 2), clock_gettime); }}},
      {"random_get", Entry{"ii:i",
       [](HostCall& hc, const WasiOptions&) {
         Guest g{hc.memory};
         uint32_t buf = arg32(hc, 0), len = arg32(hc, 1);
         if (!g.ok(buf, len)) return set(hc, kFault);
         for (uint32_t done = 0; done < len;) {
           ssize_t n = getrandom(g.at(buf + done), len - done, 0);
           if (n <= 0) return set(hc, kNosys);
           done += static_cast<uint32_t>(n);
         }
         set(hc, kSuccess);
       }}},
      {"fd_write", Entry{"iiii:i",
       [](HostCall& hc, const WasiOptions& o) {
         Guest g{hc.memory};
         uint32_t fd = arg32(hc, 0), iovs = arg32(hc, 1), n = arg32(hc, 2), written_ptr = arg32(hc, 3);
         std::FILE* f = fd == 1 ? o.out : fd == 2 ? o.err : nullptr;
         if (!f) return set(hc, kBadf);
         if (!g.ok(iovs, 8ull * n) || !g.ok(written_ptr, 4)) return set(hc, kFault);
         // Every buffer is checked before anything is written, as writev(2) does: a bad one is
         // EFAULT with nothing written, not a half-done write.
         for (uint32_t i = 0; i < n; ++i)
           if (!g.ok(g.u32(iovs + 8 * i), g.u32(iovs + 8 * i + 4))) {
             g.put_u32(written_ptr, 0);
             return set(hc, kFault);
           }
         uint64_t total = 0;
         for (uint32_t i = 0; i < n; ++i) {
           uint32_t buf = g.u32(iovs + 8 * i), len = g.u32(iovs + 8 * i + 4);
           total += std::fwrite(g.at(buf), 1, len, f);
         }
         // The guest is told what reached the host: a full disk or a closed pipe is its errno.
         errno = 0;
         if (std::fflush(f) != 0 || std::ferror(f)) {
           int err = errno;
           std::clearerr(f);
           g.put_u32(written_ptr, static_cast<uint32_t>(total));
           return set(hc, wasi_errno_of(err));
         }
         g.put_u32(written_ptr, static_cast<uint32_t>(total));
         set(hc, kSuccess);
       }}},
      {"fd_fdstat_get", Entry{"ii:i",
       [](HostCall& hc, const WasiOptions&) {
         Guest g{hc.memory};
         uint32_t fd = arg32(hc, 0), out = arg32(hc, 1);
         if (fd > 2) return set(hc, kBadf);
         if (!g.ok(out, 24)) return set(hc, kFault);
         std::memset(g.at(out), 0, 24);
         g.at(out)[0] = 2;  // character device; no seek/tell rights, so wasi-libc treats it as a tty
         g.put_u64(out + 8, fd == 0 ? (1u << 1) : (1u << 6));  // fd_read / fd_write
         set(hc, kSuccess);
       }}},
      {"fd_close", Entry{"i:i", [](HostCall& hc, const WasiOptions&) { set(hc, arg32(hc, 0) <= 2 ? kSuccess : kBadf); }}},
      {"fd_seek", Entry{"ilii:i", [](HostCall& hc, const WasiOptions&) { set(hc, arg32(hc, 0) <= 2 ? kSpipe : kBadf); }}},
      {"fd_prestat_get", Entry{"ii:i", [](HostCall& hc, const WasiOptions&) { set(hc, kBadf); }}},
      {"fd_prestat_dir_name", Entry{"iii:i", [](HostCall& hc, const WasiOptions&) { set(hc, kBadf); }}},
      {"sched_yield", Entry{":i", [](HostCall& hc, const WasiOptions&) { set(hc, kSuccess); }}},
      {"proc_exit", Entry{"i:", [](HostCall& hc, const WasiOptions&) { hc.exit_code = static_cast<int>(arg32(hc, 0)); }}},
  };
  return impls;
}

}  // namespace

void register_wasi(Runtime& rt, const Module& module, const WasiOptions& options) {
  ExternMap exports;
  auto warned = std::make_shared<std::set<std::string>>();
  for (const auto& im : module.imports) {
    if (im.module != kWasiModule || im.kind != ExternKind::kFunc || im.func_type >= module.types.size()) continue;
    const FuncType& type = module.types[im.func_type];
    ExternVal v;
    v.kind = ExternKind::kFunc;
    auto it = implementations().find(im.name);
    if (it != implementations().end()) {
      if (signature_of(type) != it->second.signature)
        throw LinkError(fmt::format("incompatible import type for {}.{}: WASI preview1 declares it as {}, the module as {}", kWasiModule,
                                    im.name, it->second.signature, signature_of(type)));
      Impl impl = it->second.impl;
      v.func = rt.host_function(type, [impl, &options](HostCall& hc) { impl(hc, options); });
    } else {
      // Not in the subset: links, and answers ENOSYS when called (a trap if it returns no errno).
      std::string name = im.name;
      bool returns_errno = type.results.size() == 1 && type.results[0] == ValType::kI32;
      v.func = rt.host_function(type, [name, returns_errno, warned, &options](HostCall& hc) {
        if (warned->insert(name).second)
          fmt::print(options.err, "dlab wasm: WASI function {} is not supported (returns ENOSYS)\n", name);
        if (returns_errno) hc.slots[0] = kNosys;
        else hc.trap = "unsupported WASI function";
      });
    }
    exports[im.name] = v;
  }
  rt.register_module(kWasiModule, std::move(exports));
}

uint64_t parse_clock(const std::string& text) {
  if (text == "real") return 0;
  const std::string prefix = "fixed:";
  if (text.rfind(prefix, 0) != 0) throw std::invalid_argument("'" + text + "' is not real or fixed:NS");
  std::string ns = text.substr(prefix.size());
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(ns.data(), ns.data() + ns.size(), v);
  if (ns.empty() || ec != std::errc() || end != ns.data() + ns.size() || v < 1 || v > 1'000'000'000'000ull)
    throw std::invalid_argument("'" + ns + "' is not a step in nanoseconds (1..1000000000000)");
  return v;
}

std::string clock_name(uint64_t fixed_step_ns) { return fixed_step_ns ? "fixed:" + std::to_string(fixed_step_ns) : "real"; }

}  // namespace dlab::wasm
