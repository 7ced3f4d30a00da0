#include "broker/util/strings.h"

#include <gtest/gtest.h>

namespace skyslurm {
namespace {

TEST(StringsTest, AUtf8PrefixNeverEndsInsideACharacter) {
  const std::string bar = "50% \xe2\x96\x88\xe2\x96\x88";  // "50% ██": two 3-byte characters
  EXPECT_EQ(Utf8WholePrefix(bar), bar.size());
  for (std::size_t cut = 4; cut <= bar.size(); ++cut) {
    const std::size_t whole = Utf8WholePrefix(std::string_view(bar).substr(0, cut));
    EXPECT_TRUE(whole == 4 || whole == 7 || whole == 10) << cut << " -> " << whole;
    EXPECT_LE(whole, cut);
  }
  EXPECT_EQ(Utf8WholePrefix("ascii"), 5u);
  EXPECT_EQ(Utf8WholePrefix(""), 0u);
  EXPECT_EQ(Utf8WholePrefix("\xf0\x9f\x9a"), 0u);          // 3 of a 4-byte emoji
  EXPECT_EQ(Utf8WholePrefix("a\xf0\x9f\x9a\x80"), 5u);     // the whole emoji
  EXPECT_EQ(Utf8WholePrefix("\x80\x80\x80\x80\x80"), 5u);  // not UTF-8: kept
}

}  // namespace
}  // namespace skyslurm
