// Evaluating a validated constant expression at instantiation (private to runtime/).
#pragma once

#include <cstdint>
#include <utility>

#include "dispatchlab/interpreter/runtime.h"
#include "engines/machine.h"

namespace dlab::wasm::runtime_impl {

// The consts, global.get, ref.null / ref.func, extended-const's i32/i64 add, sub and mul, and
// GC's allocations, ref.i31 and the extern / any conversions: the value's two slots (the second
// a v128's high half). const_expr.cc says how.
std::pair<uint64_t, uint64_t> eval_const(Machine& m, const Instance& inst, const Expr& e);

}  // namespace dlab::wasm::runtime_impl
