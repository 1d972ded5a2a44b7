// The D-binop generator: D+1 binops whose D consecutive pairs are all distinct, in a module the
// interpreter runs to the same checksum in every engine.
#include "../bench/dbinop.h"

#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "wat.h"

namespace dlab::cli {
namespace {

// The binops of one function's loop, in order: the lines between the pushes of x and the store.
std::vector<std::string> binops_of(const std::string& wat, const std::string& export_name) {
  std::vector<std::string> ops;
  size_t at = wat.find("(loop", wat.find("\"" + export_name + "\""));
  std::istringstream in(wat.substr(at));
  std::string line;
  std::getline(in, line);  // "(loop $l"
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(' '));
    if (line == "local.set $x") break;
    if (line != "local.get $x") ops.push_back(line);
  }
  return ops;
}

TEST(DBinop, ConsecutivePairsAreDistinctAndCountedRight) {
  std::vector<bench::DBinopFunction> fns;
  std::string wat = dbinop_module_wat({5, 19, 45}, fns);
  ASSERT_EQ(fns.size(), 3u);
  for (const auto& f : fns) {
    SCOPED_TRACE(f.name);
    auto ops = binops_of(wat, f.name);
    ASSERT_EQ(ops.size(), static_cast<size_t>(f.pairs + 1));
    std::set<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i + 1 < ops.size(); ++i) pairs.emplace(ops[i], ops[i + 1]);
    EXPECT_EQ(pairs.size(), static_cast<size_t>(f.pairs));
    EXPECT_EQ(f.distinct_pairs, f.pairs + 9);
    EXPECT_EQ(f.instructions_per_iteration, static_cast<uint64_t>(2 * f.pairs + 9));
  }
  EXPECT_THROW(dbinop_module_wat({0}, fns), std::invalid_argument);
  EXPECT_THROW(dbinop_module_wat({201}, fns), std::invalid_argument);
}

TEST(DBinop, EveryEngineComputesTheSameResult) {
  std::vector<bench::DBinopFunction> fns;
  wasm::Module m = wasm::test_support::assemble(dbinop_module_wat({7, 30}, fns));
  std::set<uint64_t> results;
  for (auto d : wasm::dispatch_modes())
    for (auto p : wasm::placements()) {
      if (!wasm::engine_unavailable(d, p).empty()) continue;
      wasm::Runtime rt(wasm::EngineConfig{d, p});
      auto& inst = rt.instantiate(m);
      for (const auto& f : fns) results.insert(rt.invoke(inst.exports.at(f.name).func, {wasm::Value::i32(1000)}).at(0).lo * 1000 + f.pairs);
    }
  EXPECT_EQ(results.size(), 2u);  // one result per function, whatever the engine
}

}  // namespace
}  // namespace dlab::cli
