// Derived-metric formulas from the metric catalog ("1 - (fe + issued + 4 * recovery) / (4 * cycles)").
// The grammar is the four operators, parentheses, numbers and names; nothing else is needed for
// top-down ratios, and keeping it this small keeps the catalog reviewable.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace dlab {

class Formula {
 public:
  // Throws std::invalid_argument with the position of the first error.
  static Formula parse(const std::string& text);

  // Returns nullopt when a name is missing from `values` or a division by zero occurs: a derived
  // metric with an unavailable or zero input is unavailable, never 0.
  std::optional<double> evaluate(const std::map<std::string, double>& values) const;

  const std::set<std::string>& names() const { return names_; }
  const std::string& text() const { return text_; }

  struct Node;

 private:
  std::string text_;
  std::set<std::string> names_;
  std::shared_ptr<const Node> root_;
};

}  // namespace dlab
