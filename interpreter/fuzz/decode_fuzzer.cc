// libFuzzer target: arbitrary bytes through decoding, validation, instantiation (import
// resolution, allocation, lowering of every function in every dispatch mode, element and data
// segments) and execution: the start function and every exported function (called with zero
// arguments) run in every dispatch mode under a fuel limit (this build defines DLAB_FUEL: every
// branch and call spends a unit), so a program that loops forever ends in a trap. Each input ends
// in an instance or in DecodeError, ValidationError, LinkError, Trap or ImplementationLimit;
// anything else (a crash, a sanitizer report, another exception, Unsupported for a valid module)
// is a bug. Every import is satisfied by a host object of the imported type. The GC heap is small
// (kHeapLimit, 64 KiB), so programs that allocate collect while they run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/validator.h"

namespace {

using namespace dlab::wasm;

// The module's types made canonical as instantiation will make them (typed function references
// and GC name type indices), so host objects of the imported types link.
struct Canonical {
  Instance ids;  // only its type_ids
  Canonical(Runtime& rt, const Module& m) { ids.type_ids = rt.canonical_ids(m); }
  ValType operator()(ValType t) const { return Runtime::canonical_type(ids, t); }
  uint32_t id(uint32_t type_index) const { return ids.type_ids.at(type_index); }
};
void provide_imports(Runtime& rt, const Module& m) {
  std::map<std::string, ExternMap> modules;
  const Canonical canonical(rt, m);
  for (const auto& im : m.imports) {
    ExternVal v;
    v.kind = im.kind;
    switch (im.kind) {
      case ExternKind::kFunc:
        v.func = rt.host_function(canonical.id(im.func_type), [](HostCall&) {});
        break;
      case ExternKind::kTable: {
        TableType t = im.table;
        t.element = canonical(t.element);
        t.limits.min = std::min<uint32_t>(t.limits.min, 1 << 16);  // a fuzzed minimum may be 2^32 - 1
        if (t.limits.min != im.table.limits.min) continue;          // cannot provide it: LinkError
        v.table = rt.table(t);
        break;
      }
      case ExternKind::kMemory:
        if (im.memory.min > 256) continue;  // keep the fuzzer's memory bounded: LinkError
        v.memory = rt.memory(im.memory);
        break;
      case ExternKind::kGlobal: {
        GlobalType g = im.global;
        g.type = canonical(g.type);
        v.global = rt.global(g, 0);
        break;
      }
      case ExternKind::kTag: {
        v.tag = rt.tag(canonical.id(im.func_type));  // the canonical type: its id matches the import's
        break;
      }
    }
    modules[im.module][im.name] = v;
  }
  for (auto& [name, exports] : modules) rt.register_module(name, std::move(exports));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Module m;
  try {
    m = decode_valid_module(data, size);
  } catch (const DecodeError&) {
    return 0;
  } catch (const ValidationError&) {
    return 0;
  }
  // What the one reading accepted, the two-pass way (every body read by the decoder, then by the
  // validator) must accept too: a malformed body the validator's reading let through aborts here.
  // (Its rejections are the two-pass way's by construction: decode_valid.cc.)
  try {
    validate_module(decode_module(data, size));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decode_valid_module accepted a module the two-pass reading rejects: %s\n", e.what());
    std::abort();
  }
  // Large declared memories and tables are valid but would make every run allocate gigabytes.
  for (const auto& mem : m.memories)
    if (mem.min > 256) return 0;
  for (const auto& t : m.tables)
    if (t.limits.min > (1u << 16)) return 0;
  constexpr uint64_t kFuel = 20'000;  // branches and calls per invocation: milliseconds, not forever
  // A small GC heap (the smallest --heap-limit takes), so that fuzzed allocations collect, and
  // exceptions are collected, after a couple of thousand small objects.
  constexpr uint64_t kHeapLimit = 64 * 1024;
  // Every dispatch mode, with the plain lowering and with every technique (fold+fuse+super), in the
  // stack IR and the register IR (which rewrites every operand's location), and with guard pages
  // where an engine has them (out-of-bounds accesses fault instead of comparing): differential,
  // each export's outcome (results or trap message) must be the same in every configuration, so a
  // peephole rewrite that changes meaning aborts here. Fuel is spent per branch and call, which the
  // rewrites keep, so fuel traps land at the same point too.
  // Plain and every technique (lowerings.def's rows, all on by default), each in both IRs; named
  // through the struct's members, not its field order, so a new technique cannot shift them.
  static const std::vector<Lowering> kFuzzedLowerings = [] {
    std::vector<Lowering> l = {Lowering::none(), Lowering{}};
    for (size_t i = 0, n = l.size(); i < n; ++i) {
      l.push_back(l[i]);
      l.back().ir = Ir::kRegister;
    }
    return l;
  }();
  std::vector<std::string> expected;
  bool first = true;
  for (Bounds bounds : bounds_list())
  for (Dispatch d : dispatch_modes())
    for (Lowering lowering : kFuzzedLowerings) {
      if (!engine_unavailable(d, Placement::kSp, Budget::kNone, bounds).empty()) continue;  // no such engine
      if (!ir_unavailable(lowering.ir, d, Placement::kSp, Budget::kNone, bounds).empty()) continue;  // not compiled into this engine
      Runtime rt(EngineConfig{d, Placement::kSp, Budget::kNone, bounds});
      rt.set_lowering(lowering);
      rt.set_heap_limit(kHeapLimit);
      provide_imports(rt, m);
      Instance* inst = nullptr;
      std::vector<std::string> outcomes;
      try {
        inst = &rt.instantiate(m, /*run_start=*/false);
        if (m.start) {
          rt.set_fuel(kFuel);
          rt.invoke(inst->funcs.at(*m.start), {});
        }
      } catch (const LinkError&) {
      } catch (const Trap& t) {
        outcomes.push_back(std::string("start trap: ") + t.what());
      } catch (const ImplementationLimit&) {
      }  // Unsupported escapes: every valid instruction has a handler, so it is a bug.
      if (inst)
        for (const auto& [name, ex] : inst->exports) {
          if (ex.kind != ExternKind::kFunc) continue;
          std::vector<Value> args;
          for (ValType t : ex.func->type.params) args.push_back(Value{t, 0, 0});
          rt.set_fuel(kFuel);
          std::string outcome = name + ":";
          try {
            // A reference is an address in this configuration's runtime: compared as null or not.
            for (const Value& v : rt.invoke(ex.func, args))
              outcome += is_ref(v.type) ? (v.lo ? " ref" : " null") : " " + std::to_string(v.lo) + "/" + std::to_string(v.hi);
          } catch (const Trap& t) {
            outcome += std::string(" trap ") + t.what();
          }
          outcomes.push_back(std::move(outcome));
        }
      // The collector scans the operand stack conservatively, and a lowering changes which dead
      // slots still hold old references: how much survives, and so whether an allocation near the
      // limit fails, may differ. An "out of memory" outcome is left out of the comparison.
      if (first) {
        expected = std::move(outcomes);
      } else {
        if (outcomes.size() != expected.size()) __builtin_trap();
        for (size_t k = 0; k < outcomes.size(); ++k) {
          auto oom = [](const std::string& s) { return s.find("out of memory") != std::string::npos; };
          if (outcomes[k] != expected[k] && !oom(outcomes[k]) && !oom(expected[k])) __builtin_trap();
        }
      }
      first = false;
    }
  return 0;
}
