// Validating a module (the spec's module rules): types, imports, the index spaces, limits,
// constant expressions, exports, the start function, segments, and every function body
// (function_validator.cc), against one context (validation.h).
#include "dispatchlab/interpreter/validator.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <set>
#include <system_error>
#include <string>
#include <thread>
#include <vector>

#include "decode/instruction_reader.h"
#include "validate/validation.h"

namespace dlab::wasm {

using namespace validate_impl;

namespace {

void check_limits(const Limits& l, uint64_t bound, const char* too_big) {
  if (l.min > bound || (l.max && *l.max > bound)) invalid(too_big);
  if (l.max && *l.max < l.min) invalid("size minimum must not be greater than maximum");
}

// A memory's limits: 2^16 pages for a 32-bit memory, 2^48 for a 64-bit one (memory64).
void check_memory(const Limits& l) {
  if (l.address64) check_limits(l, 1ull << 48, "memory size must be at most 2^48 pages");
  else check_limits(l, 65536, "memory size must be at most 65536 pages (4GiB)");
}

// A table's limits: 2^32 - 1 elements for a 32-bit table, 2^64 - 1 for a 64-bit one (table64).
void check_table(const TableType& t, size_t types) {
  check_valtype(t.element, types);
  check_limits(t.limits, t.limits.address64 ? ~0ull : 0xFFFFFFFFull, "table size");
}

// A tag's type: a function type without results (its parameters are the exception's payload).
void check_tag(const Ctx& c, uint32_t type_idx) {
  if (!func_type_at(c, type_idx).results.empty()) invalid("non-empty tag result type");
}

// The type section: each type names types of its group and earlier ones, a supertype before it,
// not final, whose definition it matches (checked on the canonical types, types.h).
void check_types(Ctx& c) {
  const Module& m = c.m;
  for (size_t i = 0; i < m.types.size(); ++i) {
    const DefType& t = m.types[i];
    const size_t bound = t.rec_begin + t.rec_size;
    check_valtypes(t.params, bound);
    check_valtypes(t.results, bound);
    for (const FieldType& f : t.fields) check_valtype(f.type, bound);
    if (t.super && *t.super >= i) invalid("unknown type: a supertype must come before its subtype");
  }
  c.ids = c.store.add(m.types);
  for (size_t i = 0; i < m.types.size(); ++i) {
    const DefType& t = m.types[i];
    if (!t.super) continue;
    if (m.types[*t.super].final) invalid("sub type: the supertype is final");
    if (!c.store.composite_matches(c.ids[i], c.ids[*t.super])) invalid("sub type: does not match its supertype");
  }
}

// Function bodies, last: each is checked against the module's context alone, which nothing
// changes by now (TypeStore's questions are const), so a large module's bodies are split among
// threads, each with its own validator. Chunks of functions are handed out in order; the error
// reported is the one of the first invalid function, as one thread would report it (each chunk is
// validated up to its first invalid function, and the lowest such index wins).
// Measured on a 2-vCPU Zen 5 guest: a thread's start and join cost about 30 us, validation about
// 9 ms per MiB of code (pdfcpu: 14.3 MiB of code, 0.19 s to decode and validate on one thread, two
// thirds of it validation). Below 256 KiB (about 2 ms of validation, some 70 thread starts) one
// thread does it all: a small module's start-up is unchanged (cowsay's 123 KiB of code, the empty
// module). The chunk size and the thread cap are not tuned: chunks are handed out as threads free
// up, so their size only bounds the work done past the first error.
constexpr size_t kParallelValidationBytes = size_t{256} << 10;
constexpr size_t kFunctionsPerChunk = 256;
constexpr unsigned kMaxValidationThreads = 8;

void validate_bodies(const Ctx& c) {
  const Module& m = c.m;
  size_t code_bytes = 0;
  for (const auto& f : m.code) code_bytes += f.code.bytes.size();
  auto validate = [&](BodyValidator& bodies, std::vector<std::pair<uint32_t, ValType>>& locals, size_t i) {
    const FuncType& ft = func_type_at(c, m.functions[i]);
    locals.clear();
    for (auto p : ft.params) locals.emplace_back(1, p);
    for (const auto& [n, t] : m.code[i].locals) {
      check_valtype(t, m.types.size());
      locals.emplace_back(n, t);
    }
    bodies.function(ft, locals, m.code[i].code);
  };
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t chunks = (m.code.size() + kFunctionsPerChunk - 1) / kFunctionsPerChunk;
  const unsigned threads = code_bytes < kParallelValidationBytes ? 1 : static_cast<unsigned>(std::min<size_t>({hardware, kMaxValidationThreads, chunks}));
  if (threads <= 1) {
    BodyValidator bodies(c);
    std::vector<std::pair<uint32_t, ValType>> locals;
    for (size_t i = 0; i < m.code.size(); ++i) validate(bodies, locals, i);
    return;
  }
  std::atomic<size_t> next_chunk{0};
  std::mutex failed_mutex;
  size_t failed_at = SIZE_MAX;  // the first invalid function found, and what it threw
  std::exception_ptr failure;
  auto fail = [&](size_t i) {
    std::lock_guard lock(failed_mutex);
    if (i < failed_at) {
      failed_at = i;
      failure = std::current_exception();
    }
  };
  // Nothing escapes a worker (a thread would terminate the process): what it throws, out of
  // memory included, is kept as its function's error.
  auto worker = [&] {
    size_t chunk = 0;
    try {
      BodyValidator bodies(c);
      std::vector<std::pair<uint32_t, ValType>> locals;
      while ((chunk = next_chunk.fetch_add(1)) < chunks) {
        const size_t begin = chunk * kFunctionsPerChunk, end = std::min(m.code.size(), begin + kFunctionsPerChunk);
        {
          std::lock_guard lock(failed_mutex);
          if (begin > failed_at) return;  // nothing here can be the first
        }
        for (size_t i = begin; i < end; ++i) {
          try {
            validate(bodies, locals, i);
          } catch (...) {
            fail(i);
            break;
          }
        }
      }
    } catch (...) {  // the validator's own set-up: blame the chunk's first function
      fail(std::min(chunk, chunks) * kFunctionsPerChunk);
    }
  };
  {
    // Joined on leaving this block, every way out, before the state the threads share goes.
    struct Pool {
      std::vector<std::thread> threads;
      ~Pool() {
        for (auto& t : threads) t.join();
      }
    } pool;
    try {
      pool.threads.reserve(threads - 1);
      for (unsigned k = 1; k < threads; ++k) pool.threads.emplace_back(worker);
    } catch (...) {  // no thread (a process limit) or no memory for one: fewer do all the chunks
    }
    worker();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void validate_module(const Module& m) {
  Ctx c(m);
  const size_t types = m.types.size();
  check_types(c);
  for (const auto& im : m.imports) {
    switch (im.kind) {
      case ExternKind::kFunc: func_type_at(c, im.func_type); c.func_types.push_back(im.func_type); break;
      case ExternKind::kTable: check_table(im.table, types); c.tables.push_back(im.table); break;
      case ExternKind::kMemory:
        check_memory(im.memory);
        ++c.memories;
        c.memory64.push_back(im.memory.address64);
        break;
      case ExternKind::kGlobal:
        check_valtype(im.global.type, types);
        c.globals.push_back(im.global);
        ++c.imported_globals;
        break;
      case ExternKind::kTag: check_tag(c, im.func_type); c.tags.push_back(im.func_type); break;
    }
  }
  for (uint32_t t : m.tags) {
    check_tag(c, t);
    c.tags.push_back(t);
  }
  for (uint32_t t : m.functions) {
    func_type_at(c, t);
    c.func_types.push_back(t);
  }
  for (const auto& t : m.tables) {
    check_table(t, types);
    // Without an initializer the elements start null, which a non-nullable table cannot hold.
    if (!t.init && !defaultable(t.element)) invalid("type mismatch");
    c.tables.push_back(t);
  }
  for (const auto& mem : m.memories) {
    check_memory(mem);
    ++c.memories;
    c.memory64.push_back(mem.address64);
  }
  // Functions a body may name with ref.func: those referenced outside function bodies (an index
  // past the last function is left to validation, which says it is unknown).
  c.refs.assign(c.func_types.size(), false);
  auto declare_ref = [&](uint32_t f) {
    if (f < c.refs.size()) c.refs[f] = true;
  };
  auto collect_refs = [&](const Expr& e) {
    // A constant expression's ref.func instructions (GC's allocations may hold several); the
    // walk stops at anything not constant, which validation then rejects.
    BinaryReader r(e.bytes.data(), e.bytes.size());
    try {
      while (!r.at_end()) {
        Instruction in = read_instruction(r);
        if (!in.constant()) return;
        if (in.opcode == Opcode::ref_func) declare_ref(in.x);
      }
    } catch (const DecodeError&) {  // a module built by hand, not decoded: validation says what is wrong
    }
  };
  for (const auto& g : m.globals) collect_refs(g.init);
  for (const auto& t : m.tables)
    if (t.init) collect_refs(*t.init);
  for (const auto& e : m.elements)
    for (const auto& x : e.init) collect_refs(x);
  for (const auto& ex : m.exports)
    if (ex.kind == ExternKind::kFunc) declare_ref(ex.index);
  BodyValidator constants(c);
  // Table initializers see the imported globals only (the table section comes first), and each
  // global's initialiser the imported globals and the globals before it.
  for (const auto& t : m.tables)
    if (t.init) constants.const_expr(*t.init, t.element);
  for (const auto& g : m.globals) {
    check_valtype(g.type.type, types);
    constants.const_expr(g.init, g.type.type);
    c.globals.push_back(g.type);
  }
  std::set<std::string> names;
  for (const auto& ex : m.exports) {
    if (!names.insert(ex.name).second) invalid("duplicate export name");
    switch (ex.kind) {
      case ExternKind::kFunc: if (ex.index >= c.func_types.size()) invalid("unknown function"); break;
      case ExternKind::kTable: if (ex.index >= c.tables.size()) invalid("unknown table"); break;
      case ExternKind::kMemory: if (ex.index >= c.memories) invalid("unknown memory"); break;
      case ExternKind::kGlobal: if (ex.index >= c.globals.size()) invalid("unknown global"); break;
      case ExternKind::kTag: if (ex.index >= c.tags.size()) invalid("unknown tag"); break;
    }
  }
  if (m.start) {
    if (*m.start >= c.func_types.size()) invalid("unknown function");
    const FuncType& ft = func_type_at(c, c.func_types[*m.start]);
    if (!ft.params.empty() || !ft.results.empty()) invalid("start function");
  }
  for (const auto& e : m.elements) {
    check_valtype(e.type, types);
    for (const auto& x : e.init) constants.const_expr(x, e.type);
    if (e.mode == ElemSegment::kActive) {
      if (e.table >= c.tables.size()) invalid("unknown table");
      if (!matches(c, e.type, c.tables[e.table].element)) invalid("type mismatch");
      constants.const_expr(e.offset, c.tables[e.table].limits.address64 ? ValType::kI64 : ValType::kI32);
    }
  }
  for (const auto& d : m.data)
    if (d.mode == DataSegment::kActive) {
      if (d.memory >= c.memories) invalid("unknown memory");
      constants.const_expr(d.offset, c.memory64[d.memory] ? ValType::kI64 : ValType::kI32);
    }
  validate_bodies(c);
}

}  // namespace dlab::wasm
