// The histogram /metrics writes: cumulative buckets, sum and count that agree.
#include "broker/util/latency_histogram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm {
namespace {

using ::testing::HasSubstr;

TEST(LatencyHistogramTest, BucketsAreCumulativeAndTheCountIsTheLast) {
  LatencyHistogram h;
  h.Observe(std::chrono::microseconds(500));  // <= 0.001
  h.Observe(std::chrono::milliseconds(20));   // <= 0.025
  h.Observe(std::chrono::milliseconds(20));
  h.Observe(std::chrono::seconds(60));  // only +Inf
  const std::string text = h.Render("x_seconds", "What x takes.", "kind=\"read\"");
  EXPECT_THAT(text, HasSubstr("# HELP x_seconds What x takes.\n# TYPE x_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_bucket{kind=\"read\",le=\"0.001\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_bucket{kind=\"read\",le=\"0.01\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_bucket{kind=\"read\",le=\"0.025\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_bucket{kind=\"read\",le=\"30\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_bucket{kind=\"read\",le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_sum{kind=\"read\"} 60.0405\n"));
  EXPECT_THAT(text, HasSubstr("x_seconds_count{kind=\"read\"} 4\n"));
  EXPECT_EQ(h.count(), 4);
  // Without labels, and without the header for a second label set.
  EXPECT_THAT(h.Render("y", "h"), HasSubstr("y_bucket{le=\"+Inf\"} 4\ny_sum 60.0405\ny_count 4\n"));
  EXPECT_THAT(h.Render("y", "h", "a=\"b\"", false), ::testing::Not(HasSubstr("# TYPE")));
}

TEST(LatencyHistogramTest, LabelsAreEscaped) {
  EXPECT_EQ(PrometheusLabel("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(PrometheusNumber(0.25), "0.25");
  EXPECT_EQ(PrometheusNumber(3), "3");
}

}  // namespace
}  // namespace skyslurm
