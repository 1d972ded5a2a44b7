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

namespace dlab::wasm {

struct ExternType {
  ExternKind kind = ExternKind::kFunc;
  FuncType func;  // kFunc; kTag: the tag's type
  TableType table;
  Limits memory;
  GlobalType global;
  // The type section that the module type indices in these types name (typed function
  // references): the exporting module's; null where there are none (host objects, and the
  // runtime's objects, whose types are canonical).
  std::shared_ptr<const std::vector<FuncType>> types;
};

using Exports = std::map<std::string, ExternType>;

class LinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The import-matching rules: function types equal; table and memory limits of `have` inside the
// import's; global mutability equal, and the type equal (mutable) or a subtype (immutable). Types
// that name module type indices compare structurally, across the two modules' type sections.
// Shared by this type-level linker and instantiation.
bool extern_matches(const ExternType& have, const Import& want, const Module& m);

// The spec tests' host module: print*, global_i32/i64/f32/f64, table (10..20 funcref), memory (1..2).
Exports spectest_exports();

class Linker {
 public:
  Linker();  // with "spectest" registered
  // Resolves every import of `m` (throws LinkError "unknown import" or "incompatible import
  // type") and returns the module's exports with their actual types.
  Exports link(const Module& m) const;
  void register_module(const std::string& name, Exports exports) { registry_[name] = std::move(exports); }

 private:
  std::map<std::string, Exports> registry_;
};

}  // namespace dlab::wasm
