// Executing WebAssembly: the store (function, table, memory and global instances), instantiation
// of a validated module against named import modules, and invocation.
//
// Values live on one operand stack of 64-bit slots ("lanes"): i32 and f32 in the low 32 bits of a
// slot, i64, f64 and references in a whole slot, v128 in two consecutive slots (low half first).
// Function code is lowered at instantiation into an instruction stream of 64-bit words (see
// src/lower/lowering.h) and executed by one of the dispatch modes below, all generated from the one
// handler definition in src/engines/handlers.def.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <chrono>

#include "dispatchlab/interpreter/engine_config.h"
#include "dispatchlab/interpreter/linker.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/types.h"

namespace dlab::wasm {

class Trap : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An instruction this build has no handler for: the module decodes and validates, but
// instantiating it says so instead of running something else.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A valid module beyond this interpreter's limits (a function with more than kMaxLocals locals).
class ImplementationLimit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// WASI proc_exit, or any host function that ends the program with an exit status.
// A budgeted invocation ran out of fuel or past its deadline ("fuel exhausted", "deadline
// reached"): a trap that Runtime::resume can continue from where it stopped.
class Suspended : public Trap {
 public:
  using Trap::Trap;
};

struct TagInst;
struct ExnInst;
// A WebAssembly exception that no handler caught reached the host: a Trap (what() is
// "uncaught exception"), with the exception: its tag and payload (exn->payload, in slots).
class Exception : public Trap {
 public:
  explicit Exception(const ExnInst* exn) : Trap("uncaught exception"), exn_(exn) {}
  const ExnInst* exception() const { return exn_; }

 private:
  const ExnInst* exn_;
};

class ProcExit : public std::runtime_error {
 public:
  explicit ProcExit(int code) : std::runtime_error("proc_exit"), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

struct Value {
  ValType type = ValType::kI32;
  uint64_t lo = 0, hi = 0;  // hi: v128 only. References: 0 is null.
  static Value i32(uint32_t v) { return {ValType::kI32, v, 0}; }
  static Value i64(uint64_t v) { return {ValType::kI64, v, 0}; }
};

struct Instance;
struct MemoryInst;

// What a host function sees: its arguments in slots (results are written over them) and the
// calling instance's memory 0, if any.
struct HostCall {
  uint64_t* slots;
  MemoryInst* memory;
  const char* trap = nullptr;  // set to trap with this message
  std::optional<int> exit_code;  // set to end the program (proc_exit)
};
using HostFunction = std::function<void(HostCall&)>;

// A try_table's catch clauses over the instructions [begin, end) of a function's code (word
// indices): the first clause whose tag matches (catch_all: any) receives the exception. Its
// label's values go `height` slots above the frame pointer (the label's stack height), then the
// payload (catch, catch_ref) and the exception reference (catch_ref, catch_all_ref), and the
// code continues at `target`.
struct CatchClause {
  const TagInst* tag = nullptr;  // null: catch_all / catch_all_ref
  bool ref = false;              // also push the exnref
  uint32_t height = 0;
  size_t target = 0;
};
struct CatchRange {
  size_t begin = 0, end = 0;
  std::vector<CatchClause> clauses;
};

struct FuncInst {
  FuncType type;
  uint32_t type_id = 0;  // canonical signature id (call_indirect compares these)
  Instance* instance = nullptr;  // null for host functions
  HostFunction host;
  // Lowered code and frame shape (wasm functions): slots of parameters, of the other locals, of
  // the results, and the most slots a frame uses (locals plus deepest operand stack).
  std::vector<uint64_t> code;
  uint32_t param_slots = 0, local_slots = 0, result_slots = 0, max_slots = 0;
  std::vector<CatchRange> catches;  // try_tables, in the order they begin (nested ones after)
  // Where each instruction of `code` starts, ascending: filled only for a runtime asked to
  // (Runtime::record_instruction_starts), so that a test can walk the code by instruction
  // instead of guessing which words are ops (an immediate may equal an op number).
  std::vector<uint32_t> instruction_starts;
  // Not lowered yet (Runtime::set_lazy_lowering): its body, which its first call lowers; `code` is
  // then the one instruction that does it and max_slots its locals' only (the call redoes the
  // stack check). Null once lowered.
  const FunctionBody* body = nullptr;
};

// A tag (exception handling): its type's parameters are an exception's payload; tags are equal
// only as the same object (imports share it).
struct TagInst {
  FuncType type;
  uint32_t type_id = 0;        // canonical: an import matches a tag of the same type
  uint32_t payload_slots = 0;  // the parameters' slots
};
// An exception: its tag and payload values (in slots, v128 taking two). exnref is its address.
// Exceptions are the collector's (GcHeap): one no root reaches any more is freed.
struct ExnInst {
  const TagInst* tag = nullptr;
  std::vector<uint64_t> payload;
  bool gc_mark = false;
};

// A GC object (struct or array instance): this header, then its fields (at the byte offsets of
// its Rtt) or its elements (length of them, Rtt::elem_bytes each). 16 bytes, so payloads are
// 16-byte aligned. A free cell of the heap has rtt null.
struct GcObject {
  const Rtt* rtt;
  uint32_t length;  // arrays
  uint32_t flags;   // bit 0: marked (during a collection)
};
static_assert(sizeof(GcObject) == 16);

// How a reference sits in its slot. 0 is null in every hierarchy. funcref: a FuncInst*; exnref:
// an ExnInst*; anyref, eqref, structref, arrayref and defined struct and array types: a GcObject*
// (8-byte aligned), an i31 as (value << 1) | 1, or an internalised host reference; externref: a
// host reference (n << 2) | 2, or an externalised anyref. any.convert_extern and
// extern.convert_any change nothing: the two encodings never collide.
namespace ref {
constexpr uint64_t host(uint64_t n) { return n << 2 | 2; }
constexpr bool is_host(uint64_t v) { return (v & 3) == 2; }
constexpr uint64_t host_number(uint64_t v) { return v >> 2; }
constexpr uint64_t i31(uint32_t x) { return static_cast<uint64_t>(x & 0x7FFFFFFFu) << 1 | 1; }
constexpr bool is_i31(uint64_t v) { return v & 1; }
constexpr bool is_object(uint64_t v) { return v != 0 && (v & 7) == 0; }  // in the any hierarchy
inline const GcObject* object(uint64_t v) { return reinterpret_cast<const GcObject*>(v); }
}  // namespace ref

// What the collector did (Runtime::gc_stats): collections and the time in them, what was
// allocated and freed, and what is live now. Bytes are objects' (and exceptions') sizes.
struct GcStats {
  uint64_t collections = 0;
  uint64_t collect_ns = 0;
  uint64_t objects_allocated = 0, bytes_allocated = 0;
  uint64_t objects_freed = 0, bytes_freed = 0;
  uint64_t live_bytes = 0, peak_live_bytes = 0;
  uint64_t heap_limit = 0;  // ~0: none
};
class GcHeap;

struct TableInst {
  TableType type;
  std::vector<uint64_t> elements;  // FuncInst* (funcref) or host value + 1 (externref); 0 = null
};

struct MemoryInst {
  static constexpr uint64_t kPage = 65536;
  std::optional<uint32_t> max;
  bool address64 = false;  // indexed by i64 (memory64): its handlers are the _a64 forms
  // calloc'd (untouched pages stay unbacked until used), or, when guarded, the start of a
  // reservation whose first `bytes` are readable and writable (src/runtime/guard_pages.h): it never moves.
  uint8_t* data = nullptr;
  uint64_t bytes = 0;
  bool guarded = false;
  // guard: reserve the address space a guard engine needs (throws Trap when it cannot).
  MemoryInst(uint32_t pages, std::optional<uint32_t> max_pages, bool guard = false);
  ~MemoryInst();
  MemoryInst(const MemoryInst&) = delete;
  MemoryInst& operator=(const MemoryInst&) = delete;
  uint32_t pages() const { return static_cast<uint32_t>(bytes / kPage); }
  // memory.grow: the old size in pages, or -1 when over the maximum or out of host memory.
  int64_t grow(uint32_t delta);
};

struct GlobalInst {
  GlobalType type;
  uint64_t lo = 0, hi = 0;
};

struct ExternVal {
  ExternKind kind = ExternKind::kFunc;
  FuncInst* func = nullptr;
  TableInst* table = nullptr;
  MemoryInst* memory = nullptr;
  GlobalInst* global = nullptr;
  TagInst* tag = nullptr;
  ExternType type() const;  // with current sizes
};

using ExternMap = std::map<std::string, ExternVal>;

struct Instance {
  Module module;
  std::vector<uint32_t> type_ids;  // canonical id of each type index
  const TypeStore* types = nullptr;  // the runtime's, where those ids are
  std::vector<FuncInst*> funcs;
  std::vector<TableInst*> tables;
  std::vector<MemoryInst*> memories;
  std::vector<GlobalInst*> globals;
  std::vector<TagInst*> tags;
  std::vector<std::vector<uint64_t>> elems;  // element segments (empty once dropped)
  std::vector<std::vector<uint8_t>> datas;   // data segments (empty once dropped)
  ExternMap exports;
  // How its functions are lowered on their first call (lazy lowering): the runtime's settings at
  // instantiation, and the runtime's map of functions with catch ranges, which a lowered one joins.
  struct LateLowering {
    const uint64_t* op_words = nullptr;
    Lowering lowering;
    std::map<const uint64_t*, const FuncInst*>* catch_code = nullptr;
  } late_lowering;
};

struct Machine;

// What `dlab wasm profile` reports: dynamic counts per op and per pair of consecutive ops.
struct Profile {
  std::vector<std::string> op_names;                 // index = op number
  std::vector<std::string> op_families;              // index = op number: its handlers/ file (control, numeric, ...)
  std::vector<uint64_t> op_counts;                   // per op
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint64_t>> pairs;  // ((previous, op), count), non-zero only
  uint64_t dispatches = 0;
};

// The family of the handler named `op` (kOpNames' name: i32_add, local_get_r, ...): the handlers/
// file its entry is in (control, stack_locals_globals, gc, tables, memory, numeric, simd,
// superinstructions); "" when no op has that name.
std::string op_family_of(std::string_view op);

class Runtime {
 public:
  // The engine and its lowering as one value (what the commands and result rows name). Throws
  // std::invalid_argument (with EngineConfig::unavailable's engine reason) for an engine this build
  // lacks. Under Bounds::kGuard every 32-bit memory this runtime creates is a guarded reservation,
  // and instantiate refuses (Unsupported) an instance with a 32-bit memory that is not.
  explicit Runtime(const EngineConfig& engine = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Dispatch dispatch() const { return dispatch_; }
  Placement placement() const { return placement_; }
  Budget budget() const { return budget_; }
  Bounds bounds() const { return bounds_; }
  EngineConfig engine() const { return {dispatch_, placement_, budget_, bounds_, lowering_}; }
  // Every instance, in the order instantiated (a failed instantiation's included).
  const std::deque<std::unique_ptr<Instance>>& instances() const { return instances_; }
  // The techniques the lowering applies to modules instantiated from now on.
  void set_lowering(Lowering l) { lowering_ = l; }
  Lowering lowering() const { return lowering_; }
  // Functions lowered from now on record where their instructions start (FuncInst::instruction_starts);
  // they are lowered at instantiation, as with set_lazy_lowering(false).
  void record_instruction_starts(bool on) { record_starts_ = on; }
  // Whether a function is lowered on its first call (the default) instead of at instantiation: a
  // module's start-up and footprint are then those of the functions that run (issue 50). The code
  // a function runs is the same either way.
  void set_lazy_lowering(bool on) { lazy_lowering_ = on; }
  bool lazy_lowering() const { return lazy_lowering_ && !record_starts_; }

  // Makes `exports` importable as module `name` (an instance's exports or a host module).
  void register_module(const std::string& name, ExternMap exports) { registry_[name] = std::move(exports); }
  // One more export of module `module` (made if new), beside what register_module gave it.
  void register_export(const std::string& module, const std::string& name, ExternVal v) { registry_[module][name] = std::move(v); }
  // Whether a registered module exports `name`.
  bool provides(const std::string& module, const std::string& name) const {
    auto m = registry_.find(module);
    return m != registry_.end() && m->second.count(name);
  }

  // Links, allocates, lowers, initialises segments and runs the start function. Throws
  // LinkError (unknown or incompatible import), Unsupported, or Trap (segment out of bounds, a
  // trap in the start function; effects on imported tables and memories stay, as the spec says).
  // run_start=false leaves the start function alone (the fuzzer: a start function may loop forever).
  Instance& instantiate(Module module, bool run_start = true);

  // Runs f to completion: its results, or Trap / ProcExit. Re-entrant: a host function called by
  // wasm code may invoke again (on the stack and frames above its caller's, within the same
  // limits); the nested call's Trap or ProcExit reaches that host function as an exception, and if
  // it lets it go, becomes the outer invocation's trap (same message) or exit.
  std::vector<Value> invoke(FuncInst* f, const std::vector<Value>& args);
  // Budgets (engines.def's BUDGET rows). Fuel: the branches and calls invocations may still make
  // (the fuel engines and the fuzzing build spend it; default unbounded). One more and the
  // invocation stops with Suspended("fuel exhausted") at that branch or call. Deadline: from now,
  // rounded up to whole epochs (kEpochTickNs); past it, a deadline engine's next branch or call
  // stops with Suspended("deadline reached"). Other engines ignore both.
  void set_fuel(uint64_t units);
  uint64_t fuel_left() const;
  void set_deadline(std::chrono::nanoseconds from_now);
  void clear_deadline();
  static constexpr uint64_t kEpochTickNs = 1'000'000;
  // After invoke or resume threw Suspended: the invocation waits where it stopped (its stack,
  // frames and instance kept) until resume() continues it (with more fuel or a later deadline:
  // the charging instruction runs first), or another invoke abandons it. A nested invocation (one
  // a host function made) that runs out is not suspended: it reaches the host function as a Trap.
  bool suspended() const;
  std::vector<Value> resume();
  // Switches to the counting engine (tail-call handlers that count every op and pair; never timed).
  // Call before instantiating: lowering writes the engine's op words.
  void enable_profile();
  Profile profile() const;

  // Host objects (the spec tests' `spectest` module, WASI).
  FuncInst* host_function(FuncType type, HostFunction fn);
  // A host function or tag of a canonical function type (canonical_ids): one that matches a
  // module's import of a type in a recursive group or with a supertype.
  FuncInst* host_function(uint32_t type_id, HostFunction fn);
  TagInst* tag(uint32_t type_id);
  // A validated module's types made canonical in this runtime (what instantiation will give them).
  std::vector<uint32_t> canonical_ids(const Module& m) { return types_.add(m.types); }
  TableInst* table(TableType type);
  MemoryInst* memory(Limits limits);
  GlobalInst* global(GlobalType type, uint64_t lo, uint64_t hi = 0);
  TagInst* tag(FuncType type);

  uint32_t type_id(const FuncType& t);
  // Every canonical type of this runtime's instances (types.h).
  const TypeStore& types() const { return types_; }
  // The GC heap: its limit in bytes (objects and exceptions; allocation past it, even after a
  // collection, traps with "out of memory"), a collection now, what the collector did. The
  // results an invocation returns stay valid until the next invocation collects.
  void set_heap_limit(uint64_t bytes);
  void collect();
  GcStats gc_stats() const;
  // A value type with its module type index (if any) replaced by the canonical type id of that
  // type, so that types from two modules compare.
  static ValType canonical_type(const Instance& inst, ValType t);

  // Limits of the machine that runs code: operand-stack slots and call depth. Exceeding either
  // traps with "call stack exhausted".
  static constexpr size_t kStackSlots = 1 << 20;
  static constexpr size_t kMaxCallDepth = 1 << 16;
  static constexpr uint64_t kMaxLocals = 50000;  // per function, parameters included (V8's limit)
  // Table elements: V8's limit. table.grow past it returns -1 (the spec's "cannot grow"); a table
  // whose minimum is past it cannot be instantiated (ImplementationLimit).
  static constexpr uint64_t kMaxTableElements = 10'000'000;

 private:
  Dispatch dispatch_;
  Placement placement_;
  Budget budget_;
  Bounds bounds_;
  Lowering lowering_;
  bool record_starts_ = false;
  bool lazy_lowering_ = true;
  const uint64_t* op_words_;                   // the engine's op words (machine.h)
  void (*run_)(const uint64_t*, uint64_t*, uint64_t*, Machine*);  // the engine's entry
  std::map<std::string, ExternMap> registry_;
  std::deque<std::unique_ptr<Instance>> instances_;
  std::deque<std::unique_ptr<FuncInst>> funcs_;
  std::deque<std::unique_ptr<TableInst>> tables_;
  std::deque<std::unique_ptr<MemoryInst>> memories_;
  std::deque<std::unique_ptr<GlobalInst>> globals_;
  std::deque<std::unique_ptr<TagInst>> tags_;
  TypeStore types_;
  std::unique_ptr<GcHeap> heap_;
  std::map<const uint64_t*, const FuncInst*> catch_code_;          // functions with catch ranges, by code address
  std::unique_ptr<Machine> machine_;
  std::vector<uint64_t> op_counts_;  // the counting engine's table of ops, when enabled
  // ... and of pairs, Op::kCount squared (62 MB): from calloc, whose pages the kernel zeroes when
  // first touched, so a runtime pays for the rows its program reaches, not a 62 MB memset (which
  // made every profiled runtime cost 0.1-0.2 s, most of the spec suite's counting runs).
  struct FreeDeleter {
    void operator()(uint64_t* p) const;
  };
  std::unique_ptr<uint64_t[], FreeDeleter> pair_counts_;
  // The outermost invocation's trampoline (call f, halt) and function: they outlive a suspension.
  uint64_t trampoline_[3] = {};
  FuncInst* invoked_ = nullptr;
  bool deadline_ticker_ = false;  // this runtime holds the epoch ticker running
  std::vector<Value> finish(FuncInst* f, const uint64_t* results, bool nested);
  void run_engine(const uint64_t* ip, uint64_t* sp, uint64_t* fp);  // run_, under guard_pages::run for a guard engine
  TagInst* new_tag(FuncType type, uint32_t type_id);
  void mark_roots(const uint64_t* sp);
};

}  // namespace dlab::wasm
