#include "dispatchlab/predictors/global_history.h"

#include <stdexcept>

#include <fmt/format.h>

namespace dlab::predictors {
namespace {

constexpr uint64_t kRing = GlobalHistory::kMaxLength + 1;

// The path bits of an indirect branch: its target's low bits mixed with the pc's, so that two
// sites going to one target differ.
uint64_t path_hash(uint64_t pc, uint64_t target) { return target ^ (target >> 5) ^ (target >> 13) ^ (pc >> 2); }

}  // namespace

GlobalHistory::GlobalHistory(uint32_t path_bits) : path_bits_(path_bits), bits_(kRing, 0) {
  if (path_bits < 1 || path_bits > 32) throw std::invalid_argument(fmt::format("path bits must be 1 to 32, not {}", path_bits));
}

void GlobalHistory::record(const BranchEvent& b) {
  switch (b.kind) {
    case BranchKind::kConditional:
      push(b.taken);
      break;
    case BranchKind::kIndirectJump:
    case BranchKind::kIndirectCall: {
      uint64_t h = path_hash(b.pc, b.target);
      for (uint32_t i = 0; i < path_bits_; ++i) push((h >> i) & 1);
      break;
    }
    case BranchKind::kReturn:
    case BranchKind::kDirect:
      break;
  }
}

void GlobalHistory::push(bool bit) {
  bits_[pushed_ % kRing] = bit;
  ++pushed_;
  for (Fold& f : folds_) {
    // Every bit ages by one: rotate left within the width, put the new bit at 0, take out the bit
    // that has just become `length` old (it sits at length mod width).
    uint32_t v = ((f.value << 1) | (f.value >> f.rotate_from)) & f.mask;
    v ^= bit ? 1u : 0u;
    if (pushed_ > f.length && bits_[(pushed_ - 1 - f.length) % kRing]) v ^= f.leaving;
    f.value = f.length == 0 ? 0 : v;
  }
}

bool GlobalHistory::bit(uint32_t age) const {
  if (age >= pushed_ || age > kMaxLength) return false;
  return bits_[(pushed_ - 1 - age) % kRing] != 0;
}

uint32_t GlobalHistory::fold_slowly(uint32_t length, uint32_t width) const {
  uint32_t v = 0;
  for (uint32_t a = 0; a < length; ++a)
    if (bit(a)) v ^= 1u << (a % width);
  return v;
}

uint32_t GlobalHistory::add_fold(uint32_t length, uint32_t width) {
  if (length > kMaxLength) throw std::invalid_argument(fmt::format("a history of {} bits is longer than the {} kept", length, kMaxLength));
  if (width < 1 || width > 31) throw std::invalid_argument(fmt::format("a fold's width must be 1 to 31, not {}", width));
  for (uint32_t h = 0; h < folds_.size(); ++h)
    if (folds_[h].length == length && folds_[h].width == width) return h;
  folds_.push_back({length, width, (1u << width) - 1, fold_slowly(length, width), width - 1, length == 0 ? 0u : 1u << (length % width)});
  return static_cast<uint32_t>(folds_.size() - 1);
}

}  // namespace dlab::predictors
