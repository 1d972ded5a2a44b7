// `dlab wasm bench --suite`: the workload suites and their workloads, from the one list
// (interpreter/workloads/workloads.def; the corpus's workloads from interpreter/corpus/corpus.def),
// where each suite's modules are built, and each workload's native build.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlab::workloads {

using NativeKernel = uint32_t (*)(uint32_t);

struct SuiteWorkload {
  std::string name;
  uint32_t size = 0;
  uint32_t quick = 0;    // --quick's size; 0: a quarter of `size`
  uint32_t profile = 0;  // tools/superinstructions.py's profile size; 0: not profiled
  std::string role;      // the corpus's "selection" / "held_out", "" elsewhere (the rows' corpus_role)
  std::string what;
  uint32_t quick_size() const;  // `quick`, or a quarter of `size` (at least 1)
};

struct WorkloadSuite {
  std::string id;       // the rows' identifier: kernels, features30, corpus
  std::string name;     // what --suite takes: kernels, 3.0, corpus
  std::string module;   // the reactor module's file name
  std::string command;  // the WASI command module's file name for peers, "" when there is none
  std::string what;
  std::vector<SuiteWorkload> workloads;

  // Where this dlab's build put them (build/<preset>/interpreter/{workloads,corpus}/).
  std::string module_path() const;
  std::string command_path() const;  // "" when the suite has no command module
  // Throws saying what to build when the suite's files are opt-in and missing (the corpus).
  void require_built() const;
  // The workload's C build, linked into dlab or (the corpus) loaded from its library; throws
  // saying why when there is none.
  NativeKernel native(const std::string& workload) const;
};

// Every suite, in workloads.def's order (kernels first: the default).
const std::vector<WorkloadSuite>& workload_suites();
std::vector<std::string> workload_suite_names();
// The suite --suite names; throws std::invalid_argument listing the names otherwise.
const WorkloadSuite& workload_suite(std::string_view name);

}  // namespace dlab::workloads
