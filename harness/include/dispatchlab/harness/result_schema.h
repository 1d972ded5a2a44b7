// The one schema for result files. results/README.md documents it (a test checks that the
// document matches `dlab schema --markdown`), the JSON sidecar of every run repeats it, and the
// Python analysis reads column meanings from that sidecar, so no second copy exists.
#pragma once

#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace dlab {

struct Column {
  const char* name;
  const char* description;
};

struct TableSchema {
  const char* name;  // file stem: "summary" -> summary.csv
  const char* description;
  std::span<const Column> columns;
};

std::span<const TableSchema> result_tables();
const TableSchema& result_table(const std::string& name);  // throws std::out_of_range
std::string schema_markdown();
nlohmann::json schema_json();

}  // namespace dlab
