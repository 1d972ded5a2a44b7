#include "dispatchlab/harness/quote.h"

#include <gtest/gtest.h>

namespace dlab {
namespace {

TEST(Quote, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(quote_input("x"), "'x'");
  EXPECT_EQ(escape_input("cycles/µs, Zen 4 — ok"), "cycles/µs, Zen 4 — ok");
  EXPECT_EQ(escape_input(""), "");
}

TEST(Quote, EscapesControlBytes) {
  EXPECT_EQ(escape_input("a\tb\nc\rd"), "a\\tb\\nc\\rd");
  EXPECT_EQ(escape_input(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_input("\x1b[2Jx\x7f"), "\\x1b[2Jx\\x7f");
}

TEST(Quote, EscapesInvisibleCodePoints) {
  EXPECT_EQ(escape_input("\xEF\xBB\xBFx"), "\\ufeffx");            // a byte-order mark
  EXPECT_EQ(escape_input("a\xE2\x80\x8B" "b"), "a\\u200bb");       // zero-width space
  EXPECT_EQ(escape_input("\xE2\x80\xAEtxt"), "\\u202etxt");        // right-to-left override
  EXPECT_EQ(escape_input("\xC2\x85"), "\\u0085");                  // a C1 control
}

TEST(Quote, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(escape_input("\xff" "a"), "\\xffa");
  EXPECT_EQ(escape_input("\xC3"), "\\xc3");                        // truncated
  EXPECT_EQ(escape_input("\xC0\xAF"), "\\xc0\\xaf");               // overlong '/'
  EXPECT_EQ(escape_input("\xED\xA0\x80"), "\\xed\\xa0\\x80");      // a surrogate
  EXPECT_EQ(escape_input("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(escape_input("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");  // an emoji is printable
}

}  // namespace
}  // namespace dlab
