#pragma once
// What TAGE and ITTAGE share: the index and partial tag of each tagged table, from the branch's pc
// and the global history folded to the table's length (one fold for the index, two for the tag,
// one of them a bit narrower, so that a history and its shift do not give one tag). Private to the
// library.
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dispatchlab/predictors/global_history.h"
#include "dispatchlab/predictors/ittage.h"

namespace dlab::predictors::detail {

// Where a branch falls in one tagged table: the entry's index and the partial tag it must carry.
struct TaggedLookup {
  uint32_t index;
  uint16_t tag;
};

class TaggedIndexer {
 public:
  explicit TaggedIndexer(const std::vector<TaggedTableConfig>& tables) : tables_(tables) {
    if (tables.empty()) throw std::invalid_argument("a tagged predictor needs at least one tagged table");
    for (size_t i = 0; i < tables.size(); ++i) {
      const auto& t = tables[i];
      if (t.log_entries < 1 || t.log_entries > 20) throw std::invalid_argument(fmt::format("table {}: log2 entries must be 1 to 20, not {}", i + 1, t.log_entries));
      if (t.tag_bits < 1 || t.tag_bits > 16) throw std::invalid_argument(fmt::format("table {}: tag bits must be 1 to 16, not {}", i + 1, t.tag_bits));
      if (t.history > GlobalHistory::kMaxLength)
        throw std::invalid_argument(fmt::format("table {}: a history of {} bits is longer than the {} kept", i + 1, t.history, GlobalHistory::kMaxLength));
      if (i > 0 && t.history < tables[i - 1].history) throw std::invalid_argument("the tagged tables must come by increasing history");
    }
  }
  // The folds are kept by the history: made on first use, and a predictor reads one history only.
  void bind(GlobalHistory& h) {
    if (history_ == &h) return;
    if (history_) throw std::logic_error("a predictor is bound to one GlobalHistory");
    history_ = &h;
    for (const auto& t : tables_)
      folds_.push_back({h.add_fold(t.history, t.log_entries), h.add_fold(t.history, t.tag_bits), h.add_fold(t.history, t.tag_bits > 1 ? t.tag_bits - 1 : 1)});
  }
  size_t size() const { return tables_.size(); }
  const TaggedTableConfig& table(size_t i) const { return tables_[i]; }
  uint32_t index(size_t i, uint64_t pc) const {
    const auto& t = tables_[i];
    uint64_t p = pc ^ (pc >> t.log_entries) ^ (pc >> (2 * t.log_entries)) ^ (i * 0x5bd1e995u);
    return static_cast<uint32_t>((p ^ history_->fold(folds_[i].index)) & ((1u << t.log_entries) - 1));
  }
  uint16_t tag(size_t i, uint64_t pc) const {
    const auto& t = tables_[i];
    uint64_t p = (pc >> 1) ^ (pc >> (t.tag_bits + 3));
    uint64_t v = p ^ history_->fold(folds_[i].tag1) ^ (static_cast<uint64_t>(history_->fold(folds_[i].tag2)) << 1);
    return static_cast<uint16_t>(v & ((1u << t.tag_bits) - 1));
  }

 private:
  struct Folds {
    uint32_t index, tag1, tag2;
  };
  std::vector<TaggedTableConfig> tables_;
  GlobalHistory* history_ = nullptr;
  std::vector<Folds> folds_;
};

inline uint32_t base_index(uint64_t pc, uint32_t log_entries) {
  return static_cast<uint32_t>((pc ^ (pc >> log_entries)) & ((1u << log_entries) - 1));
}

// The tagged table of longest history whose entry hits (the provider) and the next one down (the
// alternate prediction), -1 where there is none: the lookup of both papers.
template <class Hit>
std::pair<int, int> provider_and_alternate(size_t tables, Hit hit) {
  int provider = -1;
  for (int i = static_cast<int>(tables) - 1; i >= 0; --i)
    if (hit(i)) {
      if (provider >= 0) return {provider, i};
      provider = i;
    }
  return {provider, -1};
}

// Which longer-history table a misprediction allocates in, the papers' way (Seznec and Michaud,
// JILP 2006, section 3.2.3): among the tables after the provider whose entry is free (`free(j)`),
// a shorter one is chosen twice as often as the next, never always the first. Always the first
// makes two contexts that meet at one index of the next table evict each other there forever,
// neither ever reaching a longer table: an ITTAGE of 64 KB then missed 59% of a period-449 target
// sequence it had seen 30 times. The choice is drawn from the predictor's own generator, seeded
// the same every time, so a trace's counts repeat. -1 when no entry is free.
class AllocationChooser {
 public:
  template <class Free>
  int choose(int provider, int tables, Free free) {
    int candidates[32];
    int n = 0;
    for (int j = provider + 1; j < tables && n < 32; ++j)
      if (free(j)) candidates[n++] = j;
    if (n == 0) return -1;
    // Weights 2^(n-1), ..., 2, 1 (n is at most the 16-odd tables of a row: no overflow).
    const uint64_t total = (uint64_t{1} << n) - 1;
    uint64_t draw = next() % total;
    for (int k = 0; k < n; ++k) {
      const uint64_t weight = uint64_t{1} << (n - 1 - k);
      if (draw < weight) return candidates[k];
      draw -= weight;
    }
    return candidates[n - 1];
  }

 private:
  // xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators", 2016).
  uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace dlab::predictors::detail
