#include "dispatchlab/harness/branch_penalty.h"

#include <array>
#include <utility>

namespace dlab {
namespace {

// kTargets functions, each different code (its own constant) so that no two are merged; not
// inlined, so each call is an indirect call and a return (the return stack predicts the return).
template <uint64_t K>
__attribute__((noinline)) uint64_t target(uint64_t x) {
  asm volatile("" : "+r"(x));  // opaque: the call cannot be folded into its caller's arithmetic
  return x * 0x9e3779b97f4a7c15ull + K;
}

template <size_t... I>
constexpr std::array<uint64_t (*)(uint64_t), sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {&target<I + 1>...};
}

const auto kTable = make_table(std::make_index_sequence<kTargets>());

}  // namespace

std::vector<uint8_t> target_sequence(TargetOrder order) {
  std::vector<uint8_t> s(kSequenceLength);
  uint64_t x = 0x2545f4914f6cdd1dull;  // fixed seed: every machine runs the same sequence
  for (size_t i = 0; i < s.size(); ++i) {
    if (order == TargetOrder::pattern) {
      s[i] = static_cast<uint8_t>(i % kPatternPeriod);
    } else {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64 (G. Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8(14), 2003)
      s[i] = static_cast<uint8_t>((x >> 32) % kTargets);
    }
  }
  return s;
}

double unavoidable_mispredict_rate() { return static_cast<double>(kTargets - 1) / kTargets; }

uint64_t run_indirect_calls(const std::vector<uint8_t>& sequence, uint64_t calls) {
  uint64_t acc = 1;
  const size_t n = sequence.size();
  size_t i = 0;
  for (uint64_t c = 0; c < calls; ++c) {
    acc = kTable[sequence[i]](acc);
    if (++i == n) i = 0;
  }
  return acc;
}

}  // namespace dlab
