#include "dispatchlab/interpreter/linker.h"

#include <fmt/format.h>

namespace dlab::wasm {

namespace {

// Limits `have` (the provided) match `want` (the import's) when have's range lies inside want's.
bool limits_match(const Limits& have, const Limits& want) {
  if (have.address64 != want.address64) return false;  // an i64-indexed memory is another type
  if (have.min < want.min) return false;
  if (!want.max) return true;
  return have.max && *have.max <= *want.max;
}

// An immutable global's value type may be a subtype of the import's (a mutable one must be the
// same type). Concrete references compare by their (canonical) heap type: with no declared
// supertypes before GC, a defined type's supertypes are itself and `func`.
bool value_matches(ValType have, ValType want) {
  if (have == want) return true;
  if (!is_ref(have) || !is_ref(want) || (ref_nullable(have) && !ref_nullable(want))) return false;
  HeapType h = ref_heap(have), w = ref_heap(want);
  bool h_defined = h >= kHeapTypeIndex, w_defined = w >= kHeapTypeIndex;
  if (h == w) return true;
  if (w == kHeapFunc) return h_defined || h == kHeapNoFunc;
  if (w == kHeapExtern) return h == kHeapNoExtern;
  return h == kHeapNoFunc && w_defined;
}

}  // namespace

bool extern_matches(const ExternType& have, const Import& want, const Module& m) {
  if (have.kind != want.kind) return false;
  switch (want.kind) {
    case ExternKind::kFunc: {
      if (want.func_type >= m.types.size()) return false;
      const FuncType& t = m.types[want.func_type];
      return t.params == have.func.params && t.results == have.func.results;
    }
    case ExternKind::kTable: return have.table.element == want.table.element && limits_match(have.table.limits, want.table.limits);
    case ExternKind::kMemory: return limits_match(have.memory, want.memory);
    case ExternKind::kGlobal:
      if (have.global.mutable_ != want.global.mutable_) return false;
      return want.global.mutable_ ? have.global.type == want.global.type : value_matches(have.global.type, want.global.type);
  }
  return false;
}

namespace {

ExternType func_type(FuncType t) {
  ExternType e;
  e.kind = ExternKind::kFunc;
  e.func = std::move(t);
  return e;
}

}  // namespace

Linker::Linker() { registry_["spectest"] = spectest_exports(); }

Exports Linker::link(const Module& m) const {
  // The actual extern type of everything in each index space: provided types for imports.
  std::vector<ExternType> funcs, tables, memories, globals;
  for (const auto& im : m.imports) {
    auto mod = registry_.find(im.module);
    if (mod == registry_.end()) throw LinkError(fmt::format("unknown import {}.{} (no module named {})", im.module, im.name, im.module));
    auto it = mod->second.find(im.name);
    if (it == mod->second.end()) throw LinkError(fmt::format("unknown import {}.{}", im.module, im.name));
    if (!extern_matches(it->second, im, m)) {
      // Table and memory sizes change at run time (grow); a limits mismatch says so, because a
      // linker that has not executed anything cannot know the current size.
      bool limits = (im.kind == ExternKind::kTable && it->second.kind == im.kind && it->second.table.element == im.table.element) ||
                    (im.kind == ExternKind::kMemory && it->second.kind == im.kind);
      throw LinkError(fmt::format("incompatible import type{} for {}.{}", limits ? " (limits)" : "", im.module, im.name));
    }
    switch (im.kind) {
      case ExternKind::kFunc: funcs.push_back(it->second); break;
      case ExternKind::kTable: tables.push_back(it->second); break;
      case ExternKind::kMemory: memories.push_back(it->second); break;
      case ExternKind::kGlobal: globals.push_back(it->second); break;
    }
  }
  for (uint32_t t : m.functions) funcs.push_back(func_type(m.types.at(t)));
  for (const auto& t : m.tables) {
    ExternType e;
    e.kind = ExternKind::kTable;
    e.table = t;
    tables.push_back(e);
  }
  for (const auto& l : m.memories) {
    ExternType e;
    e.kind = ExternKind::kMemory;
    e.memory = l;
    memories.push_back(e);
  }
  for (const auto& g : m.globals) {
    ExternType e;
    e.kind = ExternKind::kGlobal;
    e.global = g.type;
    globals.push_back(e);
  }
  Exports out;
  for (const auto& ex : m.exports) {
    const auto& space = ex.kind == ExternKind::kFunc ? funcs : ex.kind == ExternKind::kTable ? tables : ex.kind == ExternKind::kMemory ? memories : globals;
    out[ex.name] = space.at(ex.index);
  }
  return out;
}

}  // namespace dlab::wasm
