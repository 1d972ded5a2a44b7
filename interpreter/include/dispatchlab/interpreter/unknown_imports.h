// Function imports that no registered module provides, linked to functions that trap when called
// (wasmtime's unknown-imports-trap): for a program built for a richer host that its runs never call
// into, such as Ruby's JavaScript bridge in a Ruby built for browsers and Node.js, or a plugin hook.
// A run that does call one stops with the trap "unknown import M.N called", never with a value made up.
#pragma once

#include <string>
#include <vector>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// After every real provider is registered (register_wasi first): each function import of `m` that
// none provides gets its trapping function. Returns "M.N" of each, in import order. Other kinds of
// import (a table, a memory, a global, a tag) stay unknown: instantiation still refuses them.
std::vector<std::string> link_unknown_imports_as_traps(Runtime& rt, const Module& m);

}  // namespace dlab::wasm
