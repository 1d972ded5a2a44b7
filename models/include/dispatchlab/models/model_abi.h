// The data every model handler sees: the executor and the instruction stream. Shared by the
// generated handler files and the C++ driver. It includes no headers, so the generated files
// cross-compile (`clang -S --target=aarch64-linux-gnu`) without a sysroot.
#pragma once

typedef __UINT64_TYPE__ dl_u64;
typedef __UINT32_TYPE__ dl_u32;

// One instruction: which handler (op) and its operand (a local index, a constant, an address).
struct DlInst {
  dl_u32 op;
  dl_u32 imm;
};

struct DlExec {
  dl_u64* base;        // value stack (base[-1] is a scratch slot, see placement_macros.h)
  dl_u64 len;          // stack height, for the placements that keep it in memory
  dl_u64 locals[16];
  dl_u64* heap;        // 1024 words
  dl_u64* own;         // one slot per K-copy control handler copy
};

// Runs a program until its exit instruction; returns the top of the stack (0 when empty).
typedef dl_u64 (*DlEntry)(struct DlExec* ex, const struct DlInst* program);
