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

}  // namespace

ValType canonical_valtype(ValType t, const std::vector<uint32_t>& ids) {
  if (!is_ref(t)) return t;
  int64_t idx = heap_type_index(ref_heap(t));
  if (idx < 0) return t;
  return ref_type(ref_nullable(t), TypeStore::canonical_heap(ids.at(static_cast<size_t>(idx))));
}

bool extern_matches(const ExternType& have, const Import& want, const std::vector<uint32_t>& ids, const TypeStore& store) {
  if (have.kind != want.kind) return false;
  switch (want.kind) {
    case ExternKind::kFunc: return want.func_type < ids.size() && store.is_sub(have.type_id, ids[want.func_type]);
    case ExternKind::kTag: return want.func_type < ids.size() && have.type_id == ids[want.func_type];
    case ExternKind::kTable:
      return have.table.element == canonical_valtype(want.table.element, ids) && limits_match(have.table.limits, want.table.limits);
    case ExternKind::kMemory: return limits_match(have.memory, want.memory);
    case ExternKind::kGlobal: {
      if (have.global.mutable_ != want.global.mutable_) return false;
      ValType w = canonical_valtype(want.global.type, ids);
      return want.global.mutable_ ? have.global.type == w : store.val_sub(have.global.type, w);
    }
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

Linker::Linker() {
  Exports host = spectest_exports();
  for (auto& [name, e] : host)
    if (e.kind == ExternKind::kFunc) e.type_id = store_.add_func(e.func);
  registry_["spectest"] = std::move(host);
}

Exports Linker::link(const Module& m) {
  const std::vector<uint32_t> ids = store_.add(m.types);
  auto canonical_func = [&](uint32_t t, ExternKind kind) {
    ExternType e = func_type(m.types.at(t));
    for (ValType& v : e.func.params) v = canonical_valtype(v, ids);
    for (ValType& v : e.func.results) v = canonical_valtype(v, ids);
    e.kind = kind;
    e.type_id = ids.at(t);
    return e;
  };
  // The actual extern type of everything in each index space: provided types for imports.
  std::vector<ExternType> funcs, tables, memories, globals, tags;
  for (const auto& im : m.imports) {
    auto mod = registry_.find(im.module);
    if (mod == registry_.end()) throw LinkError(fmt::format("unknown import {}.{} (no module named {})", im.module, im.name, im.module));
    auto it = mod->second.find(im.name);
    if (it == mod->second.end()) throw LinkError(fmt::format("unknown import {}.{}", im.module, im.name));
    if (!extern_matches(it->second, im, ids, store_)) {
      // Table and memory sizes change at run time (grow); a limits mismatch says so, because a
      // linker that has not executed anything cannot know the current size.
      bool limits = (im.kind == ExternKind::kTable && it->second.kind == im.kind && it->second.table.element == canonical_valtype(im.table.element, ids)) ||
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
  for (uint32_t t : m.functions) funcs.push_back(canonical_func(t, ExternKind::kFunc));
  for (uint32_t t : m.tags) tags.push_back(canonical_func(t, ExternKind::kTag));
  for (const auto& t : m.tables) {
    ExternType e;
    e.kind = ExternKind::kTable;
    e.table = t;
    e.table.element = canonical_valtype(t.element, ids);
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
    e.global.type = canonical_valtype(g.type.type, ids);
    globals.push_back(e);
  }
  Exports out;
  for (const auto& ex : m.exports) {
    const auto& space = ex.kind == ExternKind::kFunc     ? funcs
                        : ex.kind == ExternKind::kTable  ? tables
                        : ex.kind == ExternKind::kMemory ? memories
                        : ex.kind == ExternKind::kTag    ? tags
                                                         : globals;
    out[ex.name] = space.at(ex.index);
  }
  return out;
}

}  // namespace dlab::wasm
