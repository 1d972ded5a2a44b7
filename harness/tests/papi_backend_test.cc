#include "dispatchlab/harness/papi_backend.h"

#include <gtest/gtest.h>

#include "platform.h"

namespace dlab {
namespace {

TEST(PapiBackend, ReportsAvailabilityWithPapisOwnReason) {
  PapiBackend papi;
  Availability a = papi.probe("PAPI_TOT_CYC");
  if (a.available) {
    auto g = papi.open_group({"PAPI_TOT_CYC"});
    g->start();
    volatile int x = 0;
    for (int i = 0; i < 100000; ++i) x = x + i;
    g->stop();
    auto r = g->read();
    ASSERT_TRUE(r[0].value.has_value());
    EXPECT_GT(*r[0].value, 0);
    return;
  }
  EXPECT_FALSE(a.reason.empty());
  EXPECT_NE(a.reason.find("PAPI"), std::string::npos) << a.reason;
  if (!platform::kernel_has_core_pmu()) EXPECT_THROW(papi.open_group({"PAPI_TOT_CYC"}), CounterError);
}

TEST(PapiBackend, UnknownEventNamesAreUnavailable) {
  PapiBackend papi;
  Availability a = papi.probe("PAPI_NO_SUCH_EVENT_NAME");
  EXPECT_FALSE(a.available);
  EXPECT_FALSE(a.reason.empty());
}

}  // namespace
}  // namespace dlab
