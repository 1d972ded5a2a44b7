// The handler names the ideal bound finds each handler's code by (the assembly it gives llvm-mca:
// predictors/tests/llvm_mca_test.cc).
#include "dispatchlab/models/ideal_bound.h"

#include <gtest/gtest.h>

#include "dispatchlab/models/handler_name.h"

namespace dlab::models {
namespace {

TEST(IdealBound, HandlerNamesAreTheGeneratorsUpperCaseKindsMarked) {
  EXPECT_EQ(handler_name("u", 0), "h_u_0");
  EXPECT_EQ(handler_name("S", 3), "h_xS_3");  // s and S stay apart in every symbol reader
  EXPECT_EQ(handler_name("s", 3), "h_s_3");
}

}  // namespace
}  // namespace dlab::models
