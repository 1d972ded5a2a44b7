// Deterministic checks of the models' code with cachegrind (no PMU needed): the sp placement does
// fewer loads per dispatch than vec (its height is not a memory round trip), and the K-copy
// handlers execute the same instructions per dispatch whatever K is (copies differ only in their
// constant). Counts per dispatch come from N vs 2N repetitions, as `dlab models --valgrind` does.
#include <gtest/gtest.h>

#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/models/model_case.h"

namespace dlab::models {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLAB_UNDER_ASAN 1
#endif
#endif

constexpr bool kUnderAsan =
#ifdef DLAB_UNDER_ASAN
    true;
#else
    false;
#endif
constexpr const char* kAsanSkip = "valgrind cannot run AddressSanitizer binaries; these run in the release preset";

double per_dispatch(const ModelCase& c, const std::string& event) {
  auto d = cachegrind_counts(c, DLAB_MODEL_EXEC, 1);
  return static_cast<double>(d.at(event)) / static_cast<double>(c.program().size());
}

TEST(Cachegrind, SpDoesFewerLoadsPerDispatchThanVec) {
  if (kUnderAsan) GTEST_SKIP() << kAsanSkip;
  ModelCase vec{"stack", "vec", "tail", 16, {}, 1, 300};
  ModelCase sp{"stack", "sp", "tail", 16, {}, 1, 300};
  double vec_loads = per_dispatch(vec, "Dr"), sp_loads = per_dispatch(sp, "Dr");
  EXPECT_LT(sp_loads, vec_loads - 0.9) << "vec " << vec_loads << " sp " << sp_loads;
}

TEST(Cachegrind, KCopyInstructionsPerDispatchDoNotGrowWithK) {
  if (kUnderAsan) GTEST_SKIP() << kAsanSkip;
  ModelCase k1{"kcopy_u", "sp", "tail", 1, Order::parse("cyclic"), 1, 4096};
  ModelCase k512{"kcopy_u", "sp", "tail", 512, Order::parse("cyclic"), 1, 4096};
  double i1 = per_dispatch(k1, "Ir"), i512 = per_dispatch(k512, "Ir");
  EXPECT_GT(i1, 5);
  EXPECT_NEAR(i512, i1, 0.01 * i1);
}

}  // namespace
}  // namespace dlab::models
