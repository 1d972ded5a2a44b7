#include "dispatchlab/predictors/branch_event.h"

#include <array>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab::predictors {
namespace {

constexpr std::array<std::string_view, kBranchKinds> kNames{"conditional", "indirect_jump", "indirect_call", "return", "direct"};

// A line quoted in an error, at most 80 bytes of it, escaped for the terminal (the project's one escaping).
std::string printable(std::string_view line) { return dlab::escape_input(line.substr(0, 80)); }

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\r')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) v.remove_suffix(1);
  return v;
}

}  // namespace

std::string_view branch_kind_name(BranchKind kind) { return kNames[static_cast<size_t>(kind)]; }

std::optional<BranchKind> parse_branch_kind(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<BranchKind>(i);
  return std::nullopt;
}

BranchSites read_branch_sites(std::istream& in, const std::string& source) {
  BranchSites sites;
  std::string line;
  uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view v = trim(line);
    if (v.empty() || v.front() == '#') continue;
    size_t space = v.find_first_of(" \t");
    if (space == std::string_view::npos)
      throw std::runtime_error(fmt::format("{}:{}: expected 'PC KIND': '{}'", source, number, printable(v)));
    std::string_view pc_text = v.substr(0, space), kind_text = trim(v.substr(space));
    if (pc_text.starts_with("0x") || pc_text.starts_with("0X")) pc_text.remove_prefix(2);
    uint64_t pc = 0;
    auto r = std::from_chars(pc_text.data(), pc_text.data() + pc_text.size(), pc, 16);
    if (pc_text.empty() || r.ec != std::errc() || r.ptr != pc_text.data() + pc_text.size())
      throw std::runtime_error(fmt::format("{}:{}: '{}' is not a hexadecimal pc", source, number, printable(v.substr(0, space))));
    auto kind = parse_branch_kind(kind_text);
    if (!kind)
      throw std::runtime_error(fmt::format("{}:{}: unknown branch kind '{}' (known: conditional, indirect_jump, indirect_call, return, direct)",
                                           source, number, printable(kind_text)));
    if (!sites.emplace(pc, *kind).second)
      throw std::runtime_error(fmt::format("{}:{}: pc {:x} is given twice", source, number, pc));
  }
  if (in.bad()) throw std::runtime_error(fmt::format("{}: reading failed", source));
  return sites;
}

BranchEventStream::BranchEventStream(const BranchSites& sites, std::function<void(const BranchEvent&)> on_branch)
    : sites_(sites), on_branch_(std::move(on_branch)) {}

void BranchEventStream::instruction(uint64_t pc, uint32_t size) {
  if (pending_) {
    bool taken = pc != pending_pc_ + pending_size_;
    on_branch_({pending_pc_, pending_kind_, pending_kind_ == BranchKind::kConditional ? taken : true, pc});
    pending_ = false;
  }
  auto it = sites_.find(pc);
  if (it == sites_.end()) return;
  pending_ = true;
  pending_pc_ = pc;
  pending_size_ = size;
  pending_kind_ = it->second;
}

bool BranchEventStream::gap() {
  bool dropped = pending_;
  pending_ = false;
  return dropped;
}

bool BranchEventStream::finish() {
  bool dropped = pending_;
  pending_ = false;
  return dropped;
}

}  // namespace dlab::predictors
