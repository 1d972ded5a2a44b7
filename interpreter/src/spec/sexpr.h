// A reader for the S-expressions of WebAssembly scripts (.wast, as the spec's reference
// interpreter writes them in binary form, .bin.wast): lists, strings and plain atoms (numbers,
// symbols such as $name, keywords such as assert_return or nan:canonical), each node with the line
// it starts on. Comments (";; ..." and nestable "(; ... ;)") are skipped. Strings are decoded to
// their bytes: \XX (two hex digits), \n \t \r \" \' \\ and \u{X...} (UTF-8). Annotations and the
// text format's other lexical forms are not needed by binary scripts and are read as plain atoms.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dlab::wasm::sexpr {

// How deep lists may nest (the spec's scripts nest a few dozen deep): deeper is a ParseError at
// the line of the list that goes too deep, so neither the reader nor anything that walks a tree
// recursively runs out of stack.
constexpr int kMaxNesting = 1000;
// The largest script read (the largest of the 3.0 suite is about 1.1 MB): a larger file is refused
// with its size and the limit before it is read, instead of an allocation failure on the way.
constexpr uint64_t kMaxScriptBytes = uint64_t{256} << 20;

struct Node {
  enum Kind { kList, kAtom, kString } kind = kAtom;
  std::string text;         // kAtom: as written; kString: the decoded bytes
  std::vector<Node> items;  // kList
  int line = 0;

  Node() = default;
  Node(const Node&) = default;
  Node(Node&&) noexcept = default;
  Node& operator=(const Node&) = default;
  Node& operator=(Node&&) noexcept = default;
  // Iterative: a tree of any depth is freed without recursion.
  ~Node();

  bool is_list() const { return kind == kList; }
  bool is_string() const { return kind == kString; }
  bool is_atom() const { return kind == kAtom; }
  bool is_atom(std::string_view s) const { return kind == kAtom && text == s; }
  // An atom starting with '$': a module or instance name.
  bool is_symbol() const { return kind == kAtom && !text.empty() && text[0] == '$'; }
  // The list's first atom ("" for an atom, an empty list or a list starting with a list).
  const std::string& head() const;
  size_t size() const { return items.size(); }
  const Node& operator[](size_t i) const { return items.at(i); }
};

// "file:line: what is wrong".
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The top-level nodes of `text`; `file` names it in errors.
std::vector<Node> parse(std::string_view text, const std::string& file);
std::vector<Node> parse_file(const std::string& path);

}  // namespace dlab::wasm::sexpr
