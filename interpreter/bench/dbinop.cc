#include "dbinop.h"

#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace dlab::bench {

namespace {

// The i32 binops that cannot trap (no division): 11 arithmetic and bitwise, 10 comparisons.
constexpr const char* kBinops[] = {"i32.add",  "i32.sub",  "i32.mul",  "i32.and",  "i32.or",   "i32.xor",  "i32.shl",
                                   "i32.shr_s", "i32.shr_u", "i32.rotl", "i32.rotr", "i32.eq",   "i32.ne",   "i32.lt_s",
                                   "i32.lt_u", "i32.gt_s", "i32.gt_u", "i32.le_s", "i32.le_u", "i32.ge_s", "i32.ge_u"};
constexpr int kOps = sizeof kBinops / sizeof kBinops[0];

// D+1 binops whose D consecutive pairs are all distinct: a walk that never reuses an edge of the
// complete digraph on the 21 binops (self-pairs included).
std::vector<int> pair_walk(int pairs) {
  std::vector<int> walk = {0};
  std::set<std::pair<int, int>> used;
  for (int step = 0; step < pairs; ++step) {
    int cur = walk.back(), next = -1;
    for (int j = 1; j <= kOps && next < 0; ++j) {
      int b = (cur + j) % kOps;
      if (!used.count({cur, b})) next = b;
    }
    if (next < 0) throw std::logic_error("pair walk ran out of edges");
    used.insert({cur, next});
    walk.push_back(next);
  }
  return walk;
}

}  // namespace

std::string dbinop_module_wat(const std::vector<int>& pairs, std::vector<DBinopFunction>& functions) {
  std::string wat = "(module\n";
  for (int d : pairs) {
    if (d < 1 || d > 200) throw std::invalid_argument(fmt::format("D-binop pairs must be in 1..200, not {}", d));
    std::vector<int> walk = pair_walk(d);
    std::string body;
    // D+2 copies of x, then D+1 binops fold them into one value.
    for (int i = 0; i < d + 2; ++i) body += "      local.get $x\n";
    for (int op : walk) body += fmt::format("      {}\n", kBinops[op]);
    wat += fmt::format(R"(  (func (export "dbinop{}") (param $n i32) (result i32)
    (local $x i32)
    (local.set $x (i32.const 0x2545f491))
    (loop $l
{}      local.set $x
      local.get $n
      i32.const 1
      i32.sub
      local.tee $n
      br_if $l)
    local.get $x)
)",
                       d, body);
    // Per iteration: D+2 gets, D+1 binops, set, and get/const/sub/tee/br_if of the counter.
    uint64_t per_iteration = static_cast<uint64_t>(2 * d + 3 + 1 + 5);
    // Fixed pairs: get-get, get-binop, binop-set, set-get, get-const, const-sub, sub-tee, tee-br_if,
    // br_if-get (the loop's back edge).
    functions.push_back({d, fmt::format("dbinop{}", d), per_iteration, d + 9});
  }
  return wat + ")\n";
}

}  // namespace dlab::bench
