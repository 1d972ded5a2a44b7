#include "dispatchlab/predictors/ittage.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "tagged_tables.h"

namespace dlab::predictors {
namespace {

class Ittage final : public IndirectPredictor {
 public:
  explicit Ittage(const IttageConfig& c) : config_(c), indexer_(c.tables) {
    if (c.base_log_entries < 1 || c.base_log_entries > 20) throw std::invalid_argument(fmt::format("base log2 entries must be 1 to 20, not {}", c.base_log_entries));
    if (c.confidence_bits < 1 || c.confidence_bits > 7) throw std::invalid_argument(fmt::format("confidence bits must be 1 to 7, not {}", c.confidence_bits));
    if (c.tick_log < 1 || c.tick_log > 30) throw std::invalid_argument(fmt::format("tick log must be 1 to 30, not {}", c.tick_log));
    base_.resize(size_t{1} << c.base_log_entries);
    for (const auto& t : c.tables) tables_.emplace_back(size_t{1} << t.log_entries);
    look_.resize(c.tables.size());
    max_confidence_ = static_cast<uint8_t>((1u << c.confidence_bits) - 1);
  }
  std::string name() const override {
    std::string tables;
    for (const auto& t : config_.tables)
      tables += fmt::format("{}{}x(tag {} hist {})", tables.empty() ? "" : " ", 1u << t.log_entries, t.tag_bits, t.history);
    return fmt::format("ittage(base={} tagged=[{}] confidence bits={} tick=2^{} entries={})", 1u << config_.base_log_entries, tables,
                       config_.confidence_bits, config_.tick_log, entries());
  }
  uint64_t predict(uint64_t pc, GlobalHistory& h) override {
    indexer_.bind(h);
    pc_ = pc;
    for (size_t i = 0; i < tables_.size(); ++i) look_[i] = {indexer_.index(i, pc), indexer_.tag(i, pc)};
    std::tie(provider_, alt_) = detail::provider_and_alternate(tables_.size(), [this](int i) { return hit(i); });
    base_at_ = detail::base_index(pc, config_.base_log_entries);
    alt_target_ = alt_ >= 0 ? entry(alt_).target : base_[base_at_].target;
    provider_target_ = provider_ >= 0 ? entry(provider_).target : base_[base_at_].target;
    use_alt_ = provider_ >= 0 && entry(provider_).confidence == 0 && use_alt_on_na_ >= 0;
    return use_alt_ ? alt_target_ : provider_target_;
  }
  void update(uint64_t pc, GlobalHistory& h, uint64_t target) override {
    if (pc != pc_) predict(pc, h);
    // A provider just allocated (no confidence yet) that disagreed with the alternate: which was right?
    if (provider_ >= 0 && entry(provider_).confidence == 0 && provider_target_ != alt_target_) {
      if (alt_target_ == target && use_alt_on_na_ < 7) ++use_alt_on_na_;
      else if (provider_target_ == target && use_alt_on_na_ > -8) --use_alt_on_na_;
    }
    if (provider_target_ != target) allocate(target);
    uint8_t& confidence = provider_ >= 0 ? entry(provider_).confidence : base_[base_at_].confidence;
    uint64_t& stored = provider_ >= 0 ? entry(provider_).target : base_[base_at_].target;
    if (stored == target) {
      if (confidence < max_confidence_) ++confidence;
    } else if (confidence > 0) {
      --confidence;
    } else {
      stored = target;
    }
    if (provider_ >= 0 && provider_target_ != alt_target_ && provider_target_ == target) entry(provider_).useful = 1;
    pc_ = ~uint64_t{0};
  }

 private:
  struct Entry {
    bool valid = false;
    uint16_t tag = 0;
    uint64_t target = 0;
    uint8_t confidence = 0, useful = 0;
  };
  struct BaseEntry {
    uint64_t target = 0;
    uint8_t confidence = 0;
  };
  using Look = detail::TaggedLookup;
  Entry& entry(int i) { return tables_[static_cast<size_t>(i)][look_[static_cast<size_t>(i)].index]; }
  bool hit(int i) {
    const Entry& e = entry(i);
    return e.valid && e.tag == look_[static_cast<size_t>(i)].tag;
  }
  uint64_t entries() const {
    uint64_t n = uint64_t{1} << config_.base_log_entries;
    for (const auto& t : config_.tables) n += uint64_t{1} << t.log_entries;
    return n;
  }
  void allocate(uint64_t target) {
    const int tables = static_cast<int>(tables_.size());
    const int j = chooser_.choose(provider_, tables, [this](int k) { return entry(k).useful == 0; });
    // Every table passed over with its useful bit set, up to the one chosen (all of them when none
    // is free), ticks toward clearing them all (CBP-3's TICK); an allocation ticks back.
    for (int k = provider_ + 1; k < (j >= 0 ? j : tables); ++k) tick_ += entry(k).useful != 0;
    if (j >= 0) {
      entry(j) = {true, look_[static_cast<size_t>(j)].tag, target, 0, 0};
      if (tick_ > 0) --tick_;
    }
    if (tick_ >= (uint64_t{1} << config_.tick_log)) {
      tick_ = 0;
      for (auto& t : tables_)
        for (auto& e : t) e.useful = 0;
    }
  }
  IttageConfig config_;
  detail::TaggedIndexer indexer_;
  std::vector<BaseEntry> base_;
  std::vector<std::vector<Entry>> tables_;
  std::vector<Look> look_;
  uint8_t max_confidence_ = 3;
  int use_alt_on_na_ = 0;
  uint64_t tick_ = 0;
  detail::AllocationChooser chooser_;
  // The last prediction's lookup, for its update.
  uint64_t pc_ = ~uint64_t{0};
  int provider_ = -1, alt_ = -1;
  uint32_t base_at_ = 0;
  uint64_t provider_target_ = 0, alt_target_ = 0;
  bool use_alt_ = false;
};

}  // namespace

std::unique_ptr<IndirectPredictor> make_ittage(const IttageConfig& config) { return std::make_unique<Ittage>(config); }

std::vector<TaggedTableConfig> geometric_tables(uint32_t n, uint32_t shortest, uint32_t longest, uint32_t log_entries, uint32_t tag_bits) {
  if (n == 0 || shortest == 0 || longest < shortest) throw std::invalid_argument("geometric tables: need n >= 1 and 1 <= shortest <= longest");
  std::vector<TaggedTableConfig> out;
  for (uint32_t i = 0; i < n; ++i) {
    double ratio = n == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
    auto history = static_cast<uint32_t>(std::lround(shortest * std::pow(static_cast<double>(longest) / shortest, ratio)));
    out.push_back({log_entries, std::min<uint32_t>(tag_bits + i, 16), history});
  }
  return out;
}

}  // namespace dlab::predictors
