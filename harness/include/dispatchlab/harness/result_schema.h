// The one schema for result files. results/README.md documents it (a test checks that the
// document matches `dlab schema --markdown`), the JSON sidecar of every run repeats it, and the
// Python analysis reads column meanings from that sidecar, so no second copy exists.
#pragma once

#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace dlab {

// The result rows' schema version, written into every sidecar (`schema_version`). 3: the measured
// case's column is `case` (`variant` before). 2: the params name an engine's stack placement
// `placement` and another engine `peer` (version 1, whose sidecars have no schema_version, wrote
// both, and the native build's "native", as `variant`); the analysis reads every version
// (docs/results-schema.md, "Migration").
constexpr int kResultSchemaVersion = 3;

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
