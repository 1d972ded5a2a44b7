#include "dispatchlab/harness/formula.h"

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dispatchlab/harness/quote.h"

namespace dlab {

struct Formula::Node {
  char op = 0;  // 0: leaf (number or name); '+', '-', '*', '/'; 'n': negation
  double number = 0;
  std::string name;
  std::shared_ptr<const Node> lhs, rhs;
};

namespace {

using NodePtr = std::shared_ptr<const Formula::Node>;

class Parser {
 public:
  Parser(const std::string& text, std::set<std::string>& names) : s_(text), names_(names) {}

  NodePtr parse_all() {
    NodePtr n = expression();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected " + quote_input(std::string(1, s_[pos_])));
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::invalid_argument("formula \"" + s_ + "\": " + what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  static NodePtr binary(char op, NodePtr l, NodePtr r) {
    auto n = std::make_shared<Formula::Node>();
    n->op = op; n->lhs = std::move(l); n->rhs = std::move(r);
    return n;
  }
  NodePtr expression() {
    NodePtr n = term();
    for (;;) {
      if (eat('+')) n = binary('+', n, term());
      else if (eat('-')) n = binary('-', n, term());
      else return n;
    }
  }
  NodePtr term() {
    NodePtr n = factor();
    for (;;) {
      if (eat('*')) n = binary('*', n, factor());
      else if (eat('/')) n = binary('/', n, factor());
      else return n;
    }
  }
  NodePtr factor() {
    if (eat('(')) {
      NodePtr n = expression();
      if (!eat(')')) fail("missing ')'");
      return n;
    }
    if (eat('-')) return binary('n', factor(), nullptr);
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    auto leaf = std::make_shared<Formula::Node>();
    char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t used = 0;
      leaf->number = std::stod(s_.substr(pos_), &used);
      pos_ += used;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      leaf->name = s_.substr(start, pos_ - start);
      names_.insert(leaf->name);
    } else {
      fail("unexpected " + quote_input(std::string(1, c)));
    }
    return leaf;
  }

  const std::string& s_;
  std::set<std::string>& names_;
  size_t pos_ = 0;
};

std::optional<double> eval(const Formula::Node& n, const std::map<std::string, double>& v) {
  if (n.op == 0) {
    if (n.name.empty()) return n.number;
    auto it = v.find(n.name);
    if (it == v.end()) return std::nullopt;
    return it->second;
  }
  auto l = eval(*n.lhs, v);
  if (!l) return std::nullopt;
  if (n.op == 'n') return -*l;
  auto r = eval(*n.rhs, v);
  if (!r) return std::nullopt;
  switch (n.op) {
    case '+': return *l + *r;
    case '-': return *l - *r;
    case '*': return *l * *r;
    case '/': if (*r == 0) return std::nullopt; return *l / *r;
  }
  return std::nullopt;
}

}  // namespace

Formula Formula::parse(const std::string& text) {
  Formula f;
  f.text_ = text;
  Parser p(text, f.names_);
  f.root_ = p.parse_all();
  return f;
}

std::optional<double> Formula::evaluate(const std::map<std::string, double>& values) const {
  if (!root_) return std::nullopt;
  return eval(*root_, values);
}

}  // namespace dlab
