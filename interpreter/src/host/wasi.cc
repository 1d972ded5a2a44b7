#include "dispatchlab/interpreter/wasi.h"

#include <sys/random.h>
#include <time.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "host/wasi_calls.h"

namespace dlab::wasm {

using namespace wasi_impl;

namespace {

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

// clock_res_get / clock_time_get: a host clock reading in nanoseconds written to guest memory, or
// under a fixed-step clock the next step (time) / the step (resolution).
void clock_call(HostCall& hc, const WasiOptions& o, uint32_t id, uint32_t out, int (*read)(clockid_t, timespec*)) {
  Guest g{hc.memory};
  clockid_t c;
  if (!host_clock(id, c)) return set(hc, kInval);
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
  if (read(c, &ts) != 0) return set(hc, errno_from_host(errno));
  g.put_u64(out, static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec));
  set(hc, kSuccess);
}

void random_get(HostCall& hc, WasiState&, Abi) {
  Guest g{hc.memory};
  uint32_t buf = arg32(hc, 0), len = arg32(hc, 1);
  if (!g.ok(buf, len)) return set(hc, kFault);
  for (uint32_t done = 0; done < len;) {
    ssize_t n = getrandom(g.at(buf + done), len - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return set(hc, kNosys);
    done += static_cast<uint32_t>(n);
  }
  set(hc, kSuccess);
}

const CallTable& implementations() {
  static const CallTable impls = [] {
    CallTable t;
    t["args_get"] = {"ii:i", [](HostCall& hc, WasiState& s, Abi) { set(hc, write_strings({hc.memory}, s.options.args, arg32(hc, 0), arg32(hc, 1))); }};
    t["args_sizes_get"] = {"ii:i", [](HostCall& hc, WasiState& s, Abi) { set(hc, write_sizes({hc.memory}, s.options.args, arg32(hc, 0), arg32(hc, 1))); }};
    t["environ_get"] = {"ii:i", [](HostCall& hc, WasiState& s, Abi) { set(hc, write_strings({hc.memory}, s.options.env, arg32(hc, 0), arg32(hc, 1))); }};
    t["environ_sizes_get"] = {"ii:i", [](HostCall& hc, WasiState& s, Abi) { set(hc, write_sizes({hc.memory}, s.options.env, arg32(hc, 0), arg32(hc, 1))); }};
    t["clock_res_get"] = {"ii:i", [](HostCall& hc, WasiState& s, Abi) { clock_call(hc, s.options, arg32(hc, 0), arg32(hc, 1), clock_getres); }};
    // slot 1: the requested precision, which the host clocks ignore
    t["clock_time_get"] = {"ili:i", [](HostCall& hc, WasiState& s, Abi) { clock_call(hc, s.options, arg32(hc, 0), arg32(hc, 2), clock_gettime); }};
    t["random_get"] = {"ii:i", random_get};
    t["proc_exit"] = {"i:", [](HostCall& hc, WasiState&, Abi) { hc.exit_code = static_cast<int>(arg32(hc, 0)); }};
    add_fd_calls(t);
    add_path_calls(t);
    add_poll_calls(t);
    return t;
  }();
  return impls;
}

std::string signature_of(const FuncType& t) {
  auto letter = [](ValType v) { return v == ValType::kI32 ? 'i' : v == ValType::kI64 ? 'l' : '?'; };
  std::string s;
  for (auto p : t.params) s += letter(p);
  s += ':';
  for (auto r : t.results) s += letter(r);
  return s;
}

}  // namespace

void register_wasi(Runtime& rt, const Module& module, const WasiOptions& options) {
  auto state = std::make_shared<WasiState>(options);
  bool populated = false;
  for (const char* name : {kWasiModule, kWasiUnstableModule}) {
    const Abi abi = std::string_view(name) == kWasiModule ? Abi::kPreview1 : Abi::kUnstable;
    ExternMap exports;
    for (const auto& im : module.imports) {
      if (im.module != name || im.kind != ExternKind::kFunc || im.func_type >= module.types.size()) continue;
      if (!populated) {
        populate(*state);  // fds 0-2 and the preopens: only for a module that imports WASI
        populated = true;
      }
      const FuncType& type = module.types[im.func_type];
      ExternVal v;
      v.kind = ExternKind::kFunc;
      auto it = implementations().find(im.name);
      if (it != implementations().end()) {
        if (signature_of(type) != it->second.signature)
          throw LinkError(fmt::format("incompatible import type for {}.{}: WASI preview1 declares it as {}, the module as {}", name,
                                      im.name, it->second.signature, signature_of(type)));
        Impl impl = it->second.impl;
        v.func = rt.host_function(type, [impl, state, abi](HostCall& hc) { impl(hc, *state, abi); });
      } else {
        // Not a WASI function: links, and answers ENOSYS when called (a trap if it returns no errno).
        std::string fn = im.name;
        bool returns_errno = type.results.size() == 1 && type.results[0] == ValType::kI32;
        v.func = rt.host_function(type, [fn, returns_errno, state](HostCall& hc) {
          if (state->warned.insert(fn).second)
            fmt::print(state->options.err, "dlab wasm: WASI function {} is not supported (returns ENOSYS)\n", fn);
          if (returns_errno) hc.slots[0] = kNosys;
          else hc.trap = "unsupported WASI function";
        });
      }
      exports[im.name] = v;
    }
    if (abi == Abi::kPreview1 || !exports.empty()) rt.register_module(name, std::move(exports));
  }
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
