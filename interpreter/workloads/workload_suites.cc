#include "workload_suites.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "corpus_suite.h"

// The suites' C builds, compiled into dlab (interpreter/workloads/kernels.c with DLAB_NATIVE,
// features30_native.c): one dlab_native_<name> per WORKLOAD row.
extern "C" {
#define WORKLOAD(suite, name, size, quick, profile, what) uint32_t dlab_native_##name(uint32_t);
#include "workloads.def"
#undef WORKLOAD
}

namespace dlab::workloads {

namespace {

struct NativeRow {
  const char* name;
  NativeKernel fn;
};
constexpr NativeRow kNative[] = {
#define WORKLOAD(suite, name, size, quick, profile, what) {#name, &dlab_native_##name},
#include "workloads.def"
#undef WORKLOAD
};

std::filesystem::path build_dir() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "interpreter";
}

bool is_corpus(const WorkloadSuite& s) { return s.id == "corpus"; }

}  // namespace

uint32_t SuiteWorkload::quick_size() const { return quick ? quick : std::max<uint32_t>(1, size / 4); }

const std::vector<WorkloadSuite>& workload_suites() {
  static const std::vector<WorkloadSuite> suites = [] {
    std::vector<WorkloadSuite> out = {
#define SUITE(id, name, module, command, what) {#id, name, module, command, what, {}},
#include "workloads.def"
#undef SUITE
    };
    auto add = [&](const std::string& suite, SuiteWorkload w) {
      for (auto& s : out)
        if (s.id == suite) s.workloads.push_back(std::move(w));
    };
#define WORKLOAD(suite, name, size, quick, profile, what) add(#suite, {#name, size, quick, profile, "", what});
#include "workloads.def"
#undef WORKLOAD
    for (const auto& w : corpus_workloads()) add("corpus", {w.name, w.size, w.quick, 0, w.role, w.what});
    return out;
  }();
  return suites;
}

std::vector<std::string> workload_suite_names() {
  std::vector<std::string> names;
  for (const auto& s : workload_suites()) names.push_back(s.name);
  return names;
}

const WorkloadSuite& workload_suite(std::string_view name) {
  for (const auto& s : workload_suites())
    if (s.name == name) return s;
  throw std::invalid_argument(fmt::format("no workload suite '{}' (suites: {})", name, fmt::join(workload_suite_names(), ", ")));
}

std::string WorkloadSuite::module_path() const {
  return is_corpus(*this) ? corpus_path(module.c_str()) : (build_dir() / "workloads" / module).string();
}

std::string WorkloadSuite::command_path() const {
  if (command.empty()) return "";
  return is_corpus(*this) ? corpus_path(command.c_str()) : (build_dir() / "workloads" / command).string();
}

void WorkloadSuite::require_built() const {
  if (is_corpus(*this)) require_corpus_built();
}

NativeKernel WorkloadSuite::native(const std::string& workload) const {
  if (is_corpus(*this)) return corpus_native(workload);
  for (const auto& n : kNative)
    if (workload == n.name) return n.fn;
  throw std::runtime_error(fmt::format("no native build of workload {}", workload));
}

}  // namespace dlab::workloads
