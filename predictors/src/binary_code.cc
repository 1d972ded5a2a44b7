#include "dispatchlab/predictors/binary_code.h"

#include <charconv>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab::predictors {
namespace {

bool parse_hex(std::string_view text, uint64_t& v) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && !text.empty();
}

bool is_prefix(std::string_view w) {
  return w == "bnd" || w == "notrack" || w == "rep" || w == "repz" || w == "cs" || w == "ds";
}

// jmp, jmpq, jmpl, jmpw: the mnemonic with an optional operand-size suffix.
bool is(std::string_view m, std::string_view base) {
  if (!m.starts_with(base)) return false;
  m.remove_prefix(base.size());
  return m.empty() || (m.size() == 1 && (m[0] == 'q' || m[0] == 'l' || m[0] == 'w'));
}

}  // namespace

std::vector<ObjdumpLine> read_objdump_lines(std::istream& in) {
  std::vector<ObjdumpLine> out;
  std::string line;
  while (std::getline(in, line)) {
    // "  13adff:\tjmp    *%rax": an address, a colon, a tab, the instruction.
    size_t colon = line.find(":\t");
    if (colon == std::string::npos) continue;
    std::string_view head(line.data(), colon);
    while (!head.empty() && head.front() == ' ') head.remove_prefix(1);
    uint64_t pc;
    if (!parse_hex(head, pc)) continue;
    out.push_back({pc, line.substr(colon + 2)});
  }
  return out;
}

std::vector<NmSymbol> read_nm_symbols(std::istream& in) {
  std::vector<NmSymbol> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string address, type, name;
    uint64_t a;
    if (!(words >> address >> type >> name) || type.size() != 1 || !parse_hex(address, a)) continue;
    out.push_back({a, type[0], name});
  }
  return out;
}

BranchSites read_objdump_branch_sites(std::istream& in, uint64_t offset) {
  BranchSites sites;
  for (const ObjdumpLine& l : read_objdump_lines(in)) {
    std::istringstream words(l.instruction);
    std::string m, operand;
    while (words >> m && is_prefix(m)) {
    }
    words >> operand;
    std::optional<BranchKind> kind;
    if (is(m, "ret")) kind = BranchKind::kReturn;
    else if (is(m, "jmp")) kind = operand.starts_with('*') ? BranchKind::kIndirectJump : BranchKind::kDirect;
    else if (is(m, "call")) kind = operand.starts_with('*') ? BranchKind::kIndirectCall : BranchKind::kDirect;
    else if ((m.size() >= 2 && m[0] == 'j') || m.starts_with("loop")) kind = BranchKind::kConditional;
    if (kind) sites[l.address + offset] = *kind;
  }
  return sites;
}

CodeRange symbol_code_range(std::istream& nm_output, const std::string& symbol, const std::string& source) {
  // Sorted by address (nm -n); T and W are global code.
  bool found = false;
  CodeRange r;
  for (const NmSymbol& sym : read_nm_symbols(nm_output)) {
    if (sym.type != 'T' && sym.type != 'W') continue;
    if (found && sym.address > r.lo) {
      r.hi = sym.address;
      return r;
    }
    if (sym.name == symbol) {
      found = true;
      r.lo = sym.address;
    }
  }
  if (found) throw std::runtime_error(fmt::format("{}: no global symbol after {}: its code has no end", source, dlab::escape_input(symbol)));
  throw std::runtime_error(fmt::format("{}: no global function {}", source, dlab::escape_input(symbol)));
}

}  // namespace dlab::predictors
