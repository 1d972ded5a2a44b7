// The out-of-line GC instructions (gc_ops.cc), each a machine.h GcOpFn: what the lowering writes
// into a gc_op instruction and what constant expressions run.
#pragma once

#include "engines/machine.h"

namespace dlab::wasm {

#define DLW_GC_OPS(X) \
  X(gc_struct_new)    \
  X(gc_struct_new_default) \
  X(gc_array_new)     \
  X(gc_array_new_default) \
  X(gc_array_new_fixed) \
  X(gc_array_new_data) \
  X(gc_array_new_elem) \
  X(gc_array_fill)    \
  X(gc_array_copy)    \
  X(gc_array_init_data) \
  X(gc_array_init_elem)
#define DLW_DECLARE_GC_OP(name) uint64_t* name(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept;
DLW_GC_OPS(DLW_DECLARE_GC_OP)
#undef DLW_DECLARE_GC_OP

}  // namespace dlab::wasm
