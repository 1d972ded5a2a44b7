// Which of a function's declared locals a call must zero: the ones some path through the body may
// read before it writes them. A call zeroes a callee's locals (the spec's defaults) at every entry,
// two slots per store; for code from C compilers, whose locals are virtual registers set before
// use, most of those stores are dead. The lowering gives the locals this finds their slots first,
// and a call zeroes only those (FuncInst::zeroed_slots).
#pragma once

#include <cstdint>
#include <vector>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

// needs_zero[i] for every local i of the function (its parameters first, `params` of them, never
// zeroed: false). A declared local is false only when every read of it that can run comes after a
// write on every path to it: a forward pass over the structured control flow keeping the set of
// locals written on all paths, intersected where paths meet (a block's or an if's end, the labels
// that branches and catch clauses reach; a loop's back edges carry supersets of its entry's set,
// so a loop header keeps its entry's). Unreachable code reads nothing. A local of reference type is
// always zeroed (its default is null, and the collector scans frames). Over `max_locals` locals,
// or on a body it cannot read (never, once validated), every declared local is zeroed.
std::vector<bool> locals_needing_zero(const FunctionBody& body, size_t params, size_t max_locals = 4096);

}  // namespace dlab::wasm
