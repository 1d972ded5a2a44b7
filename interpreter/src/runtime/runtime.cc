#include "dispatchlab/interpreter/runtime.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "decode/binary_reader.h"
#include "gc/gc_heap.h"
#include "gc/gc_ops.h"
#include "runtime/guard_pages.h"
#include "lower/lowering.h"
#include "engines/machine.h"
#include "engines/ops.h"

namespace dlab::wasm {

std::atomic<uint64_t> g_epoch{0};

namespace {
// The host timer of the deadline engines: one thread per process, adding one to g_epoch every
// Runtime::kEpochTickNs while any runtime has set a deadline (wasmtime leaves this to the
// embedder; here the runtime owns it, so `dlab wasm run --deadline` needs nothing else).
class EpochTicker {
 public:
  void acquire() {
    std::lock_guard lock(mu_);
    if (users_++ == 0) {
      stop_ = false;
      thread_ = std::thread([this] { tick(); });
    }
  }
  void release() {
    std::unique_lock lock(mu_);
    if (--users_ > 0) return;
    stop_ = true;
    lock.unlock();
    cv_.notify_all();
    thread_.join();
  }
  ~EpochTicker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void tick() {
    std::unique_lock lock(mu_);
    auto next = std::chrono::steady_clock::now();
    while (!stop_) {
      next += std::chrono::nanoseconds(Runtime::kEpochTickNs);
      if (cv_.wait_until(lock, next, [this] { return stop_; })) break;
      g_epoch.fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  int users_ = 0;
  bool stop_ = false;
};
EpochTicker& epoch_ticker() {
  static EpochTicker ticker;
  return ticker;
}
}  // namespace

const char* dispatch_name(Dispatch d) {
  switch (d) {
#define DISPATCH(name, enumerator, file) \
  case Dispatch::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  }
  return "?";
}

std::optional<Dispatch> parse_dispatch(std::string_view name) {
#define DISPATCH(n, enumerator, file) \
  if (name == #n) return Dispatch::enumerator;
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  return std::nullopt;
}

std::vector<Dispatch> dispatch_modes() {
  std::vector<Dispatch> out;
#define DISPATCH(name, enumerator, file) \
  if (Dispatch::enumerator != Dispatch::kTailPreserveNone || tail_pn_op_words()) out.push_back(Dispatch::enumerator);
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  return out;
}

const char* placement_name(Placement p) {
  switch (p) {
#define PLACEMENT(name, enumerator, sp, top) \
  case Placement::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  }
  return "?";
}

std::optional<Placement> parse_placement(std::string_view name) {
  for (Placement p : placements())
    if (name == placement_name(p)) return p;
  return std::nullopt;
}

std::vector<Placement> placements() {
  return {
#define PLACEMENT(name, enumerator, sp, top) Placement::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  };
}

const char* budget_name(Budget b) {
  switch (b) {
#define BUDGET(name, enumerator, counter) \
  case Budget::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
  }
  return "?";
}

std::optional<Budget> parse_budget(std::string_view name) {
  for (Budget b : budgets())
    if (name == budget_name(b)) return b;
  return std::nullopt;
}

std::vector<Budget> budgets() {
  return {
#define BUDGET(name, enumerator, counter) Budget::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
  };
}

const char* bounds_name(Bounds b) {
  switch (b) {
#define BOUNDS(name, enumerator, how) \
  case Bounds::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef BOUNDS
  }
  return "?";
}

std::optional<Bounds> parse_bounds(std::string_view name) {
  for (Bounds b : bounds_list())
    if (name == bounds_name(b)) return b;
  return std::nullopt;
}

std::vector<Bounds> bounds_list() {
  return {
#define BOUNDS(name, enumerator, how) Bounds::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef BOUNDS
  };
}

std::string guard_pages_unavailable() { return guard_pages::unavailable(); }

Lowering Lowering::none() {
  Lowering l;
#define TECHNIQUE(name, help) l.name = false;
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  return l;
}

std::string lowering_name(Lowering l) {
  std::string out;
#define TECHNIQUE(name, help) \
  if (l.name) out += (out.empty() ? "" : "+") + std::string(#name);
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  return out.empty() ? "plain" : out;
}

std::optional<Lowering> parse_lowering(std::string_view name) {
  for (Lowering l : lowerings())
    if (name == lowering_name(l)) return l;
  return std::nullopt;
}

std::vector<Lowering> lowerings() {
  // Every subset, by the bits of a counter: technique k is bit k, so "plain" comes first, then
  // each technique alone in the registry's order, then the pairs and so on up to every technique.
  struct Row {
    bool Lowering::*field;
  };
  static const Row rows[] = {
#define TECHNIQUE(name, help) {&Lowering::name},
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  };
  constexpr size_t n = sizeof rows / sizeof rows[0];
  std::vector<Lowering> out;
  for (size_t count = 0; count <= n; ++count)
    for (unsigned bits = 0; bits < (1u << n); ++bits) {
      if (static_cast<size_t>(__builtin_popcount(bits)) != count) continue;
      Lowering l = Lowering::none();
      for (size_t k = 0; k < n; ++k) l.*rows[k].field = (bits >> k) & 1;
      out.push_back(l);
    }
  return out;
}

const char* ir_name(Ir ir) { return ir == Ir::kRegister ? "register" : "stack"; }

std::optional<Ir> parse_ir(std::string_view name) {
  for (Ir ir : irs())
    if (name == ir_name(ir)) return ir;
  return std::nullopt;
}

std::vector<Ir> irs() { return {Ir::kStack, Ir::kRegister}; }

std::string ir_unavailable(Ir ir, Placement p) {
  if (ir == Ir::kStack || p == Placement::kSp) return "";
  return fmt::format("the register IR is built for the sp placement only, not {}: its instructions name frame slots and never "
                     "move the operand-stack pointer or a cached top, so another placement would differ only in the "
                     "stack-form instructions between them (use --placement sp, or --ir stack)",
                     placement_name(p));
}

std::string lowering_help() {
  std::string out = "the lowering's speed techniques: plain (none), ";
#define TECHNIQUE(name, help) out += std::string(#name) + " (" + help + "), ";
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  return out + "or a +-joined set of them in that order, e.g. " + lowering_name(Lowering{}) + " (every technique, the default)";
}

namespace {

// The engines of engines.def, as a table.
struct Engine {
  const char* name;
  Dispatch dispatch;
  Placement placement;
  Budget budget;
  Bounds bounds;
  const uint64_t* (*op_words)();
  void (*run)(DLW_HANDLER_PARAMS);
  bool (*register_ir)();
  std::string (*handler_signature)();
};
constexpr Engine kEngines[] = {
#define ENGINE(name, d, p, b, bounds) {#name, Dispatch::d, Placement::p, Budget::b, Bounds::bounds, &name##_op_words, &run_##name, &name##_register_ir, &name##_handler_signature},
#define NOT_GENERATED(d, p, why)
#include "dispatchlab/interpreter/engines.def"
#undef ENGINE
#undef NOT_GENERATED
};
struct Missing {
  Dispatch dispatch;
  Placement placement;
  const char* why;
};
constexpr Missing kNotGenerated[] = {
#define ENGINE(name, d, p, b, bounds)
#define NOT_GENERATED(d, p, why) {Dispatch::d, Placement::p, why},
#include "dispatchlab/interpreter/engines.def"
#undef ENGINE
#undef NOT_GENERATED
};

const Engine* find_engine(Dispatch d, Placement p, Budget b, Bounds bounds = Bounds::kCheck) {
  for (const auto& e : kEngines)
    if (e.dispatch == d && e.placement == p && e.budget == b && e.bounds == bounds) return &e;
  return nullptr;
}

}  // namespace

std::string engine_unavailable(Dispatch d, Placement p, Budget b, Bounds bounds) {
  for (const auto& n : kNotGenerated)
    if (n.dispatch == d && n.placement == p)
      return fmt::format("{} x {} is not built: {}", dispatch_name(d), placement_name(p), n.why);
  if (bounds == Bounds::kGuard) {
    if (std::string why = guard_pages::unavailable(); !why.empty()) return why;
    if (!find_engine(d, p, b, bounds)) {
      std::string rows;
      for (const auto& r : kEngines)
        if (r.bounds == bounds) rows += (rows.empty() ? "" : ", ") + std::string(r.name);
      return fmt::format("{} x {}{} with guard pages is not built (interpreter/include/dispatchlab/interpreter/engines.def has "
                         "the guard engines {}: each is one more compile of every handler)",
                         dispatch_name(d), placement_name(p), b == Budget::kNone ? "" : fmt::format(" and the {} budget", budget_name(b)),
                         rows.empty() ? "none" : rows);
    }
  }
  const Engine* e = find_engine(d, p, b, bounds);
  if (!e && b != Budget::kNone) {
    std::string rows;
    for (const auto& r : kEngines)
      if (r.budget == b) rows += (rows.empty() ? "" : ", ") + std::string(r.name);
    return fmt::format("{} x {} with the {} budget is not built (interpreter/include/dispatchlab/interpreter/engines.def has "
                       "{} budget engines {})",
                       dispatch_name(d), placement_name(p), budget_name(b), budget_name(b), rows.empty() ? "none" : rows);
  }
  if (!e) return fmt::format("{} x {} is not in interpreter/include/dispatchlab/interpreter/engines.def", dispatch_name(d), placement_name(p));
  if (!e->op_words()) {
    if (d == Dispatch::kGoto)
      return fmt::format("{} x {} is not built in this build: the computed-goto engines beyond sp take minutes each to compile, "
                         "so a default build leaves them out (configure with -DDLAB_ALL_ENGINES=ON)",
                         dispatch_name(d), placement_name(p));
    return fmt::format("dispatch mode {} needs clang's preserve_none (x86-64 or AArch64)", dispatch_name(d));
  }
  return "";
}

std::string ir_unavailable(Ir ir, Dispatch d, Placement p, Budget b, Bounds bounds) {
  if (std::string why = ir_unavailable(ir, p); !why.empty()) return why;
  const Engine* e = find_engine(d, p, b, bounds);
  if (ir == Ir::kStack || !e || e->register_ir()) return "";
  return fmt::format("the register IR's forms are not compiled into the {} engines of this build: in a one-function engine "
                     "(switch, goto) they multiply its compile time, so a default build leaves them out (configure with "
                     "-DDLAB_ALL_ENGINES=ON, or use --dispatch tail or tail_pn)",
                     dispatch_name(d));
}

std::vector<EngineConfig> engine_configs() {
  std::vector<EngineConfig> out;
  for (const auto& e : kEngines) out.push_back({e.dispatch, e.placement, e.budget, e.bounds, Lowering{}});
  return out;
}

std::string engine_name(Dispatch d, Placement p, Budget b, Bounds bounds) {
  const Engine* e = find_engine(d, p, b, bounds);
  return e ? e->name : "";
}

std::string handler_signature(Dispatch d, Placement p, Budget b) {
  // Read from the engine's own handler type (machine.h): bounds do not change it.
  for (const Engine& e : kEngines)
    if (e.dispatch == d && e.placement == p && e.budget == b) return e.handler_signature();
  return "";
}

// ---- memory -------------------------------------------------------------------------------------

MemoryInst::MemoryInst(uint32_t pages, std::optional<uint32_t> max_pages, bool guard) : max(max_pages) {
  bytes = static_cast<uint64_t>(pages) * kPage;
  if (guard) {
    data = guard_pages::reserve(bytes);
    if (!data)
      throw Trap(fmt::format("cannot reserve {} GiB of address space for a guarded memory ({}; a limit such as ulimit -v?): "
                             "use --bounds check",
                             guard_pages::kReservation >> 30, std::strerror(errno)));
    guarded = true;
    return;
  }
  // calloc, not a vector: a large zeroed allocation maps untouched pages instead of writing them.
  data = static_cast<uint8_t*>(std::calloc(bytes ? bytes : 1, 1));
  if (!data) throw Trap("out of memory allocating linear memory");
}

MemoryInst::~MemoryInst() {
  if (guarded)
    guard_pages::release(data);
  else
    std::free(data);
}

int64_t MemoryInst::grow(uint32_t delta) {
  uint64_t old = pages();
  uint64_t limit = max ? *max : 65536;
  if (old + delta > limit) return -1;
  if (delta == 0) return static_cast<int64_t>(old);
  uint64_t new_bytes = (old + delta) * kPage;
  if (guarded) {
    // In place: the reservation has room for 65536 pages, and its pages past `bytes` were never
    // accessible, so they are still zero.
    if (!guard_pages::commit(data, bytes, new_bytes)) return -1;
    bytes = new_bytes;
    return static_cast<int64_t>(old);
  }
  auto* fresh = static_cast<uint8_t*>(std::calloc(new_bytes, 1));
  if (!fresh) return -1;
  std::memcpy(fresh, data, bytes);
  std::free(data);
  data = fresh;
  bytes = new_bytes;
  return static_cast<int64_t>(old);
}

ExternType ExternVal::type() const {
  ExternType t;
  t.kind = kind;
  switch (kind) {
    case ExternKind::kFunc:
      t.func = func->type;
      t.type_id = func->type_id;
      break;
    case ExternKind::kTable:
      t.table = table->type;
      t.table.limits.min = static_cast<uint32_t>(table->elements.size());
      break;
    case ExternKind::kMemory: t.memory = {memory->pages(), memory->max, memory->address64}; break;
    case ExternKind::kGlobal: t.global = global->type; break;
    case ExternKind::kTag:
      t.func = tag->type;
      t.type_id = tag->type_id;
      break;
  }
  return t;
}

// ---- runtime ------------------------------------------------------------------------------------

Runtime::Runtime(const EngineConfig& engine) : Runtime(engine.dispatch, engine.placement, engine.budget, engine.bounds) {
  lowering_ = engine.lowering;
}

Runtime::Runtime(Dispatch dispatch, Placement placement, Budget budget, Bounds bounds)
    : dispatch_(dispatch), placement_(placement), budget_(budget), bounds_(bounds), machine_(std::make_unique<Machine>()) {
  if (std::string why = engine_unavailable(dispatch, placement, budget, bounds); !why.empty()) throw std::invalid_argument(why);
  const Engine* e = find_engine(dispatch, placement, budget, bounds);
  op_words_ = e->op_words();
  run_ = e->run;
  Machine& m = *machine_;
  // Not value-initialised: the stack is written before it is read, and untouched pages stay free.
  // One slot more than the stack holds, below its base: the cached-top placements (sp_wt, sp_wb)
  // reload their top from sp[-1] after every pop, also when the stack has just become empty.
  m.stack.reset(new uint64_t[kStackSlots + 1]);
  m.stack[0] = 0;
  m.stack_end = m.stack.get() + 1 + kStackSlots;
  m.frames.reset(new CallFrame[kMaxCallDepth]);
  m.frames_end = m.frames.get() + kMaxCallDepth;
  m.catch_code = &catch_code_;
  m.types = &types_;
  heap_ = std::make_unique<GcHeap>();
  m.heap = heap_.get();
  heap_->mark_roots = [this](const uint64_t* sp) { mark_roots(sp); };
}

// The collector's roots (gc_heap.h): the operand stack in use, conservatively; the rest exactly.
void Runtime::mark_roots(const uint64_t* sp) {
  Machine& m = *machine_;
  const uint64_t* top = sp ? sp : m.suspended ? m.resume_sp : nullptr;
  if (top)
    for (const uint64_t* p = m.stack.get(); p < top; ++p) heap_->mark(*p);
  for (const auto& g : globals_)
    if (is_ref(g->type.type)) heap_->mark(g->lo);
  for (const auto& t : tables_)
    if (heap_top(ref_heap(t->type.element)) != kHeapFunc || ref_heap(t->type.element) >= kHeapTypeIndex)
      for (uint64_t e : t->elements) heap_->mark(e);
  for (const auto& inst : instances_)
    for (const auto& seg : inst->elems)
      for (uint64_t e : seg) heap_->mark(e);
  if (m.exception) heap_->mark(reinterpret_cast<uint64_t>(m.exception));
  for (uint64_t r : pinned_) heap_->mark(r);
}

void Runtime::set_heap_limit(uint64_t bytes) { heap_->set_limit(bytes); }
void Runtime::collect() {
  if (machine_->running) throw std::logic_error("Runtime::collect during an invocation (the collector runs at allocations then)");
  heap_->collect(nullptr);
}
GcStats Runtime::gc_stats() const { return heap_->stats(); }
void Runtime::pin(uint64_t r) { pinned_.insert(r); }
void Runtime::unpin(uint64_t r) {
  if (auto it = pinned_.find(r); it != pinned_.end()) pinned_.erase(it);
}

Runtime::~Runtime() {
  if (deadline_ticker_) epoch_ticker().release();
}

// A reference to a module type index becomes one to its canonical id (kHeapCanonical + id).
ValType Runtime::canonical_type(const Instance& inst, ValType t) { return canonical_valtype(t, inst.type_ids); }

uint32_t Runtime::type_id(const FuncType& t) { return types_.add_func(t); }

FuncInst* Runtime::host_function(uint32_t type_id, HostFunction fn) {
  FuncInst* f = host_function(FuncType(types_.type(type_id)), std::move(fn));
  f->type_id = type_id;
  return f;
}

TagInst* Runtime::tag(uint32_t type_id) { return new_tag(FuncType(types_.type(type_id)), type_id); }

FuncInst* Runtime::host_function(FuncType type, HostFunction fn) {
  auto f = std::make_unique<FuncInst>();
  f->type_id = type_id(type);
  f->type = std::move(type);
  f->host = std::move(fn);
  for (auto t : f->type.params) f->param_slots += slots_of(t);
  for (auto t : f->type.results) f->result_slots += slots_of(t);
  funcs_.push_back(std::move(f));
  return funcs_.back().get();
}

TableInst* Runtime::table(TableType type) {
  if (type.limits.min > kMaxTableElements)
    throw ImplementationLimit(fmt::format("a table of at least {} elements; this interpreter's limit is {}", type.limits.min,
                                          kMaxTableElements));
  auto t = std::make_unique<TableInst>();
  t->type = type;
  t->elements.assign(type.limits.min, 0);
  tables_.push_back(std::move(t));
  return tables_.back().get();
}

MemoryInst* Runtime::memory(Limits limits) {
  // Validation bounds a 32-bit memory to 65536 pages; a memory64 one may declare up to 2^48, of
  // which this interpreter grants at most 65536 (4 GiB): a larger minimum is an implementation
  // limit, a larger maximum is clamped (memory.grow past it returns -1, as the spec allows).
  if (limits.min > 65536)
    throw ImplementationLimit(fmt::format("a memory of at least {} pages; this interpreter's limit is 65536 (4 GiB)", limits.min));
  std::optional<uint32_t> max;
  if (limits.max) max = static_cast<uint32_t>(std::min<uint64_t>(*limits.max, 65536));
  // A guard engine's 32-bit memories are reservations; memory64 keeps its checks in every engine.
  bool guard = bounds_ == Bounds::kGuard && !limits.address64;
  memories_.push_back(std::make_unique<MemoryInst>(static_cast<uint32_t>(limits.min), max, guard));
  memories_.back()->address64 = limits.address64;
  return memories_.back().get();
}

GlobalInst* Runtime::global(GlobalType type, uint64_t lo, uint64_t hi) {
  auto g = std::make_unique<GlobalInst>();
  g->type = type;
  g->lo = lo;
  g->hi = hi;
  globals_.push_back(std::move(g));
  return globals_.back().get();
}

namespace {

// A validated constant expression, evaluated: the consts, global.get, ref.null / ref.func,
// extended-const's i32/i64 add, sub and mul, and GC's allocations, ref.i31 and the extern / any
// conversions, on a stack of slots (v128 two), until `end`. The allocations are the gc_op
// functions the lowering writes (gc_ops.h), on this stack, with collection off (instantiation).
std::pair<uint64_t, uint64_t> eval_const(Machine& m, const Instance& inst, const Expr& e) {
  BinaryReader r(e.bytes.data(), e.bytes.size());
  std::vector<uint64_t> slots;
  std::vector<uint8_t> widths;  // slots of each value
  auto push = [&](uint64_t lo) {
    slots.push_back(lo);
    widths.push_back(1);
  };
  auto binop = [&](auto f) {
    uint64_t b = slots.back();
    slots.pop_back();
    widths.pop_back();
    slots.back() = f(slots.back(), b);
  };
  auto gc = [&](GcOpFn fn, uint64_t a, uint64_t b, uint32_t values) {
    uint64_t ip[4] = {0, 0, a, b};
    for (uint32_t k = 0; k < values; ++k) widths.pop_back();  // the function pops their slots
    slots.resize(slots.size() + 2);  // room for the result
    uint64_t* sp = fn(&m, ip, slots.data() + slots.size() - 2);
    if (!sp) throw Trap(m.trap);
    slots.resize(static_cast<size_t>(sp - slots.data()));
    widths.push_back(1);
  };
  auto rtt = [&](uint32_t x) { return reinterpret_cast<uint64_t>(&inst.types->rtt(inst.type_ids.at(x))); };
  for (;;) {
    uint8_t op = r.u8();
    switch (op) {
      case 0x0B:
        if (widths.back() == 2) return {slots[slots.size() - 2], slots.back()};
        return {slots.back(), 0};
      case 0x41: push(static_cast<uint32_t>(r.s32())); break;
      case 0x42: push(static_cast<uint64_t>(r.s64())); break;
      case 0x43: {
        uint32_t b;
        std::memcpy(&b, r.bytes(4), 4);
        push(b);
        break;
      }
      case 0x44: {
        uint64_t b;
        std::memcpy(&b, r.bytes(8), 8);
        push(b);
        break;
      }
      case 0x23: {
        const GlobalInst* g = inst.globals.at(r.u32());
        push(g->lo);
        if (g->type.type == ValType::kV128) {
          slots.push_back(g->hi);
          widths.back() = 2;
        }
        break;
      }
      case 0xD0: r.s64(); push(0); break;  // the heap type (s33)
      case 0xD2: push(reinterpret_cast<uint64_t>(inst.funcs.at(r.u32()))); break;
      case 0xFD: {
        r.u32();
        uint64_t lo, hi;
        std::memcpy(&lo, r.bytes(8), 8);
        std::memcpy(&hi, r.bytes(8), 8);
        push(lo);
        slots.push_back(hi);
        widths.back() = 2;
        break;
      }
      case 0xFB: {
        uint32_t sub = r.u32();
        switch (sub) {
          case 0: {
            uint32_t x = r.u32();
            gc(&gc_struct_new, rtt(x), 0, static_cast<uint32_t>(inst.module.types.at(x).fields.size()));
            break;
          }
          case 1: gc(&gc_struct_new_default, rtt(r.u32()), 0, 0); break;
          case 6: gc(&gc_array_new, rtt(r.u32()), 0, 2); break;
          case 7: gc(&gc_array_new_default, rtt(r.u32()), 0, 1); break;
          case 8: {
            uint32_t x = r.u32(), n = r.u32();
            gc(&gc_array_new_fixed, rtt(x), n, n);
            break;
          }
          case 26: case 27: break;  // any.convert_extern, extern.convert_any: the same slot
          case 28: slots.back() = ref::i31(static_cast<uint32_t>(slots.back())); break;
          default: throw std::logic_error(fmt::format("constant expression opcode 0xfb {} (module not validated?)", sub));
        }
        break;
      }
      // i32 results stay zero-extended in their 64-bit lane, as every i32 does.
      case 0x6A: binop([](uint64_t a, uint64_t b) -> uint64_t { return static_cast<uint32_t>(a + b); }); break;
      case 0x6B: binop([](uint64_t a, uint64_t b) -> uint64_t { return static_cast<uint32_t>(a - b); }); break;
      case 0x6C: binop([](uint64_t a, uint64_t b) -> uint64_t { return static_cast<uint32_t>(a * b); }); break;
      case 0x7C: binop([](uint64_t a, uint64_t b) { return a + b; }); break;
      case 0x7D: binop([](uint64_t a, uint64_t b) { return a - b; }); break;
      case 0x7E: binop([](uint64_t a, uint64_t b) { return a * b; }); break;
      default: throw std::logic_error(fmt::format("constant expression opcode {:#04x} (module not validated?)", op));
    }
  }
}

}  // namespace

Instance& Runtime::instantiate(Module module, bool run_start) {
  // Owned by the runtime from the start: functions and tables of a failed instantiation may
  // still be referenced from imported tables (the spec keeps a failed start's effects).
  instances_.push_back(std::make_unique<Instance>());
  Instance& inst = *instances_.back();
  inst.module = std::move(module);
  const Module& m = inst.module;
  // Canonical type ids (types.h): equal recursive groups of two modules get the same ids. The
  // constant expressions below hold objects outside any root: no collection until the end.
  inst.type_ids = types_.add(m.types);
  inst.types = &types_;
  struct NoCollection {
    GcHeap& heap;
    ~NoCollection() { heap.allow_collect = true; }
  } no_collection{*heap_};
  heap_->allow_collect = false;

  // Imports, with the spec's matching rules on the provided objects' current types.
  for (const auto& im : m.imports) {
    auto mod = registry_.find(im.module);
    if (mod == registry_.end()) throw LinkError(fmt::format("unknown import {}.{} (no module named {})", im.module, im.name, im.module));
    auto it = mod->second.find(im.name);
    if (it == mod->second.end()) throw LinkError(fmt::format("unknown import {}.{}", im.module, im.name));
    const ExternVal& v = it->second;
    // Types compare canonically (the provided object's are; the import's through type_ids).
    if (!extern_matches(v.type(), im, inst.type_ids, types_)) throw LinkError(fmt::format("incompatible import type for {}.{}", im.module, im.name));
    switch (im.kind) {
      case ExternKind::kFunc: inst.funcs.push_back(v.func); break;
      case ExternKind::kTable: inst.tables.push_back(v.table); break;
      case ExternKind::kMemory: inst.memories.push_back(v.memory); break;
      case ExternKind::kGlobal: inst.globals.push_back(v.global); break;
      case ExternKind::kTag: inst.tags.push_back(v.tag); break;
    }
  }
  for (uint32_t t : m.tags) inst.tags.push_back(new_tag(m.types.at(t), inst.type_ids.at(t)));
  for (uint32_t t : m.functions) {
    auto f = std::make_unique<FuncInst>();
    f->type = m.types.at(t);
    f->type_id = inst.type_ids.at(t);
    f->instance = &inst;
    funcs_.push_back(std::move(f));
    inst.funcs.push_back(funcs_.back().get());
  }
  for (const auto& t : m.tables) {
    TableType type = t;
    type.element = canonical_type(inst, type.element);
    inst.tables.push_back(table(type));
  }
  for (const auto& l : m.memories) inst.memories.push_back(memory(l));
  // A guard engine accesses every 32-bit memory unchecked: an imported one must be a reservation too.
  if (bounds_ == Bounds::kGuard)
    for (size_t i = 0; i < inst.memories.size(); ++i)
      if (!inst.memories[i]->address64 && !inst.memories[i]->guarded)
        throw Unsupported(fmt::format("memory {} has no guard pages (a host's or another runtime's), and this runtime's guard engine "
                                      "does not check bounds: use --bounds check",
                                      i));
  for (const auto& g : m.globals) {
    auto [lo, hi] = eval_const(*machine_, inst, g.init);
    GlobalType type = g.type;
    type.type = canonical_type(inst, type.type);
    inst.globals.push_back(global(type, lo, hi));
  }
  // A table's initializer (typed function references) sees the imported globals (validation).
  for (size_t i = 0; i < m.tables.size(); ++i)
    if (m.tables[i].init) {
      TableInst* t = inst.tables[inst.tables.size() - m.tables.size() + i];
      std::fill(t->elements.begin(), t->elements.end(), eval_const(*machine_, inst, *m.tables[i].init).first);
    }
  for (const auto& e : m.elements) {
    std::vector<uint64_t> refs;
    for (const auto& x : e.init) refs.push_back(eval_const(*machine_, inst, x).first);
    inst.elems.push_back(std::move(refs));
  }
  for (const auto& d : m.data) inst.datas.push_back(d.bytes);

  const uint64_t* words = op_words_;
  // The counting engine (enable_profile) is compiled with the register forms: only the placement rule.
  std::string why = machine_->op_counts ? ir_unavailable(lowering_.ir, placement_) : ir_unavailable(lowering_.ir, dispatch_, placement_, budget_);
  if (!why.empty()) throw Unsupported(why);
  for (uint32_t i = 0; i < m.code.size(); ++i) lower_function(inst, i, words, lowering_, record_starts_);
  for (size_t i = inst.funcs.size() - m.functions.size(); i < inst.funcs.size(); ++i)
    if (!inst.funcs[i]->catches.empty()) catch_code_[inst.funcs[i]->code.data()] = inst.funcs[i];

  for (const auto& ex : m.exports) {
    ExternVal v;
    v.kind = ex.kind;
    switch (ex.kind) {
      case ExternKind::kFunc: v.func = inst.funcs.at(ex.index); break;
      case ExternKind::kTable: v.table = inst.tables.at(ex.index); break;
      case ExternKind::kMemory: v.memory = inst.memories.at(ex.index); break;
      case ExternKind::kGlobal: v.global = inst.globals.at(ex.index); break;
      case ExternKind::kTag: v.tag = inst.tags.at(ex.index); break;
    }
    inst.exports[ex.name] = v;
  }

  // Segments in order, each applied as table.init / memory.init and then dropped; a failing one
  // traps with the earlier ones' writes kept.
  for (size_t i = 0; i < m.elements.size(); ++i) {
    const ElemSegment& e = m.elements[i];
    if (e.mode == ElemSegment::kActive) {
      TableInst* t = inst.tables.at(e.table);
      uint64_t offset = eval_const(*machine_, inst, e.offset).first;  // an i64 for a table64 table
      if (!t->type.limits.address64) offset = static_cast<uint32_t>(offset);
      if (offset > t->elements.size() || inst.elems[i].size() > t->elements.size() - offset) throw Trap("out of bounds table access");
      std::copy(inst.elems[i].begin(), inst.elems[i].end(), t->elements.begin() + static_cast<ptrdiff_t>(offset));
    }
    if (e.mode != ElemSegment::kPassive) inst.elems[i].clear();
  }
  for (size_t i = 0; i < m.data.size(); ++i) {
    const DataSegment& d = m.data[i];
    if (d.mode != DataSegment::kActive) continue;
    MemoryInst* mem = inst.memories.at(d.memory);
    uint64_t offset = eval_const(*machine_, inst, d.offset).first;  // an i64 for a memory64 memory
    if (!mem->address64) offset = static_cast<uint32_t>(offset);
    if (offset > mem->bytes || d.bytes.size() > mem->bytes - offset) throw Trap("out of bounds memory access");
    if (!d.bytes.empty()) std::memcpy(mem->data + offset, d.bytes.data(), d.bytes.size());
    inst.datas[i].clear();
  }
  no_collection.heap.allow_collect = true;
  if (m.start && run_start) invoke(inst.funcs.at(*m.start), {});
  return inst;
}

TagInst* Runtime::tag(FuncType type) {
  uint32_t id = type_id(type);
  return new_tag(std::move(type), id);
}

TagInst* Runtime::new_tag(FuncType type, uint32_t type_id) {
  auto t = std::make_unique<TagInst>();
  for (ValType p : type.params) t->payload_slots += slots_of(p);
  t->type_id = type_id;
  t->type = std::move(type);
  tags_.push_back(std::move(t));
  return tags_.back().get();
}

// The payload's slots are still on the stack (roots) while the heap may collect.
ExnInst* make_exception(Machine* m, const TagInst* tag, const uint64_t* sp) noexcept {
  return m->heap->new_exception(tag, sp - tag->payload_slots, tag->payload_slots, sp);
}

// The innermost catch clause for `exn`: in the frame running `at` (the throwing instruction, or a
// caller's call instruction), then each caller's, down to where this invocation's frames begin.
// Popping a frame restores its caller's instance, as a return does.
Landing unwind(Machine* m, ExnInst* exn, const uint64_t* at, uint64_t* fp) noexcept {
  for (;;) {
    auto it = m->catch_code->upper_bound(at);
    if (it != m->catch_code->begin()) {
      const FuncInst* f = std::prev(it)->second;
      const uint64_t* code = f->code.data();
      if (at >= code && at < code + f->code.size()) {
        size_t pos = static_cast<size_t>(at - code);
        // Ranges in the order they begin: a nested one after its enclosing one, so innermost last.
        for (size_t k = f->catches.size(); k-- > 0;) {
          const CatchRange& r = f->catches[k];
          if (pos < r.begin || pos >= r.end) continue;
          for (const CatchClause& c : r.clauses) {
            if (c.tag && c.tag != exn->tag) continue;
            uint64_t* sp = fp + c.height;
            if (c.tag && !exn->payload.empty()) {  // (an empty payload's data() may be null: no memcpy)
              std::memcpy(sp, exn->payload.data(), exn->payload.size() * sizeof(uint64_t));
              sp += exn->payload.size();
            }
            if (c.ref) *sp++ = reinterpret_cast<uint64_t>(exn);
            return {code + c.target, sp, fp};
          }
        }
      }
    }
    if (m->frame_top == m->invoke_frames) break;
    CallFrame cf = *--m->frame_top;
    fp = cf.fp;
    if (cf.instance != m->instance) {
      m->instance = cf.instance;
      m->load_memory();
    }
    at = cf.return_ip - 1;  // inside the call instruction
  }
  m->exception = exn;
  return {nullptr, nullptr, nullptr};
}

void Runtime::set_fuel(uint64_t units) { machine_->fuel = units; }
uint64_t Runtime::fuel_left() const { return machine_->fuel; }
bool Runtime::suspended() const { return machine_->suspended; }

void Runtime::set_deadline(std::chrono::nanoseconds from_now) {
  // Only a deadline engine reads the epoch: no timer thread for the others.
  if (!deadline_ticker_ && budget_ == Budget::kDeadline) {
    epoch_ticker().acquire();
    deadline_ticker_ = true;
  }
  // Whole epochs, one more than the quotient: the epoch may be about to tick when this is read,
  // so the deadline falls between from_now and from_now + one tick, never before.
  uint64_t ns = from_now.count() > 0 ? static_cast<uint64_t>(from_now.count()) : 0;
  machine_->deadline_epoch = g_epoch.load(std::memory_order_relaxed) + ns / kEpochTickNs + 1 + (ns % kEpochTickNs != 0);
}

void Runtime::clear_deadline() { machine_->deadline_epoch = ~0ull; }

void Runtime::enable_profile() {
  if (!instances_.empty()) throw std::logic_error("enable_profile must come before instantiation");
  constexpr size_t n = static_cast<size_t>(Op::kCount);
  op_counts_.assign(n, 0);
  pair_counts_.assign(n * n, 0);
  machine_->op_counts = op_counts_.data();
  machine_->pair_counts = pair_counts_.data();
  op_words_ = tail_profile_op_words();
  run_ = &run_tail_profile;
}

Profile Runtime::profile() const {
  Profile p;
  constexpr size_t n = static_cast<size_t>(Op::kCount);
  for (size_t i = 0; i < n; ++i) p.op_names.push_back(kOpNames[i]);
  p.op_counts = op_counts_;
  for (uint64_t c : op_counts_) p.dispatches += c;
  for (size_t i = 0; i < pair_counts_.size(); ++i)
    if (pair_counts_[i]) p.pairs.push_back({{static_cast<uint32_t>(i / n), static_cast<uint32_t>(i % n)}, pair_counts_[i]});
  return p;
}

std::vector<Value> Runtime::invoke(FuncInst* f, const std::vector<Value>& args) {
  if (args.size() != f->type.params.size())
    throw std::invalid_argument(fmt::format("expected {} arguments, got {}", f->type.params.size(), args.size()));
  Machine& m = *machine_;
  // Re-entrant: a host function that wasm code called may invoke again. The nested invocation
  // runs on the operand stack and call frames above its caller's (CALL_HOST records the caller's
  // stack top in m.host_sp), and the machine state the caller's handlers rely on (instance,
  // memory cache, frames, the `vec` placement's stack pointer, the counting engine's previous op)
  // is put back when it ends, however it ends; its trap or exit reaches the host function as a
  // Trap or ProcExit exception, which CALL_HOST turns into the caller's trap or exit.
  const bool nested = m.running;
  if (!nested) m.suspended = false;  // a suspended invocation is abandoned by a new one
  uint64_t* base = nested ? m.host_sp : m.stack.get() + 1;
  uint32_t arg_slots = 0;
  for (const Value& a : args) arg_slots += slots_of(a.type);
  if (base + arg_slots > m.stack_end) throw Trap("call stack exhausted");
  uint64_t* sp = base;
  for (size_t i = 0; i < args.size(); ++i) {
    // A reference argument's type is its kind only (the host cannot name a module's type index).
    bool same_kind = args[i].type == f->type.params[i] || (is_ref(args[i].type) && is_ref(f->type.params[i]));
    if (!same_kind) throw std::invalid_argument(fmt::format("argument {} has the wrong type", i));
    *sp++ = args[i].lo;
    if (args[i].type == ValType::kV128) *sp++ = args[i].hi;
  }
  // A two-instruction trampoline: call f, then halt; the call's frame returns to the halt. The
  // outermost invocation's is the runtime's, so that a suspended invocation can still return to it.
  const uint64_t* words = op_words_;
  uint64_t nested_entry[3];
  uint64_t* entry = nested ? nested_entry : trampoline_;
  entry[0] = words[static_cast<size_t>(Op::call)];
  entry[1] = reinterpret_cast<uint64_t>(f);
  entry[2] = words[static_cast<size_t>(Op::halt)];
  if (!nested) invoked_ = f;
  struct Restore {
    Machine& m;
    bool nested;
    Instance* instance = m.instance;
    MemoryInst* memory = m.memory;
    CallFrame* frame_top = m.frame_top;
    uint64_t* host_sp = m.host_sp;
    uint64_t* vsp = m.vsp;
    uint64_t last_op = m.last_op;
    CallFrame* invoke_frames = m.invoke_frames;
    // Handlers report failures through m.trap, never by throwing; should anything still unwind,
    // the runtime must not stay marked as running, or every later invoke would be taken as nested.
    ~Restore() {
      m.trap = nullptr;
      m.exited = false;
      m.exception = nullptr;
      if (!nested) {
        m.running = false;
        return;
      }
      m.instance = instance;
      m.use_memory(memory);
      m.frame_top = frame_top;
      m.host_sp = host_sp;
      m.vsp = vsp;
      m.last_op = last_op;
      m.invoke_frames = invoke_frames;
    }
  } restore{m, nested};
  m.trap = nullptr;
  m.exited = false;
  m.instance = nullptr;
  m.load_memory();
  if (!nested) m.frame_top = m.frames.get();
  m.invoke_frames = m.frame_top;  // an exception unwinds no further than this invocation's frames
  m.exception = nullptr;
  m.running = true;
  m.last_op = Machine::kNoPreviousOp;  // no pair spans two invocations
  run_engine(entry, sp, base);
  return finish(f, base, nested);
}

void Runtime::run_engine(const uint64_t* ip, uint64_t* sp, uint64_t* fp) {
  // A guard engine's out-of-bounds access faults; guard_pages::run turns the fault into the trap.
  if (bounds_ == Bounds::kGuard)
    guard_pages::run(run_, ip, sp, fp, machine_.get());
  else
    run_(ip, sp, fp, machine_.get());
}

std::vector<Value> Runtime::finish(FuncInst* f, const uint64_t* results, bool nested) {
  Machine& m = *machine_;
  if (m.exited) throw ProcExit(m.exit_code);
  if (m.exception) throw Exception(m.exception);
  if (m.suspended) {
    // Only the outermost invocation waits: a nested one's stack lies inside its caller's.
    if (!nested) throw Suspended(m.trap);
    m.suspended = false;
    throw Trap(m.trap);
  }
  if (m.trap) throw Trap(m.trap);
  std::vector<Value> out;
  const uint64_t* r = results;
  for (ValType t : f->type.results) {
    Value v{t, *r++, 0};
    if (t == ValType::kV128) v.hi = *r++;
    out.push_back(v);
  }
  return out;
}

std::vector<Value> Runtime::resume() {
  Machine& m = *machine_;
  if (m.running) throw std::logic_error("Runtime::resume during an invocation (only the outermost one can be resumed)");
  if (!m.suspended) throw std::logic_error("Runtime::resume: no invocation is suspended");
  m.suspended = false;
  m.trap = nullptr;
  m.exited = false;
  m.running = true;
  struct Done {
    Machine& m;
    ~Done() {
      m.trap = nullptr;
      m.exited = false;
      m.running = false;
    }
  } done{m};
  // The machine's instance, memory cache and frames are as the suspension left them.
  run_engine(m.resume_ip, m.resume_sp, m.resume_fp);
  return finish(invoked_, m.stack.get() + 1, false);
}

}  // namespace dlab::wasm
