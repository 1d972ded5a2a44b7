// Linking without execution: the extern types a module exports, the `spectest` host module's, and
// import resolution against registered modules with the spec's matching rules (function types
// equal; table and memory limits a subrange; global type and mutability equal). Instantiation
// (segments, start functions) is Runtime::instantiate (runtime.h), which matches imports with the
// same rules on the provided objects' current sizes; this type-level linker is the spec runner's
// `link` stage.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/types.h"

namespace dlab::wasm {

// An extern's type with canonical types (a TypeStore's: the linker's, or the runtime's for its
// objects): defined types as kHeapCanonical + id, a function's or tag's type by its id.
struct ExternType {
  ExternKind kind = ExternKind::kFunc;
  FuncType func;         // kFunc; kTag: the tag's type
  uint32_t type_id = 0;  // kFunc, kTag: the canonical id of that type
  TableType table;
  Limits memory;
  GlobalType global;
};

using Exports = std::map<std::string, ExternType>;

class LinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The import-matching rules: a function's type a subtype of the import's, a tag's the same; table
// and memory limits of `have` inside the import's; a table's element type the same; global
// mutability equal, and the type equal (mutable) or a subtype (immutable). `have` is canonical in
// `store`; the import names its module's type indices, whose canonical ids are `ids`. Shared by
// this type-level linker and instantiation.
bool extern_matches(const ExternType& have, const Import& want, const std::vector<uint32_t>& ids, const TypeStore& store);
// A value type naming module type indices, made canonical by the module's ids.
ValType canonical_valtype(ValType t, const std::vector<uint32_t>& ids);

// The spec tests' host module: print*, global_i32/i64/f32/f64, table (10..20 funcref), memory (1..2).
Exports spectest_exports();

class Linker {
 public:
  Linker();  // with "spectest" registered
  // Resolves every import of validated module `m` (throws LinkError "unknown import" or
  // "incompatible import type") and returns the module's exports with their actual types.
  Exports link(const Module& m);
  void register_module(const std::string& name, Exports exports) { registry_[name] = std::move(exports); }

 private:
  std::map<std::string, Exports> registry_;
  TypeStore store_;
};

}  // namespace dlab::wasm
