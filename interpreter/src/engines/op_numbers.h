// Op words that are the op numbers (word i is op i): the switch engines' words, and the counting
// engine's (dispatch_tail.inc's DLW_PROFILE), so that lowered code reads back as ops.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engines/ops.h"

namespace dlab::wasm {

struct OpNumbers {
  uint64_t w[static_cast<size_t>(Op::kCount)];
};

inline constexpr OpNumbers kOpNumbers = [] {
  OpNumbers n{};
  for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i) n.w[i] = i;
  return n;
}();

}  // namespace dlab::wasm
