// The runtime's objects and instantiation: memories, host functions, tables, globals and tags;
// Runtime's construction on its engine (engine_registry.h) and the collector's roots; a module
// instantiated (imports, its own objects, constant expressions: const_expr.h, lowering every
// function, element and data segments, the start function).
#include "dispatchlab/interpreter/runtime.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <fmt/format.h>

#include "engines/machine.h"
#include "gc/gc_heap.h"
#include "gc/gc_ops.h"
#include "lower/lowering.h"
#include "runtime/const_expr.h"
#include "runtime/engine_registry.h"
#include "runtime/guard_pages.h"

namespace dlab::wasm {

using runtime_impl::Engine;
using runtime_impl::eval_const;
using runtime_impl::find_engine;

// ---- memory -------------------------------------------------------------------------------------

// A memory without guard pages, on Linux: an anonymous mapping, grown by mremap, which moves the
// page table entries instead of copying the contents and gives zeroed new pages. memory.grow was
// a calloc of the new size and a copy of the whole memory: 44% of the time of a spec-suite run
// (`dlab wasm spec`, tail engine; perf's cpu-clock on a 2-vCPU Zen 5 guest), most of it the page
// faults of the copy, and quadratic in a program that grows its memory page by page. Elsewhere,
// calloc and a copy as before.
namespace {
#if defined(__linux__)
// The host pages a memory of `bytes` occupies: at least one, so that data is never null.
uint64_t mapped_bytes(uint64_t bytes) {
  static const uint64_t host_page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return std::max(host_page, (bytes + host_page - 1) / host_page * host_page);
}
#endif
}  // namespace

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
#if defined(__linux__)
  void* p = mmap(nullptr, mapped_bytes(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw Trap("out of memory allocating linear memory");
  data = static_cast<uint8_t*>(p);
#else
  // calloc, not a vector: a large zeroed allocation maps untouched pages instead of writing them.
  data = static_cast<uint8_t*>(std::calloc(bytes ? bytes : 1, 1));
  if (!data) throw Trap("out of memory allocating linear memory");
#endif
}

MemoryInst::~MemoryInst() {
  if (guarded)
    guard_pages::release(data);
#if defined(__linux__)
  else
    munmap(data, mapped_bytes(bytes));
#else
  else
    std::free(data);
#endif
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
#if defined(__linux__)
  void* moved = mremap(data, mapped_bytes(bytes), mapped_bytes(new_bytes), MREMAP_MAYMOVE);
  if (moved == MAP_FAILED) return -1;
  data = static_cast<uint8_t*>(moved);
#else
  auto* fresh = static_cast<uint8_t*>(std::calloc(new_bytes, 1));
  if (!fresh) return -1;
  std::memcpy(fresh, data, bytes);
  std::free(data);
  data = fresh;
#endif
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

Runtime::Runtime(const EngineConfig& engine)
    : dispatch_(engine.dispatch), placement_(engine.placement), budget_(engine.budget), bounds_(engine.bounds),
      lowering_(engine.lowering), machine_(std::make_unique<Machine>()) {
  if (std::string why = engine_unavailable(dispatch_, placement_, budget_, bounds_); !why.empty()) throw std::invalid_argument(why);
  const Engine* e = find_engine(dispatch_, placement_, budget_, bounds_);
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
}

void Runtime::set_heap_limit(uint64_t bytes) { heap_->set_limit(bytes); }
void Runtime::collect() {
  if (machine_->running) throw std::logic_error("Runtime::collect during an invocation (the collector runs at allocations then)");
  heap_->collect(nullptr);
}
GcStats Runtime::gc_stats() const { return heap_->stats(); }

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
  // The lowering every function gets, constant expressions first (they run in the engine).
  const uint64_t* words = op_words_;
  // The counting engine (enable_profile) is compiled with the register forms: only the placement rule.
  std::string why = machine_->op_counts ? ir_unavailable(lowering_.ir, placement_) : ir_unavailable(lowering_.ir, dispatch_, placement_, budget_);
  if (!why.empty()) throw Unsupported(why);
  auto eval = [&](const Expr& e, ValType t) { return eval_const(*this, *machine_, inst, e, t, words, lowering_); };
  for (const auto& g : m.globals) {
    auto [lo, hi] = eval(g.init, g.type.type);
    GlobalType type = g.type;
    type.type = canonical_type(inst, type.type);
    inst.globals.push_back(global(type, lo, hi));
  }
  // A table's initializer (typed function references) sees the imported globals (validation).
  for (size_t i = 0; i < m.tables.size(); ++i)
    if (m.tables[i].init) {
      TableInst* t = inst.tables[inst.tables.size() - m.tables.size() + i];
      std::fill(t->elements.begin(), t->elements.end(), eval(*m.tables[i].init, m.tables[i].element).first);
    }
  for (const auto& e : m.elements) {
    std::vector<uint64_t> refs;
    for (const auto& x : e.init) refs.push_back(eval(x, e.type).first);
    inst.elems.push_back(std::move(refs));
  }
  // An active segment is applied below and then dropped: only a passive one gets a second copy
  // here, for memory.init (copying every segment was a third of a data-heavy module's start-up).
  // An active one's bytes stay in inst.module; a failed application brings back the segments it
  // did not drop (below).
  inst.datas.reserve(m.data.size());
  for (const auto& d : m.data) inst.datas.push_back(d.mode == DataSegment::kPassive ? d.bytes : std::vector<uint8_t>{});

  inst.late_lowering = {words, lowering_, &catch_code_};
  if (lazy_lowering()) {
    for (uint32_t i = 0; i < m.code.size(); ++i) prepare_late_lowering(inst, i);
  } else {
    for (uint32_t i = 0; i < m.code.size(); ++i) lower_function(inst, i, words, lowering_, record_starts_);
    for (size_t i = inst.funcs.size() - m.functions.size(); i < inst.funcs.size(); ++i)
      if (!inst.funcs[i]->catches.empty()) catch_code_[inst.funcs[i]->code.data()] = inst.funcs[i];
  }

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
      uint64_t offset = eval(e.offset, t->type.limits.address64 ? ValType::kI64 : ValType::kI32).first;
      if (!t->type.limits.address64) offset = static_cast<uint32_t>(offset);
      if (offset > t->elements.size() || inst.elems[i].size() > t->elements.size() - offset) throw Trap("out of bounds table access");
      std::copy(inst.elems[i].begin(), inst.elems[i].end(), t->elements.begin() + static_cast<ptrdiff_t>(offset));
    }
    if (e.mode != ElemSegment::kPassive) inst.elems[i].clear();
  }
  for (size_t i = 0; i < m.data.size(); ++i) {
    const DataSegment& d = m.data[i];
    if (d.mode != DataSegment::kActive) continue;
    try {
      MemoryInst* mem = inst.memories.at(d.memory);
      uint64_t offset = eval(d.offset, mem->address64 ? ValType::kI64 : ValType::kI32).first;
      if (!mem->address64) offset = static_cast<uint32_t>(offset);
      if (offset > mem->bytes || d.bytes.size() > mem->bytes - offset) throw Trap("out of bounds memory access");
      if (!d.bytes.empty()) std::memcpy(mem->data + offset, d.bytes.data(), d.bytes.size());
    } catch (...) {
      // The spec drops a segment after its memory.init: this one and the active ones after it
      // were never dropped, and a function the failed instance left in an imported table may
      // still memory.init from them.
      for (size_t j = i; j < m.data.size(); ++j)
        if (m.data[j].mode == DataSegment::kActive) inst.datas[j] = m.data[j].bytes;
      throw;
    }
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

}  // namespace dlab::wasm
