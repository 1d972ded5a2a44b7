// How dense the lowered code is: what `dlab wasm profile` reports beside its counts (the code
// words lowered, the words a run reads per dispatch), by which issue 35's item 5, the register
// forms' slots packed as 16-bit fields (commit bded602, measured and reverted), was measured.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// The words op number `op` (Profile's index) takes: its handler's length as its layout declares it
// (the counting engine checks it at every dispatch); 0 for an op lowered by hand, whose length
// varies (calls, br_table, return_rn, ...).
unsigned declared_words(size_t op);

// The words of the lowered code of every function `rt`'s instances define and have lowered (with
// lazy lowering, the default, those that were called).
uint64_t lowered_code_words(const Runtime& rt);

}  // namespace dlab::wasm
