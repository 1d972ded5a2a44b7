#pragma once
// Rows of a predictor table picked by a comma-separated list of names ("all": every row), for the
// memory-dependence and the branch tables alike.
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace dlab::predictors {

// std::invalid_argument naming the unknown name and the known ones.
template <class Row>
std::vector<const Row*> select_rows(const std::vector<Row>& rows, const std::string& list) {
  std::vector<const Row*> out;
  if (list == "all") {
    for (const auto& r : rows) out.push_back(&r);
    return out;
  }
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const Row* found = nullptr;
    for (const auto& r : rows)
      if (r.name == name) found = &r;
    if (!found) {
      std::string known;
      for (const auto& r : rows) known += (known.empty() ? "" : ", ") + r.name;
      throw std::invalid_argument(fmt::format("unknown predictor '{}' (known: {}, or all)", name, known));
    }
    out.push_back(found);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace dlab::predictors
