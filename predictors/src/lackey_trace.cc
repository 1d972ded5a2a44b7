#include "dispatchlab/predictors/lackey_trace.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab::predictors {
namespace {

// "addr,size" in lackey's hex,decimal form.
bool parse_address_size(std::string_view text, uint64_t& address, uint32_t& size) {
  size_t comma = text.find(',');
  if (comma == std::string_view::npos) return false;
  auto a = std::from_chars(text.data(), text.data() + comma, address, 16);
  if (a.ec != std::errc() || a.ptr != text.data() + comma) return false;
  auto s = std::from_chars(text.data() + comma + 1, text.data() + text.size(), size, 10);
  return s.ec == std::errc() && s.ptr == text.data() + text.size() && size > 0;
}

// A line quoted in an error, at most 80 bytes of it, escaped for the terminal (the project's one escaping).
std::string printable(std::string_view line) { return dlab::escape_input(line.substr(0, 80)); }

LackeyTotals read(std::istream& in, const std::string& source, const std::function<void(const MemoryAccess&)>* on_access,
                  const std::function<void(uint64_t, uint32_t)>* on_instruction, const std::function<void()>* on_gap = nullptr,
                  uint64_t gap_clock = 0) {
  LackeyTotals totals;
  std::string line;
  uint64_t number = 0, pc = 0;
  bool have_instruction = false;
  while (std::getline(in, line)) {
    ++number;
    std::string_view v(line);
    if (v.empty() || v.starts_with("==") || v.starts_with("--")) continue;
    // dlabtrace: instructions run outside its range ("X") or in a sampling gap ("G") since the last
    // instruction line
    if (v.starts_with("X ") || v.starts_with("G ")) {
      uint64_t count = 0;
      auto c = std::from_chars(v.data() + 2, v.data() + v.size(), count, 10);
      if (c.ec != std::errc() || c.ptr != v.data() + v.size() || count == 0)
        throw std::runtime_error(fmt::format("{}:{}: expected '{} count': '{}'", source, number, v[0], printable(v)));
      totals.instructions += count;
      totals.clock += v[0] == 'G' && gap_clock ? std::min(count, gap_clock) : count;
      if (on_gap && *on_gap) (*on_gap)();
      have_instruction = false;  // accesses after it would belong to none of the traced instructions
      continue;
    }
    if (v.size() < 4) throw std::runtime_error(fmt::format("{}:{}: not a lackey trace line: '{}'", source, number, printable(v)));
    char kind = v[0] == 'I' ? 'I' : v[1];
    uint64_t address;
    uint32_t size;
    if (!parse_address_size(v.substr(3), address, size))
      throw std::runtime_error(fmt::format("{}:{}: expected 'addr,size' after the kind: '{}'", source, number, printable(v)));
    if (kind == 'I') {
      pc = address;
      have_instruction = true;
      ++totals.instructions;
      ++totals.clock;
      if (on_instruction) (*on_instruction)(address, size);
      continue;
    }
    if (kind != 'L' && kind != 'S' && kind != 'M')
      throw std::runtime_error(fmt::format("{}:{}: unknown access kind '{}'", source, number, printable(v.substr(0, 2))));
    if (!have_instruction) continue;  // an access before the first instruction (valgrind's start-up): no pc
    uint64_t instruction = totals.clock - 1;
    if (on_access && (kind == 'L' || kind == 'M')) (*on_access)({instruction, pc, address, size, AccessKind::kLoad});
    if (on_access && (kind == 'S' || kind == 'M')) (*on_access)({instruction, pc, address, size, AccessKind::kStore});
    totals.accesses += kind == 'M' ? 2 : 1;
  }
  return totals;
}

}  // namespace

LackeyTotals read_lackey(std::istream& in, const std::string& source, const std::function<void(const MemoryAccess&)>& on_access) {
  return read(in, source, &on_access, nullptr);
}

LackeyTotals read_lackey_instructions(std::istream& in, const std::string& source, const std::function<void(uint64_t pc, uint32_t size)>& on_instruction) {
  return read(in, source, nullptr, &on_instruction);
}

LackeyTotals read_lackey_trace(std::istream& in, const std::string& source, const std::function<void(uint64_t pc, uint32_t size)>& on_instruction,
                               const std::function<void(const MemoryAccess&)>& on_access, const std::function<void()>& on_gap,
                               uint64_t gap_clock) {
  return read(in, source, &on_access, &on_instruction, &on_gap, gap_clock);
}

}  // namespace dlab::predictors
