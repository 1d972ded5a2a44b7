#include "spec/sexpr.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace dlab::wasm::sexpr {

const std::string& Node::head() const {
  static const std::string empty;
  if (kind != kList || items.empty() || items[0].kind != kAtom) return empty;
  return items[0].text;
}

Node::~Node() {
  if (items.empty()) return;
  // Children are moved onto one explicit stack and emptied there before they are destroyed, so
  // every destructor that runs below sees a node without children.
  std::vector<Node> pending = std::move(items);
  while (!pending.empty()) {
    Node n = std::move(pending.back());
    pending.pop_back();
    for (Node& child : n.items) pending.push_back(std::move(child));
    n.items.clear();
  }
}

namespace {

class Reader {
 public:
  Reader(std::string_view s, const std::string& file) : s_(s), file_(file) {}

  std::vector<Node> script() {
    std::vector<Node> out;
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return out;
      if (s_[pos_] == ')') fail(line_, "unexpected ')'");
      out.push_back(node());
    }
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw ParseError(fmt::format("{}:{}: {}", file_, line, what)); }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == ';' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ';') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (c == '(' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ';') {
        block_comment();
      } else {
        return;
      }
    }
  }

  void block_comment() {
    int start = line_;
    int depth = 0;
    while (pos_ < s_.size()) {
      if (s_.compare(pos_, 2, "(;") == 0) {
        ++depth;
        pos_ += 2;
      } else if (s_.compare(pos_, 2, ";)") == 0) {
        pos_ += 2;
        if (--depth == 0) return;
      } else {
        if (s_[pos_] == '\n') ++line_;
        ++pos_;
      }
    }
    fail(start, "unterminated block comment");
  }

  Node node() {
    Node n;
    n.line = line_;
    char c = s_[pos_];
    if (c == '(') {
      if (depth_ >= kMaxNesting) fail(line_, fmt::format("lists nested deeper than {}", kMaxNesting));
      n.kind = Node::kList;
      ++pos_;
      ++depth_;
      for (;;) {
        skip_space();
        if (pos_ >= s_.size()) fail(n.line, "unclosed '(' (end of file)");
        if (s_[pos_] == ')') {
          ++pos_;
          --depth_;
          return n;
        }
        n.items.push_back(node());
      }
    }
    if (c == '"') {
      n.kind = Node::kString;
      n.text = string_body();
      return n;
    }
    n.kind = Node::kAtom;
    size_t b = pos_;
    while (pos_ < s_.size()) {
      char d = s_[pos_];
      if (d == ' ' || d == '\t' || d == '\n' || d == '\r' || d == '\f' || d == '(' || d == ')' || d == '"' || d == ';') break;
      ++pos_;
    }
    n.text = std::string(s_.substr(b, pos_ - b));
    return n;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::string string_body() {
    int start = line_;
    ++pos_;  // the opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail(start, "unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c == '\n') fail(line_, "newline in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) fail(start, "unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case '"': out.push_back('"'); break;
        case '\'': out.push_back('\''); break;
        case '\\': out.push_back('\\'); break;
        case 'u': {
          if (pos_ >= s_.size() || s_[pos_] != '{') fail(line_, "malformed \\u escape: '{' expected");
          ++pos_;
          uint32_t cp = 0;
          int digits = 0;
          while (pos_ < s_.size() && s_[pos_] != '}') {
            int h = hex(s_[pos_]);
            if (h < 0 && s_[pos_] == '_' && digits > 0) {
              ++pos_;
              continue;
            }
            if (h < 0) fail(line_, fmt::format("malformed \\u escape: '{}' is not a hex digit", s_[pos_]));
            cp = cp * 16 + static_cast<uint32_t>(h);
            if (cp > 0x10FFFF) fail(line_, "\\u escape out of range");
            ++digits;
            ++pos_;
          }
          if (pos_ >= s_.size()) fail(start, "unterminated string");
          ++pos_;  // '}'
          if (digits == 0) fail(line_, "malformed \\u escape: no digits");
          if (cp >= 0xD800 && cp < 0xE000) fail(line_, "\\u escape is a surrogate");
          if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: {
          int h1 = hex(e), h2 = pos_ < s_.size() ? hex(s_[pos_]) : -1;
          if (h1 < 0 || h2 < 0) fail(line_, fmt::format("malformed escape '\\{}' in a string", e));
          ++pos_;
          out.push_back(static_cast<char>(h1 * 16 + h2));
        }
      }
    }
  }

  std::string_view s_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  int depth_ = 0;  // lists open at pos_
};

}  // namespace

std::vector<Node> parse(std::string_view text, const std::string& file) { return Reader(text, file).script(); }

std::vector<Node> parse_file(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw ParseError(fmt::format("{}: cannot read: {}", path, ec.message()));
  if (size > kMaxScriptBytes)
    throw ParseError(fmt::format("{}: {} bytes: larger than a script may be ({} MiB)", path, size, kMaxScriptBytes >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path + ": cannot read");
  std::string text(size, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)) || in.gcount() != static_cast<std::streamsize>(size))
    throw ParseError(fmt::format("{}: cannot read (it changed while being read)", path));
  return parse(text, path);
}

}  // namespace dlab::wasm::sexpr
