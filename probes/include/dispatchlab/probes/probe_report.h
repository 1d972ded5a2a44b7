// Running the probes over targets and conventions (in parallel: each is an independent clang
// run) and turning the results into result-schema tables and Markdown.
#pragma once

#include <string>
#include <vector>

#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/probes/register_probe.h"
#include "dispatchlab/probes/state_placement.h"

namespace dlab::probes {

struct BudgetRow {
  std::string shape;  // ints, floats, mixed, or "fit"
  ProbeResult result;
};

std::vector<BudgetRow> run_register_budget(const std::vector<std::string>& targets, const std::vector<std::string>& conventions,
                                           int count, const std::vector<std::string>& shapes = {"ints", "floats", "mixed"});
std::vector<HandlerPlacement> run_state_placement(const std::string& models_dir, const std::vector<std::string>& placements,
                                                  const std::vector<std::string>& targets,
                                                  const std::vector<std::string>& conventions);

ResultTable register_budget_table(const std::vector<BudgetRow>& rows, const std::string& compiler);
ResultTable state_placement_table(const std::vector<HandlerPlacement>& rows, const std::string& compiler);

// Target x convention, "int / float in registers" (mixed shape in brackets); verbose adds the
// register names of every probe.
std::string register_budget_markdown(const std::vector<BudgetRow>& rows, bool verbose);
// Per convention: placement x target, mean instructions / stack accesses / callee-saved saves per handler.
std::string state_placement_markdown(const std::vector<HandlerPlacement>& rows);
// `dlab probes fit`: per target and convention, which arguments of `sig` stay in registers.
std::string fit_markdown(const std::vector<BudgetRow>& rows);

// The stack-model kinds the placement report covers, in spec order.
const std::vector<std::string>& placement_kinds();

}  // namespace dlab::probes
