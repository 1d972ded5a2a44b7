#include "dispatchlab/models/model_case.h"

#include <fstream>
#include <future>
#include <thread>
#include <sstream>

#include <fmt/format.h>

#include "dispatchlab/harness/cachegrind.h"

namespace dlab::models {

size_t ModelCase::program_length() const {
  if (length) return length;
  return is_kcopy() ? kDefaultKCopyLength : kDefaultStackStatements;
}

std::string ModelCase::name() const {
  if (is_kcopy()) return fmt::format("{}/{}/{}/K{}/{}/L{}", model, placement, dispatch, copies, order.name(), program_length());
  return fmt::format("{}/{}/{}/x{}/s{}", model, placement, dispatch, copies, program_length());
}

std::string ModelCase::kinds() const {
  if (model == "kcopy_u") return "u";
  if (model == "kcopy_p") return "c+b";
  if (model == "kcopy_o") return "o";
  std::string s;
  for (const auto& k : layout(model)) s += (s.empty() ? "" : " ") + k.kind;
  return s;
}

std::vector<DlInst> ModelCase::program() const {
  if (is_kcopy()) {
    KCopyParams p{model.back(), copies, order, seed, program_length()};
    return build_kcopy_program(p);
  }
  return build_stack_program({copies, seed, program_length()});
}

std::map<std::string, std::string> ModelCase::params() const {
  const auto& e = find_entry(model, placement, dispatch);
  std::map<std::string, std::string> p = {{"model", model},   {"placement", placement},
                                          {"kinds", kinds()}, {"copies", std::to_string(copies)},
                                          {"dispatch", dispatch}, {"convention", e.convention()},
                                          {"seed", std::to_string(seed)}};
  p["order"] = is_kcopy() ? order.name() : "program";
  // Program length under the name the research uses for each model, and the program's shape.
  p[is_kcopy() ? "length" : "statements"] = std::to_string(program_length());
  ProgramShape shape = program_shape(program());
  p["distinct_handlers"] = std::to_string(shape.distinct_handlers);
  p["distinct_pairs"] = std::to_string(shape.distinct_pairs);
  return p;
}

std::vector<std::string> ModelCase::exec_args() const {
  std::vector<std::string> a = {"--model", model, "--placement", placement, "--dispatch", dispatch,
                                "--copies", std::to_string(copies), "--seed", std::to_string(seed)};
  if (is_kcopy()) a.insert(a.end(), {"--order", order.name()});
  a.insert(a.end(), {"--length", std::to_string(program_length())});
  return a;
}

std::map<std::string, int64_t> cachegrind_counts(const ModelCase& c, const std::string& exec, uint64_t reps) {
  auto run = [&](uint64_t r) {
    auto a = c.exec_args();
    a.insert(a.begin(), exec);
    a.insert(a.end(), {"--reps", std::to_string(r)});
    return run_cachegrind(a);
  };
  // The two runs at once where there is a second core: the counts are the simulator's, whatever
  // runs beside them. A failed run's exception reaches get(), in this thread.
  const bool parallel = std::thread::hardware_concurrency() > 1;
  std::future<CachegrindCounts> twice = std::async(parallel ? std::launch::async : std::launch::deferred, [&] { return run(2 * reps); });
  CachegrindCounts once = run(reps);
  return difference(twice.get(), once);
}

std::map<std::string, int> load_dispatch_sites(const std::string& path) {
  std::map<std::string, int> m;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string k;
    int n;
    if (ss >> k >> n) m[k] = n;
  }
  return m;
}

}  // namespace dlab::models
