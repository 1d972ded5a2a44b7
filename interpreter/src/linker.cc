#include "dispatchlab/interpreter/linker.h"

#include <set>

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

// Two types, each naming indices of its own module's type section (`a_types`, `b_types`; null
// when its indices are canonical ids instead): equal when they are the same abstract or canonical
// type, or both name defined types whose parameters and results are equal in turn (a pair already
// being compared counts as equal, so self-referencing types compare).
using Types = const std::vector<FuncType>*;
using Assumed = std::set<std::pair<uint32_t, uint32_t>>;
bool func_types_equal(const FuncType& a, Types at, const FuncType& b, Types bt, Assumed& assumed);
bool valtypes_equal(ValType a, Types at, ValType b, Types bt, Assumed& assumed) {
  int64_t i = is_ref(a) ? heap_type_index(ref_heap(a)) : -1, j = is_ref(b) ? heap_type_index(ref_heap(b)) : -1;
  if (i < 0 || j < 0 || !at || !bt) return i < 0 && j < 0 && a == b;
  if (ref_nullable(a) != ref_nullable(b) || static_cast<size_t>(i) >= at->size() || static_cast<size_t>(j) >= bt->size()) return false;
  if (!assumed.insert({static_cast<uint32_t>(i), static_cast<uint32_t>(j)}).second) return true;
  return func_types_equal((*at)[i], at, (*bt)[j], bt, assumed);
}
bool func_types_equal(const FuncType& a, Types at, const FuncType& b, Types bt, Assumed& assumed) {
  if (a.params.size() != b.params.size() || a.results.size() != b.results.size()) return false;
  for (size_t k = 0; k < a.params.size(); ++k)
    if (!valtypes_equal(a.params[k], at, b.params[k], bt, assumed)) return false;
  for (size_t k = 0; k < a.results.size(); ++k)
    if (!valtypes_equal(a.results[k], at, b.results[k], bt, assumed)) return false;
  return true;
}

// An immutable global's value type may be a subtype of the import's (a mutable one must be the
// same type). With no declared supertypes before GC, a defined type's supertypes are itself and
// `func`, and `nofunc` / `noextern` are below every function / extern type.
bool value_matches(ValType have, Types ht, ValType want, Types wt) {
  Assumed assumed;
  if (valtypes_equal(have, ht, want, wt, assumed)) return true;
  if (!is_ref(have) || !is_ref(want) || (ref_nullable(have) && !ref_nullable(want))) return false;
  // The same defined type, differing only in nullability: (ref $t) below (ref null $t).
  return heap_subtype(ref_heap(have), ref_heap(want), [&](HeapType h, HeapType w) {
    return valtypes_equal(ref_type(true, h), ht, ref_type(true, w), wt, assumed);
  });
}

}  // namespace

bool extern_matches(const ExternType& have, const Import& want, const Module& m) {
  if (have.kind != want.kind) return false;
  switch (want.kind) {
    case ExternKind::kFunc:
    case ExternKind::kTag: {  // a tag's type is its function type, matched exactly
      if (want.func_type >= m.types.size()) return false;
      Assumed assumed;
      return func_types_equal(have.func, have.types.get(), m.types[want.func_type], &m.types, assumed);
    }
    case ExternKind::kTable: {
      Assumed assumed;
      return valtypes_equal(have.table.element, have.types.get(), want.table.element, &m.types, assumed) &&
             limits_match(have.table.limits, want.table.limits);
    }
    case ExternKind::kMemory: return limits_match(have.memory, want.memory);
    case ExternKind::kGlobal:
      if (have.global.mutable_ != want.global.mutable_) return false;
      if (want.global.mutable_) {
        Assumed assumed;
        return valtypes_equal(have.global.type, have.types.get(), want.global.type, &m.types, assumed);
      }
      return value_matches(have.global.type, have.types.get(), want.global.type, &m.types);
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
  std::vector<ExternType> funcs, tables, memories, globals, tags;
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
      case ExternKind::kTag: tags.push_back(it->second); break;
    }
  }
  for (uint32_t t : m.functions) funcs.push_back(func_type(m.types.at(t)));
  for (uint32_t t : m.tags) {
    ExternType e = func_type(m.types.at(t));
    e.kind = ExternKind::kTag;
    tags.push_back(e);
  }
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
  // What this module defines names its own type section; imports keep their provider's.
  auto types = std::make_shared<const std::vector<FuncType>>(m.types);
  size_t imported[5] = {};
  for (const auto& im : m.imports) ++imported[static_cast<size_t>(im.kind)];
  Exports out;
  for (const auto& ex : m.exports) {
    const auto& space = ex.kind == ExternKind::kFunc     ? funcs
                        : ex.kind == ExternKind::kTable  ? tables
                        : ex.kind == ExternKind::kMemory ? memories
                        : ex.kind == ExternKind::kTag    ? tags
                                                         : globals;
    ExternType e = space.at(ex.index);
    if (ex.index >= imported[static_cast<size_t>(ex.kind)]) e.types = types;
    out[ex.name] = std::move(e);
  }
  return out;
}

}  // namespace dlab::wasm
