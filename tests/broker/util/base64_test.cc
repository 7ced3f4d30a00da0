#include "broker/util/base64.h"

#include <gtest/gtest.h>

#include "broker/util/timestamp.h"

namespace skyslurm {
namespace {

TEST(Base64Test, RoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes) << i;
    bytes += static_cast<char>(i * 37 + 5);
  }
  EXPECT_EQ(Base64Encode("kappa"), "a2FwcGE=");
  EXPECT_EQ(Base64Decode("a2Fw\ncGE="), "kappa");  // wrapped, as kubeconfig PEMs may be
  EXPECT_EQ(Base64Decode("a2FwcGE"), "kappa");     // padding optional
}

TEST(Base64Test, RefusesWhatIsNotBase64) {
  EXPECT_FALSE(Base64Decode("a2F*cGE=").has_value());
  EXPECT_FALSE(Base64Decode("a2FwcGE=X").has_value());  // data after padding
  EXPECT_FALSE(Base64Decode("a").has_value());          // a lone sextet
}

TEST(Rfc3339Test, KubernetesTimes) {
  EXPECT_EQ(ParseRfc3339("2026-12-02T01:48:28Z"), 1796176108);
  EXPECT_EQ(ParseRfc3339("2026-12-02T01:48:28.123456Z"), 1796176108);
  EXPECT_EQ(ParseRfc3339("2026-12-02T02:48:28+01:00"), 1796176108);
  EXPECT_FALSE(ParseRfc3339("2026-12-02T01:48:28").has_value());  // no zone
  EXPECT_FALSE(ParseRfc3339("yesterday").has_value());
  EXPECT_EQ(FormatRfc3339(1796176108), "2026-12-02T01:48:28Z");
  EXPECT_EQ(FormatUtcTimestamp(1796176108), "2026-12-02T01:48:28");
  EXPECT_EQ(ParseUtcTimestamp(FormatUtcTimestamp(1796176108)), 1796176108);
}

}  // namespace
}  // namespace skyslurm
