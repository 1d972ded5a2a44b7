// The D-binop family: generated WebAssembly whose hot loop runs D+1 i32 binops back to back, in
// an order whose D consecutive pairs are all distinct, so the loop exercises D distinct binop
// handler pairs (plus the loop's own 9). `dlab wasm bench --dbinop` times it for several D to
// look, in the real interpreter, for the knee the K-copy model finds as live handler pairs grow
// (the research found one between 11 and 19 pairs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlab::bench {

struct DBinopFunction {
  int pairs;                      // D: distinct consecutive binop pairs in the loop
  std::string name;               // the export: "dbinop<D>"
  uint64_t instructions_per_iteration;
  int distinct_pairs;             // D + the loop's fixed pairs
};

// One module exporting dbinop<D>(iterations) for every D, as WebAssembly text; `functions` gets
// their descriptions. D in 1..200 (there are 21 trap-free i32 binops: 441 possible pairs).
std::string dbinop_module_wat(const std::vector<int>& pairs, std::vector<DBinopFunction>& functions);

}  // namespace dlab::bench
