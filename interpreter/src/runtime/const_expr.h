// Evaluating a validated constant expression at instantiation (private to runtime/).
#pragma once

#include <cstdint>
#include <utility>

#include "dispatchlab/interpreter/runtime.h"
#include "engines/machine.h"

namespace dlab::wasm::runtime_impl {

// The value of constant expression `e` of type `t`: its two slots (the second a v128's high
// half). The expression is lowered as a function () -> (t) with the instance's lowering (`words`,
// `lowering`) and run in `rt`'s engine, so that constant expressions have no interpreter of their
// own; one that is a single const, ref.null, ref.func or global.get is read directly instead
// (const_expr.cc says why).
std::pair<uint64_t, uint64_t> eval_const(Runtime& rt, Machine& m, Instance& inst, const Expr& e, ValType t, const uint64_t* words,
                                         Lowering lowering);

// Whether eval_const reads single-instruction expressions directly: off only for the test that
// checks the direct reading agrees with the engine.
inline bool g_const_fast_path = true;

}  // namespace dlab::wasm::runtime_impl
