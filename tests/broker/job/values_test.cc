#include "broker/job/values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::int64_t Minutes(std::string_view text) {
  auto t = ParseTimeLimit(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
  return t.ok() && t->minutes ? *t->minutes : -1;
}

TEST(TimeLimitTest, EverySlurmForm) {
  EXPECT_EQ(Minutes("90"), 90);
  EXPECT_EQ(Minutes("10:30"), 11);  // MM:SS, seconds round up
  EXPECT_EQ(Minutes("10:00"), 10);
  EXPECT_EQ(Minutes("2:00:00"), 120);
  EXPECT_EQ(Minutes("1-0"), 1440);
  EXPECT_EQ(Minutes("1-12"), 2160);
  EXPECT_EQ(Minutes("1-00:30"), 1470);
  EXPECT_EQ(Minutes("2-03:04:05"), 2 * 1440 + 3 * 60 + 5);
  EXPECT_EQ(Minutes("0:01"), 1);
}

TEST(TimeLimitTest, Unlimited) {
  for (const char* text : {"UNLIMITED", "infinite", "-1", "0"}) {
    auto t = ParseTimeLimit(text);
    ASSERT_TRUE(t.ok()) << text;
    EXPECT_TRUE(t->infinite()) << text;
  }
}

TEST(TimeLimitTest, RejectsWhatSlurmRejects) {
  for (const char* text : {"", "abc", "1:2:3:4", "1-2:3:4:5", "-5", "1h", "1-", "1--2", ":30"}) {
    auto t = ParseTimeLimit(text);
    EXPECT_FALSE(t.ok()) << text;
    if (!t.ok()) {
      EXPECT_THAT(t.status().message(), HasSubstr("invalid time limit"));
    }
  }
}

TEST(TimeLimitTest, Formats) {
  EXPECT_EQ(FormatTimeLimit(TimeLimit{30}), "30:00");
  EXPECT_EQ(FormatTimeLimit(TimeLimit{90}), "1:30:00");
  EXPECT_EQ(FormatTimeLimit(TimeLimit{1440}), "1-00:00:00");
  EXPECT_EQ(FormatTimeLimit(TimeLimit{}), "UNLIMITED");
}

TEST(MemoryTest, Units) {
  EXPECT_EQ(*ParseMemoryMb("4000"), 4000);
  EXPECT_EQ(*ParseMemoryMb("4000M"), 4000);
  EXPECT_EQ(*ParseMemoryMb("16G"), 16384);
  EXPECT_EQ(*ParseMemoryMb("16g"), 16384);
  EXPECT_EQ(*ParseMemoryMb("1T"), 1048576);
  EXPECT_EQ(*ParseMemoryMb("2048K"), 2);
  EXPECT_EQ(*ParseMemoryMb("0"), 0);
  for (const char* bad : {"", "G", "16X", "-1", "1.5G", "99999999999999999T"}) {
    EXPECT_FALSE(ParseMemoryMb(bad).ok()) << bad;
  }
}

TEST(NodeCountTest, SingleAndRange) {
  EXPECT_EQ(*ParseNodeCount("4"), (NodeCount{4, 4}));
  EXPECT_EQ(*ParseNodeCount("2-8"), (NodeCount{2, 8}));
  for (const char* bad : {"0", "", "8-2", "a", "2-", "-2"}) {
    EXPECT_FALSE(ParseNodeCount(bad).ok()) << bad;
  }
}

TEST(GresTest, EveryForm) {
  auto g = ParseGresList("gpu:h100:8");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)[0], (GresItem{"gpu", "h100", 8, "gpu:h100:8"}));
  EXPECT_EQ((*ParseGresList("gpu:2"))[0].count, 2);
  EXPECT_EQ((*ParseGresList("gpu:2"))[0].type, "");
  EXPECT_EQ((*ParseGresList("gpu"))[0].count, 1);
  EXPECT_EQ((*ParseGresList("gpu:a100"))[0].type, "a100");
  EXPECT_EQ((*ParseGresList("gpu:a100"))[0].count, 1);
  EXPECT_EQ((*ParseGresList("gres/gpu:nvidia_a100-sxm4-80gb:4"))[0].type,
            "nvidia_a100-sxm4-80gb");
  EXPECT_EQ((*ParseGresList("gpu:1g.10gb:2"))[0].type, "1g.10gb");
  auto list = ParseGresList("gpu:v100:2,nvme:1,bandwidth:2g");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[2].count, 2LL * 1024 * 1024 * 1024);
}

TEST(GresTest, BadCountsAreErrors) {
  auto g = ParseGresList("gpu:h100:x");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "invalid count 'x' in GRES 'gpu:h100:x' (expected a whole number)");
  for (const char* bad : {"", ":2", "gpu::2", "gpu:h100:2:3", "gpu:2x", "gpu:,"}) {
    EXPECT_FALSE(ParseGresList(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatGres({"gpu", "A100", 2, ""}), "gpu:A100:2");
}

TEST(GpuListTest, TypedAndUntyped) {
  auto g = ParseGpuList("a100:2,v100:1");
  ASSERT_TRUE(g.ok());
  EXPECT_THAT(*g, ElementsAre(GpuCount{"a100", 2}, GpuCount{"v100", 1}));
  EXPECT_EQ((*ParseGpuList("8"))[0], (GpuCount{"", 8}));
  EXPECT_EQ((*ParseGpuList("gpu:h100:4"))[0], (GpuCount{"h100", 4}));
  for (const char* bad : {"", "0", "h100:", ":4", "x", "h100:-1"}) {
    EXPECT_FALSE(ParseGpuList(bad).ok()) << bad;
  }
}

TEST(ConstraintTest, PlainFeatureNames) {
  EXPECT_THAT(ConstraintFeatures("a100"), ElementsAre("a100"));
  EXPECT_THAT(ConstraintFeatures("a100&ib"), ElementsAre("a100", "ib"));
  EXPECT_THAT(ConstraintFeatures("[rack1*2|rack2*4]"), ElementsAre("rack1", "rack2"));
  EXPECT_THAT(ConstraintFeatures("(h100|a100)&!old"), ElementsAre("h100", "a100", "old"));
}

}  // namespace
}  // namespace skyslurm::job
