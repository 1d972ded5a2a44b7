// Float-to-integer truncation (engines/numeric.h), the trapping and the saturating forms, at the
// edges of every target type: the range is checked on the operand (no libm trunc), so each bound
// is tested from both sides, in float and double, and NaN and the infinities.
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "engines/numeric.h"

namespace dlab::wasm {
namespace {

// Whether trunc<I>(x) is in range, and its value then.
template <class I, class F>
std::pair<bool, I> t(F x) {
  I r{};
  return {num::trunc<I>(x, &r) == nullptr, r};
}
template <class I, class F>
bool traps(F x) { return !t<I>(x).first; }
template <class I, class F>
I value(F x) {
  auto [ok, r] = t<I>(x);
  EXPECT_TRUE(ok) << x;
  return r;
}

TEST(Truncation, SignedThirtyTwoBits) {
  EXPECT_EQ(value<int32_t>(2147483647.9), 2147483647);
  EXPECT_TRUE(traps<int32_t>(2147483648.0));
  EXPECT_EQ(value<int32_t>(-2147483648.9), std::numeric_limits<int32_t>::min());
  EXPECT_TRUE(traps<int32_t>(-2147483649.0));
  EXPECT_EQ(value<int32_t>(-1.5f), -1);
  EXPECT_EQ(value<int32_t>(2147483520.0f), 2147483520);  // the largest float below 2^31
  EXPECT_TRUE(traps<int32_t>(2147483648.0f));
  EXPECT_EQ(value<int32_t>(-2147483648.0f), std::numeric_limits<int32_t>::min());
}

TEST(Truncation, UnsignedThirtyTwoBits) {
  EXPECT_EQ(value<uint32_t>(4294967295.9), 4294967295u);
  EXPECT_TRUE(traps<uint32_t>(4294967296.0));
  EXPECT_EQ(value<uint32_t>(-0.99999), 0u);
  EXPECT_EQ(value<uint32_t>(-0.0f), 0u);
  EXPECT_TRUE(traps<uint32_t>(-1.0));
  EXPECT_TRUE(traps<uint32_t>(-1.0f));
}

TEST(Truncation, SixtyFourBits) {
  EXPECT_EQ(value<int64_t>(-9223372036854775808.0), std::numeric_limits<int64_t>::min());  // -2^63: in
  EXPECT_TRUE(traps<int64_t>(9223372036854775808.0));  // 2^63: out
  EXPECT_EQ(value<int64_t>(9223372036854774784.0), 9223372036854774784);  // the largest double below 2^63
  EXPECT_TRUE(traps<int64_t>(-9223372036854777856.0));  // the next double below -2^63
  EXPECT_EQ(value<int64_t>(-9223372036854775808.0f), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(value<uint64_t>(18446744073709549568.0), 18446744073709549568u);  // the largest double below 2^64
  EXPECT_TRUE(traps<uint64_t>(18446744073709551616.0));
  EXPECT_EQ(value<uint64_t>(-0.9), 0u);
  EXPECT_TRUE(traps<uint64_t>(-1.0));
}

TEST(Truncation, NanTrapsAsAnInvalidConversionAndSaturatesToZero) {
  int32_t r = 0;
  EXPECT_STREQ(num::trunc<int32_t>(std::numeric_limits<double>::quiet_NaN(), &r), "invalid conversion to integer");
  EXPECT_STREQ(num::trunc<int32_t>(std::numeric_limits<double>::infinity(), &r), "integer overflow");
  EXPECT_EQ(num::trunc_sat<int32_t>(std::numeric_limits<float>::quiet_NaN()), 0);
  EXPECT_EQ(num::trunc_sat<int32_t>(-std::numeric_limits<float>::infinity()), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(num::trunc_sat<uint32_t>(-1.0), 0u);
  EXPECT_EQ(num::trunc_sat<uint64_t>(1e30), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(num::trunc_sat<int64_t>(-1e30f), std::numeric_limits<int64_t>::min());
}

}  // namespace
}  // namespace dlab::wasm
