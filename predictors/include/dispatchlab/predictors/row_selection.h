#pragma once
// Rows of a predictor table picked by a comma-separated list of names ("all": every row), for the
// memory-dependence and the branch tables alike.
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace dlab::predictors {

// The names of a comma-separated list, in order (an empty name where two commas meet).
inline std::vector<std::string> list_names(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(',', start);
    out.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// std::invalid_argument naming the unknown name and the known ones.
template <class Row>
std::vector<const Row*> select_rows(const std::vector<Row>& rows, const std::string& list) {
  std::vector<const Row*> out;
  if (list == "all") {
    for (const auto& r : rows) out.push_back(&r);
    return out;
  }
  for (const std::string& name : list_names(list)) {
    const Row* found = nullptr;
    for (const auto& r : rows)
      if (r.name == name) found = &r;
    if (!found) {
      std::string known;
      for (const auto& r : rows) known += (known.empty() ? "" : ", ") + r.name;
      throw std::invalid_argument(fmt::format("unknown predictor '{}' (known: {}, or all)", name, known));
    }
    out.push_back(found);
  }
  return out;
}

}  // namespace dlab::predictors
