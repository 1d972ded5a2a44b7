#pragma once
// Branches of an instruction stream. Lackey's trace gives every executed instruction ("I  addr,size")
// but not which are branches: the caller supplies that, a map from a branch's pc to its kind (from
// objdump, say). A branch's target is the address of the instruction executed after it; a conditional
// is taken when that address is not pc + size. Nothing is stored: each event is handed on as made.
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dlab::predictors {

enum class BranchKind { kConditional, kIndirectJump, kIndirectCall, kReturn, kDirect };
inline constexpr int kBranchKinds = 5;

// "conditional", "indirect_jump", "indirect_call", "return", "direct": the sites file's and the CSV's spelling.
std::string_view branch_kind_name(BranchKind kind);
std::optional<BranchKind> parse_branch_kind(std::string_view name);

struct BranchEvent {
  uint64_t pc = 0;
  BranchKind kind = BranchKind::kDirect;
  bool taken = true;    // a conditional's outcome; every other kind is always taken
  uint64_t target = 0;  // the next instruction's address (pc + size for a conditional not taken)
};

using BranchSites = std::unordered_map<uint64_t, BranchKind>;

// One site a line: "PC KIND" (PC hexadecimal, 0x optional); blank lines and lines starting with '#'
// are skipped. A malformed line or a pc given twice is a std::runtime_error naming `source` and its line.
BranchSites read_branch_sites(std::istream& in, const std::string& source);

// Instructions in, branch events out: an instruction at a site is held until the next instruction
// gives its target.
class BranchEventStream {
 public:
  BranchEventStream(const BranchSites& sites, std::function<void(const BranchEvent&)> on_branch);
  void instruction(uint64_t pc, uint32_t size);
  // Instructions ran that the stream does not see (a sampled trace's gap): a branch still waiting
  // for its target would take the first instruction after the gap for it, so it is dropped.
  // Returns whether there was one.
  bool gap();
  // The stream ended. A branch that was the last instruction has no target: it is dropped, and
  // finish() says whether there was one.
  bool finish();

 private:
  const BranchSites& sites_;
  std::function<void(const BranchEvent&)> on_branch_;
  bool pending_ = false;
  uint64_t pending_pc_ = 0;
  uint32_t pending_size_ = 0;
  BranchKind pending_kind_ = BranchKind::kDirect;
};

}  // namespace dlab::predictors
