#include "dispatchlab/predictors/binary_code.h"

#include <charconv>
#include <optional>
#include <sstream>
#include <algorithm>
#include <limits>
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

namespace {

// One line of `readelf -sW`'s symbol tables ("  21924: 0000000000000000     0 FILE    LOCAL  DEFAULT  ABS x.cc").
struct ElfSymbol {
  uint64_t address = 0, size = 0;
  std::string type, bind, name;
};

bool parse_elf_symbol(const std::string& line, ElfSymbol& s) {
  std::istringstream in(line);
  std::string number, value, size, visibility, section;
  if (!(in >> number >> value >> size >> s.type >> s.bind >> visibility >> section) || number.empty() || number.back() != ':') return false;
  std::getline(in >> std::ws, s.name);
  try {
    s.address = std::stoull(value, nullptr, 16);
    s.size = size.starts_with("0x") ? std::stoull(size.substr(2), nullptr, 16) : std::stoull(size);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace

CodeRange elf_file_code_range(std::istream& readelf_output, const std::string& source_file, const std::string& global_symbol,
                              const std::string& source) {
  std::vector<ElfSymbol> functions;  // every function of .symtab
  std::string line, file;
  bool in_symtab = false, file_seen = false, global_seen = false;
  CodeRange r{std::numeric_limits<uint64_t>::max(), 0};
  std::vector<size_t> mine;  // indices into `functions`
  while (std::getline(readelf_output, line)) {
    if (line.starts_with("Symbol table ")) {
      in_symtab = line.find("'.symtab'") != std::string::npos;  // not .dynsym, which has no FILE entries
      continue;
    }
    ElfSymbol s;
    if (!in_symtab || !parse_elf_symbol(line, s)) continue;
    if (s.type == "FILE") {
      file = s.name;
      file_seen = file_seen || file == source_file;
      continue;
    }
    if (s.type != "FUNC" || s.address == 0) continue;
    // Local symbols come first, each file's after its FILE entry; the globals follow all of them.
    const bool local_of_file = s.bind == "LOCAL" && file == source_file;
    const bool entry = s.bind != "LOCAL" && (s.name == global_symbol || (global_symbol.ends_with('E') && s.name.starts_with(global_symbol)));
    global_seen = global_seen || entry;
    if (local_of_file || entry) {
      mine.push_back(functions.size());
      r.lo = std::min(r.lo, s.address);
      r.hi = std::max(r.hi, s.address + s.size);
    }
    functions.push_back(std::move(s));
  }
  if (!file_seen) throw std::runtime_error(fmt::format("{}: no symbols of the source file {} (a stripped binary, or another build)", source, dlab::escape_input(source_file)));
  if (!global_seen) throw std::runtime_error(fmt::format("{}: no global function {}", source, dlab::escape_input(global_symbol)));
  for (size_t i = 0; i < functions.size(); ++i) {
    const ElfSymbol& f = functions[i];
    if (f.address < r.lo || f.address >= r.hi || std::find(mine.begin(), mine.end(), i) != mine.end()) continue;
    bool alias = false;  // another name of one of the file's functions
    for (size_t j : mine) alias = alias || (functions[j].address == f.address && functions[j].size == f.size);
    if (!alias)
      throw std::runtime_error(fmt::format("{}: the code of {} is not in one piece: {} lies inside it, at {:x}", source,
                                           dlab::escape_input(source_file), dlab::escape_input(f.name), f.address));
  }
  return r;
}

}  // namespace dlab::predictors
