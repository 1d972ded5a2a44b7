#pragma once
// The global branch history every history-based predictor of this library reads: one bit a
// conditional branch (taken or not), and `path_bits` bits of a hash of the target and pc for every
// indirect jump and indirect call (path history). Returns and direct branches add nothing. The
// history is the trace's, not a predictor's: every predictor sees the same one.
//
// Predictors index their tables with *folded* histories: the last `length` bits folded into `width`
// bits (bit of age a lands at a mod width), kept up to date at each push rather than recomputed.
#include <cstdint>
#include <vector>

#include "dispatchlab/predictors/branch_event.h"

namespace dlab::predictors {

class GlobalHistory {
 public:
  static constexpr uint32_t kMaxLength = 8191;  // the longest history a fold may read
  // path_bits: bits an indirect jump or call adds (1..32).
  explicit GlobalHistory(uint32_t path_bits);

  // Adds the branch's bits (after the predictors have been updated with it).
  void record(const BranchEvent& branch);
  void push(bool bit);
  // The bit of age `age` (0: the most recent); 0 past what was pushed.
  bool bit(uint32_t age) const;
  uint64_t pushed() const { return pushed_; }
  uint32_t path_bits() const { return path_bits_; }

  // A fold of the last `length` bits (0..kMaxLength) into `width` bits (1..31); computed now from
  // the bits already pushed, then kept up to date. Returns its handle: the same one for the same
  // length and width (predictors of one simulation share their folds; each push updates every
  // fold, most of a branch simulation's time).
  uint32_t add_fold(uint32_t length, uint32_t width);
  uint32_t fold(uint32_t handle) const { return folds_[handle].value; }
  // The same fold, computed from scratch (for tests).
  uint32_t fold_slowly(uint32_t length, uint32_t width) const;

 private:
  struct Fold {
    uint32_t length, width, mask, value;
    uint32_t rotate_from;  // width - 1: the bit that rotates round to bit 0
    uint32_t leaving;      // 1 << (length mod width): where the bit `length` old sits; 0 for length 0
  };
  uint32_t path_bits_;
  std::vector<uint8_t> bits_;  // a ring of kMaxLength + 1 bits, indexed by push number
  uint64_t pushed_ = 0;
  std::vector<Fold> folds_;
};

}  // namespace dlab::predictors
