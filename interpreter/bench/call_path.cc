#include "call_path.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::bench {

namespace {

using Bytes = std::vector<uint8_t>;

void uleb(Bytes& b, uint64_t v) {
  do {
    uint8_t byte = v & 0x7F;
    v >>= 7;
    b.push_back(v ? (byte | 0x80) : byte);
  } while (v);
}
Bytes vec(const std::vector<Bytes>& items) {
  Bytes b;
  uleb(b, items.size());
  for (const auto& i : items) b.insert(b.end(), i.begin(), i.end());
  return b;
}
Bytes name(const std::string& s) {
  Bytes b;
  uleb(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
  return b;
}
Bytes section(uint8_t id, const Bytes& body) {
  Bytes b{id};
  uleb(b, body.size());
  b.insert(b.end(), body.begin(), body.end());
  return b;
}
Bytes body(const Bytes& locals, const Bytes& code) {
  Bytes inner = locals;
  inner.insert(inner.end(), code.begin(), code.end());
  inner.push_back(0x0B);
  Bytes b;
  uleb(b, inner.size());
  b.insert(b.end(), inner.begin(), inner.end());
  return b;
}
Bytes module(const std::vector<Bytes>& sections) {
  Bytes b{0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  for (const auto& s : sections) b.insert(b.end(), s.begin(), s.end());
  return b;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const auto& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}

constexpr uint8_t I32 = 0x7F;
const Bytes kUnit = {0x60, 0x00, 0x00};                                               // () -> ()
const Bytes kFour = {0x60, 0x04, I32, I32, I32, I32, 0x04, I32, I32, I32, I32};       // (i32 x4) -> (i32 x4)
const Bytes kOne = {0x60, 0x01, I32, 0x01, I32};                                      // (i32) -> (i32)

// (param n) locals acc, i: `for (i = 0; i < n; ++i) call` then acc; `call` keeps acc in local 1.
Bytes loop(const Bytes& call) {
  Bytes head = {0x02, 0x40, 0x03, 0x40, 0x20, 0x02, 0x20, 0x00, 0x4F, 0x0D, 0x01};  // block loop (i >= n) br_if 1
  Bytes tail = {0x20, 0x02, 0x41, 0x01, 0x6A, 0x21, 0x02, 0x0C, 0x00, 0x0B, 0x0B, 0x20, 0x01};
  return body({0x01, 0x02, I32}, cat({head, call, tail}));
}

}  // namespace

std::vector<uint8_t> call_peer_module() {
  return module({section(1, vec({kOne})), section(3, vec({{0x00}})), section(7, vec({cat({name("inc"), {0x00, 0x00}})})),
                 section(10, vec({body({0x00}, {0x20, 0x00, 0x41, 0x01, 0x6A})}))});
}

std::vector<uint8_t> call_path_module() {
  // Function indices: 0 env.host_nop, 1 env.peer_inc, 2 nop, 3 args4, 4 inc, 5.. the loops.
  Bytes imports = vec({cat({name("env"), name("host_nop"), {0x00, 0x00}}), cat({name("env"), name("peer_inc"), {0x00, 0x02}})});
  struct Loop {
    const char* name;
    Bytes call;
  };
  const std::vector<Loop> loops = {
      {"loop_empty", {}},                                                     // the loop alone
      {"loop_host", {0x10, 0x00}},                                            // call $host_nop
      {"loop_call", {0x20, 0x01, 0x10, 0x04, 0x21, 0x01}},                    // acc = inc(acc)
      {"loop_indirect", {0x20, 0x01, 0x41, 0x00, 0x11, 0x02, 0x00, 0x21, 0x01}},  // call_indirect (type 2) table 0 [0]
      {"loop_ref", {0x20, 0x01, 0xD2, 0x04, 0x14, 0x02, 0x21, 0x01}},         // call_ref (type 2) (ref.func $inc)
      {"loop_import", {0x20, 0x01, 0x10, 0x01, 0x21, 0x01}},                  // acc = peer.inc(acc)
  };
  std::vector<Bytes> funcs = {{0x00}, {0x01}, {0x02}};
  std::vector<Bytes> exports = {cat({name("nop"), {0x00, 0x02}}), cat({name("args4"), {0x00, 0x03}})};
  std::vector<Bytes> code = {body({0x00}, {}), body({0x00}, {0x20, 0x03, 0x20, 0x02, 0x20, 0x01, 0x20, 0x00}),
                             body({0x00}, {0x20, 0x00, 0x41, 0x01, 0x6A})};
  for (size_t i = 0; i < loops.size(); ++i) {
    funcs.push_back({0x02});
    exports.push_back(cat({name(loops[i].name), {0x00, static_cast<uint8_t>(5 + i)}}));
    code.push_back(loop(loops[i].call));
  }
  Bytes table = vec({{0x70, 0x00, 0x01}});                       // (table 1 funcref)
  Bytes elem = vec({{0x00, 0x41, 0x00, 0x0B, 0x01, 0x04}});      // (elem (i32.const 0) func $inc): also declares it for ref.func
  return module({section(1, vec({kUnit, kFour, kOne})), section(2, imports), section(3, vec(funcs)), section(4, table),
                 section(7, vec(exports)), section(9, elem), section(10, vec(code))});
}

namespace {

// One engine's runtime with the peer instance and the calls instance.
struct CallRig {
  std::unique_ptr<wasm::Runtime> rt;
  wasm::Instance* calls = nullptr;
  wasm::ExternMap env;
  wasm::FuncInst* fn(const std::string& export_name) const { return calls->exports.at(export_name).func; }
};

wasm::Module decoded(const Bytes& bytes) {
  return wasm::decode_valid_module(bytes);
}

std::unique_ptr<CallRig> make_rig(const BenchEngine& e, const wasm::Module& calls, const wasm::Module& peer) {
  auto r = std::make_unique<CallRig>();
  r->rt = bench_runtime(e.config);
  wasm::Instance& p = r->rt->instantiate(peer);
  wasm::ExternVal nop;
  nop.kind = wasm::ExternKind::kFunc;
  nop.func = r->rt->host_function({{}, {}}, [](wasm::HostCall&) {});
  r->env = {{"host_nop", nop}, {"peer_inc", p.exports.at("inc")}};
  r->rt->register_module("env", r->env);
  r->calls = &r->rt->instantiate(calls);
  return r;
}

uint32_t run_loop(const CallRig& r, const std::string& name, uint32_t n) {
  return static_cast<uint32_t>(r.rt->invoke(r.fn(name), {wasm::Value::i32(n)}).at(0).lo);
}

// Heap bytes in use (glibc's count of allocated bytes) and resident bytes of this process.
size_t heap_in_use() { return mallinfo2().uordblks; }
// Resident bytes of this process, or nothing when /proc/self/statm cannot be read (never a 0).
std::optional<size_t> resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return std::nullopt;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}
// Growth per item, signed: memory may also have been returned meanwhile.
double per_item(size_t before, size_t after, int items) {
  return (static_cast<double>(after) - static_cast<double>(before)) / items;
}

}  // namespace

namespace {

// The kinds of call, each as a group of its own: `make(rig, n)` gives a closure making n of them.
struct Group {
  std::string kind, unit, what;
  std::function<std::function<void()>(CallRig&, uint32_t n)> make;
};

std::vector<Group> call_groups(const wasm::Module& calls) {
  std::vector<Group> groups;
  auto loop_group = [&](const char* kind, const char* export_name, const char* what) {
    groups.push_back({kind, "call", what, [export_name](CallRig& r, uint32_t n) {
                        wasm::FuncInst* f = r.fn(export_name);
                        wasm::Runtime* rt = r.rt.get();
                        return std::function<void()>([rt, f, n] { rt->invoke(f, {wasm::Value::i32(n)}); });
                      }});
  };
  groups.push_back({"host_to_wasm_nop", "call", "Runtime::invoke of an export that does nothing (arguments and results as vectors)",
                    [](CallRig& r, uint32_t n) {
                      wasm::FuncInst* f = r.fn("nop");
                      wasm::Runtime* rt = r.rt.get();
                      return std::function<void()>([rt, f, n] {
                        for (uint32_t i = 0; i < n; ++i) rt->invoke(f, {});
                      });
                    }});
  groups.push_back({"host_to_wasm_i32x4", "call", "Runtime::invoke with four i32 arguments and four i32 results",
                    [](CallRig& r, uint32_t n) {
                      wasm::FuncInst* f = r.fn("args4");
                      wasm::Runtime* rt = r.rt.get();
                      return std::function<void()>([rt, f, n] {
                        const std::vector<wasm::Value> args = {wasm::Value::i32(1), wasm::Value::i32(2), wasm::Value::i32(3),
                                                               wasm::Value::i32(4)};
                        for (uint32_t i = 0; i < n; ++i) rt->invoke(f, args);
                      });
                    }});
  loop_group("loop_empty", "loop_empty", "the counting loop alone (what the loops below add their call to)");
  loop_group("wasm_to_host", "loop_host", "a wasm loop calling an imported host function that does nothing");
  loop_group("wasm_call", "loop_call", "a wasm loop calling a one-line wasm function (call and return)");
  loop_group("call_indirect", "loop_indirect", "the same through call_indirect (table bounds, null and type checks)");
  loop_group("call_ref", "loop_ref", "the same through call_ref of a typed function reference");
  loop_group("import_call", "loop_import", "the same into a function imported from another instance (instance switch)");
  groups.push_back({"instantiate", "instance", "instantiating the calls module (decoded once; imports registered)",
                    [&calls](CallRig& r, uint32_t n) {
                      wasm::Runtime* rt = r.rt.get();
                      return std::function<void()>([rt, &calls, n] {
                        for (uint32_t i = 0; i < n; ++i) rt->instantiate(calls);
                      });
                    }});
  return groups;
}

// Calls per timed run: enough that one run lasts well over the TSC read's cost (about a millisecond).
uint32_t timed_count(const Group& g, bool quick) {
  if (g.kind == "instantiate") return quick ? 20 : 50;
  if (g.kind.rfind("host_to_wasm", 0) == 0) return quick ? 5'000 : 20'000;
  return quick ? 50'000 : 200'000;
}

}  // namespace

std::vector<std::string> call_path_kinds() {
  std::vector<std::string> out;
  for (const auto& g : call_groups(wasm::Module{})) out.push_back(g.kind);
  return out;
}

void run_call_path_child(const BenchEngine& e, const std::string& kind, uint32_t repetitions) {
  const wasm::Module calls = decoded(call_path_module()), peer = decoded(call_peer_module());
  auto rig = make_rig(e, calls, peer);
  for (const auto& g : call_groups(calls))
    if (g.kind == kind) {
      g.make(*rig, repetitions)();
      return;
    }
  throw std::invalid_argument("no kind of call named " + kind);
}

void run_call_path(const std::vector<BenchEngine>& engines, const RunProtocol& protocol, bool quick,
                   const std::optional<RunDirectory>& dir, const std::string& experiment) {
  const wasm::Module calls = decoded(call_path_module()), peer = decoded(call_peer_module());
  std::vector<std::unique_ptr<CallRig>> rigs;
  for (const auto& e : engines) rigs.push_back(make_rig(e, calls, peer));
  // Every loop must make its n calls: n back from each (loop_host and loop_empty: 0), in every engine.
  for (size_t i = 0; i < rigs.size(); ++i)
    for (const char* l : {"loop_empty", "loop_host", "loop_call", "loop_indirect", "loop_ref", "loop_import"}) {
      uint32_t want = std::string(l) == "loop_host" || std::string(l) == "loop_empty" ? 0 : 1000;
      if (uint32_t got = run_loop(*rigs[i], l, 1000); got != want)
        throw std::runtime_error(fmt::format("call path: {}(1000) returned {} in {}, not {}", l, got, engines[i].name, want));
    }

  const std::vector<Group> groups = call_groups(calls);
  const MachineFingerprint& machine = cli::this_machine();
  BackendSet backends = BackendSet::for_this_machine();
  CounterPlan counters = plan_counters(MetricCatalog::builtin(), backends, this_host_cpu());
  Meter meter(counters, backends);
  ExperimentTables all;
  nlohmann::json notes = nlohmann::json::array();
  RunResult last;
  const std::string run_id = dir ? dir->run_id() : "unsaved";
  fmt::print(stderr, "[wasm bench --calls] {} kinds of call x {} engines, {} (+{} warm-up), interleaved per kind\n",
             groups.size(), engines.size(), protocol.rounds_text(), protocol.warmup_rounds);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    const uint32_t count = timed_count(g, quick);
    std::vector<MeasuredCase> measured;
    for (size_t i = 0; i < engines.size(); ++i)
      measured.push_back({fmt::format("{}/{}", g.kind, engines[i].name), g.make(*rigs[i], count), static_cast<double>(count), g.unit,
                          engine_params(engines[i].config,
                                        {{"call", g.kind}, {"calls", std::to_string(count)}, {"module", "generated call path"}}),
                          engines[i].baseline.empty() ? std::string() : fmt::format("{}/{}", g.kind, engines[i].baseline)});
    fmt::print(stderr, "[wasm bench --calls] {}/{} {}\n", gi + 1, groups.size(), g.kind);
    last = run_protocol(protocol, meter, measured, nullptr);
    auto t = experiment_tables(run_id, experiment, last, measured, machine);
    for (size_t r = 0; r < t.summary.size(); ++r)
      if (t.summary.at(r, "metric") == "tsc_ticks" && !t.summary.at(r, "median").empty())
        fmt::print("{:<28} {:>12.4g} ticks/{}\n", t.summary.at(r, "case"), std::stod(t.summary.at(r, "median")), g.unit);
    all.summary.append(t.summary);
    all.samples.append(t.samples);
    notes.push_back({{"call", g.kind}, {"what", g.what}, {"baseline", measured.front().name}, {"calls_per_run", count}});
  }

  // What one instance holds beyond its module: heap bytes in use and resident bytes, grown over
  // many instantiations in a fresh runtime, less what copying the decoded module costs (each
  // instance keeps a copy of it). Measured, single values per engine: recorded in the sidecar.
  nlohmann::json memory = nlohmann::json::array();
  constexpr int kInstances = 500;
  for (size_t ei = 0; ei < engines.size(); ++ei) {
    const BenchEngine& e = engines[ei];
    auto rig = make_rig(e, calls, peer);
    size_t heap0 = heap_in_use();
    std::optional<size_t> rss0 = resident_bytes();
    for (int i = 0; i < kInstances; ++i) rig->rt->instantiate(calls);
    size_t heap1 = heap_in_use();
    std::optional<size_t> rss1 = resident_bytes();
    std::vector<wasm::Module> copies;
    size_t copy0 = heap_in_use();
    for (int i = 0; i < kInstances; ++i) copies.push_back(calls);
    size_t copy1 = heap_in_use();
    double module_bytes = per_item(copy0, copy1, kInstances);
    double heap = per_item(heap0, heap1, kInstances) - module_bytes;
    // Resident pages only grow for the first engine: later ones reuse the pages the previous
    // engines' runtimes freed, so their growth says nothing about an instance; left empty.
    std::string why_no_resident = ei != 0            ? "pages freed by the previous engines' runtimes are reused"
                                  : !(rss0 && rss1) ? "/proc/self/statm could not be read"
                                                    : "";
    nlohmann::json resident = nullptr;
    if (why_no_resident.empty()) resident = per_item(*rss0, *rss1, kInstances);
    fmt::print("instance/{:<19} {:>12.0f} heap bytes beyond its module ({:.0f} for the module's copy), {} resident bytes\n", e.name,
               heap, module_bytes, why_no_resident.empty() ? fmt::format("{:.0f}", resident.get<double>()) : "(" + why_no_resident + ")");
    memory.push_back({{"engine", e.name}, {"instances", kInstances}, {"heap_bytes_per_instance", heap},
                      {"module_copy_bytes", module_bytes}, {"resident_bytes_per_instance", resident},
                      {"resident_unavailable_reason", why_no_resident},
                      {"how", "glibc mallinfo2 uordblks and /proc/self/statm resident pages, before and after"}});
  }
  if (!dir) return;
  auto sidecar = sidecar_json(run_id, machine, &last, {"summary", "samples"});
  sidecar["calls"] = notes;
  sidecar["instance_memory"] = memory;
  write_experiment(*dir, experiment, all, sidecar);
  fmt::print(stderr, "wrote {}/{}.summary.csv\n", dir->path().string(), experiment);
}

}  // namespace dlab::bench
