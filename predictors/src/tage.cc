#include "dispatchlab/predictors/tage.h"

#include <tuple>

#include "tagged_tables.h"

namespace dlab::predictors {
namespace {

// A 2-bit counter per entry, 0..3, taken from 2 up; starts weakly taken.
class BimodalTable {
 public:
  explicit BimodalTable(uint32_t log_entries) : log_(log_entries) {
    if (log_entries < 1 || log_entries > 24) throw std::invalid_argument(fmt::format("bimodal log2 entries must be 1 to 24, not {}", log_entries));
    counters_.assign(size_t{1} << log_entries, 2);
  }
  uint8_t& at(uint64_t pc) { return counters_[detail::base_index(pc, log_)]; }
  static void train(uint8_t& c, bool taken) {
    if (taken && c < 3) ++c;
    if (!taken && c > 0) --c;
  }
  uint32_t log() const { return log_; }

 private:
  uint32_t log_;
  std::vector<uint8_t> counters_;
};

class Tage final : public DirectionPredictor {
 public:
  explicit Tage(const TageConfig& c) : config_(c), base_(c.base_log_entries), indexer_(c.tables) {
    for (const auto& t : c.tables) tables_.emplace_back(size_t{1} << t.log_entries);
    look_.resize(c.tables.size());
  }
  std::string name() const override {
    std::string tables;
    uint64_t bits = (uint64_t{1} << config_.base_log_entries) * 2;
    for (const auto& t : config_.tables) {
      tables += fmt::format("{}{}x(tag {} hist {})", tables.empty() ? "" : " ", 1u << t.log_entries, t.tag_bits, t.history);
      bits += (uint64_t{1} << t.log_entries) * (t.tag_bits + 3 + 2);
    }
    return fmt::format("tage(bimodal={}x2 bits tagged=[{}] ctr 3 bits u 2 bits u reset={} storage={} bits)", 1u << config_.base_log_entries, tables,
                       config_.u_reset_period, bits);
  }
  bool predict(uint64_t pc, GlobalHistory& h) override {
    indexer_.bind(h);
    pc_ = pc;
    for (size_t i = 0; i < tables_.size(); ++i) look_[i] = {indexer_.index(i, pc), indexer_.tag(i, pc)};
    std::tie(provider_, alt_) = detail::provider_and_alternate(tables_.size(), [this](int i) { return hit(i); });
    bool base = base_.at(pc) >= 2;
    alt_pred_ = alt_ >= 0 ? entry(alt_).counter >= 0 : base;
    provider_pred_ = provider_ >= 0 ? entry(provider_).counter >= 0 : base;
    newly_allocated_ = provider_ >= 0 && (entry(provider_).counter == 0 || entry(provider_).counter == -1) && entry(provider_).useful == 0;
    final_ = newly_allocated_ && use_alt_on_na_ >= 0 ? alt_pred_ : provider_pred_;
    return final_;
  }
  void update(uint64_t pc, GlobalHistory& h, bool taken) override {
    if (pc != pc_) predict(pc, h);
    if (newly_allocated_ && provider_pred_ != alt_pred_) {
      if (alt_pred_ == taken && use_alt_on_na_ < 7) ++use_alt_on_na_;
      else if (provider_pred_ == taken && use_alt_on_na_ > -8) --use_alt_on_na_;
    }
    if (final_ != taken && provider_ + 1 < static_cast<int>(tables_.size())) allocate(taken);
    if (provider_ >= 0) {
      Entry& e = entry(provider_);
      if (taken && e.counter < 3) ++e.counter;
      if (!taken && e.counter > -4) --e.counter;
      if (provider_pred_ != alt_pred_) {
        if (provider_pred_ == taken && e.useful < 3) ++e.useful;
        if (provider_pred_ != taken && e.useful > 0) --e.useful;
      }
    } else {
      BimodalTable::train(base_.at(pc), taken);
    }
    if (config_.u_reset_period && ++branches_ % config_.u_reset_period == 0) {
      uint8_t keep = high_next_ ? 1 : 2;  // clear the high bits, then the low bits, in turn
      for (auto& t : tables_)
        for (auto& e : t) e.useful &= keep;
      high_next_ = !high_next_;
    }
    pc_ = ~uint64_t{0};
  }

 private:
  struct Entry {
    bool valid = false;
    uint16_t tag = 0;
    int8_t counter = 0;  // -4..3: taken when >= 0
    uint8_t useful = 0;  // 0..3
  };
  using Look = detail::TaggedLookup;
  Entry& entry(int i) { return tables_[static_cast<size_t>(i)][look_[static_cast<size_t>(i)].index]; }
  bool hit(int i) {
    const Entry& e = entry(i);
    return e.valid && e.tag == look_[static_cast<size_t>(i)].tag;
  }
  void allocate(bool taken) {
    const int tables = static_cast<int>(tables_.size());
    const int j = chooser_.choose(provider_, tables, [this](int k) { return entry(k).useful == 0; });
    if (j >= 0) {
      entry(j) = {true, look_[static_cast<size_t>(j)].tag, static_cast<int8_t>(taken ? 0 : -1), 0};
      return;
    }
    for (int k = provider_ + 1; k < tables; ++k) --entry(k).useful;
  }
  TageConfig config_;
  BimodalTable base_;
  detail::TaggedIndexer indexer_;
  std::vector<std::vector<Entry>> tables_;
  std::vector<Look> look_;
  int use_alt_on_na_ = 0;
  detail::AllocationChooser chooser_;
  uint64_t branches_ = 0;
  bool high_next_ = true;
  uint64_t pc_ = ~uint64_t{0};
  int provider_ = -1, alt_ = -1;
  bool provider_pred_ = false, alt_pred_ = false, final_ = false, newly_allocated_ = false;
};

class Bimodal final : public DirectionPredictor {
 public:
  explicit Bimodal(uint32_t log_entries) : table_(log_entries) {}
  std::string name() const override { return fmt::format("bimodal({}x2 bits)", 1u << table_.log()); }
  bool predict(uint64_t pc, GlobalHistory&) override { return table_.at(pc) >= 2; }
  void update(uint64_t pc, GlobalHistory&, bool taken) override { BimodalTable::train(table_.at(pc), taken); }

 private:
  BimodalTable table_;
};

}  // namespace

std::unique_ptr<DirectionPredictor> make_tage(const TageConfig& config) { return std::make_unique<Tage>(config); }
std::unique_ptr<DirectionPredictor> make_bimodal(uint32_t log_entries) { return std::make_unique<Bimodal>(log_entries); }

}  // namespace dlab::predictors
