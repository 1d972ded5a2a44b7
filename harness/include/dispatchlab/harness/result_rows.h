// Turns measurements into rows of the result schema: a RunResult into summary and sample rows
// (per work unit, with pairwise ratios against the first case), a CounterPlan into the counter
// availability table, and either into its JSON sidecar.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/harness/run_protocol.h"

namespace dlab {

struct ExperimentTables {
  ResultTable summary{result_table("summary")};
  ResultTable samples{result_table("samples")};
};

// `measured` must be the list the RunResult was produced from (for units and params).
ExperimentTables experiment_tables(const std::string& run_id, const std::string& experiment, const RunResult& result,
                                   const std::vector<MeasuredCase>& measured, const MachineFingerprint& machine);

ResultTable counters_table(const CounterPlan& plan);

// The provenance columns every measured row carries (result_schema.cc's list: protocol, pinning,
// machine, build), for a table written beside experiment_tables' (the cachegrind functions table).
std::map<std::string, std::string> provenance_columns(const RunResult& result, const MachineFingerprint& machine);
// A case's params as the `params` column writes them: key=value joined by ';'.
std::string params_column(const std::map<std::string, std::string>& params);

// Sidecar for <stem>.csv: fingerprint, protocol (when there is one), and the schema of the tables.
nlohmann::json sidecar_json(const std::string& run_id, const MachineFingerprint& machine, const RunResult* result,
                            const std::vector<std::string>& tables);

// The files write_experiment writes, for RunDirectory::check_can_write before measuring.
std::vector<std::string> experiment_files(const std::string& experiment);
// Writes <experiment>.summary.csv, <experiment>.samples.csv, the `extra` files (name, content)
// and <experiment>.json as one set: all of them or none.
void write_experiment(const RunDirectory& dir, const std::string& experiment, const ExperimentTables& t,
                      const nlohmann::json& sidecar, const std::vector<std::pair<std::string, std::string>>& extra = {});

std::string format_number(double v);  // shortest text that round-trips to the same double

}  // namespace dlab
