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

// time_str2mins' own reading (issue 11's differential test found "1-").
TEST(TimeLimitTest, WhatTimeStr2MinsTakes) {
  EXPECT_EQ(Minutes("1-"), 1440);
  EXPECT_EQ(Minutes("12-"), 17280);
  EXPECT_EQ(Minutes("1:60"), 2);
  EXPECT_EQ(Minutes("0:30"), 1);
  EXPECT_EQ(Minutes("1:2:3"), 63);
  EXPECT_EQ(Minutes("1-2"), 1560);
  EXPECT_EQ(Minutes("1-2:3"), 1563);
  EXPECT_EQ(Minutes("1-2:3:4"), 1564);
  EXPECT_EQ(Minutes("35791393"), 35791393);
  // sscanf's %d keeps an int of strtol's saturated long: -1 second.
  EXPECT_EQ(Minutes("60:18446744073709551617"), 60);
  // Regression (review): (seconds + 59) / 60 is Slurm's int, which wraps.
  EXPECT_FALSE(ParseTimeLimit("35791394").ok());
  EXPECT_TRUE(ParseTimeLimit("0:00:00")->infinite());
  EXPECT_TRUE(ParseTimeLimit("-0")->infinite());
}

TEST(TimeLimitTest, Unlimited) {
  for (const char* text : {"UNLIMITED", "infinite", "-1", "0"}) {
    auto t = ParseTimeLimit(text);
    ASSERT_TRUE(t.ok()) << text;
    EXPECT_TRUE(t->infinite()) << text;
  }
}

TEST(TimeLimitTest, RejectsWhatSlurmRejects) {
  for (const char* text : {"", "abc", "1:2:3:4", "1-2:3:4:5", "-5", "1h", "1--2", ":30", " 60",
                           "+60", "1.5", "1:", "1::3", "1:2:", "1-:3", "1:2-3", "-0:30"}) {
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
  for (const char* bad : {"", "G", "16X", "-1", "1.5G", "99999999999999999T", "16GBB", "16BG",
                          "16 G", "16i", "16GiB", "0x10"}) {
    EXPECT_FALSE(ParseMemoryMb(bad).ok()) << bad;
  }
}

// Regression (issue 11): "#SBATCH --mem=24gb" from a real script was refused;
// Slurm's str_to_mbytes takes a B after the unit, any case, blanks before
// the number and a sign.
TEST(MemoryTest, WhatStrToMbytesTakes) {
  EXPECT_EQ(*ParseMemoryMb("24gb"), 24576);
  EXPECT_EQ(*ParseMemoryMb("24GB"), 24576);
  EXPECT_EQ(*ParseMemoryMb("24gB"), 24576);
  EXPECT_EQ(*ParseMemoryMb("512MB"), 512);
  EXPECT_EQ(*ParseMemoryMb("1tb"), 1048576);
  EXPECT_EQ(*ParseMemoryMb("1025kb"), 2);
  EXPECT_EQ(*ParseMemoryMb("1k"), 1);
  EXPECT_EQ(*ParseMemoryMb(" 8G"), 8192);
  EXPECT_EQ(*ParseMemoryMb("+8G"), 8192);
  EXPECT_EQ(*ParseMemoryMb("-0"), 0);
  EXPECT_EQ(*ParseMemoryMb("007"), 7);
}

TEST(NodeCountTest, SingleAndRange) {
  EXPECT_EQ(*ParseNodeCount("4"), (NodeCount{4, 4}));
  EXPECT_EQ(*ParseNodeCount("2-8"), (NodeCount{2, 8}));
  for (const char* bad : {"", "8-2", "a", "2-", "-", "2,4", "1.5", "2--4", "3000000000"}) {
    EXPECT_FALSE(ParseNodeCount(bad).ok()) << bad;
  }
}

// verify_node_count's own reading (issue 11's differential test).
TEST(NodeCountTest, WhatVerifyNodeCountTakes) {
  EXPECT_EQ(*ParseNodeCount("0"), (NodeCount{0, 0}));
  EXPECT_EQ(*ParseNodeCount("-4"), (NodeCount{1, 4}));
  EXPECT_EQ(*ParseNodeCount("3-0"), (NodeCount{3, 3}));
  EXPECT_EQ(*ParseNodeCount("2k"), (NodeCount{2048, 2048}));
  EXPECT_EQ(*ParseNodeCount(" 2"), (NodeCount{2, 2}));
  EXPECT_EQ(*ParseNodeCount("2 "), (NodeCount{2, 2}));
  EXPECT_EQ(*ParseNodeCount("+2"), (NodeCount{2, 2}));
  EXPECT_EQ(*ParseNodeCount("3000000000-4"), (NodeCount{1, 4}));
}

TEST(CountTest, WhatParseIntTakes) {
  EXPECT_EQ(*ParsePositiveCount("+2"), 2);
  EXPECT_EQ(*ParsePositiveCount(" 2"), 2);
  EXPECT_EQ(*ParsePositiveCount("08"), 8);
  EXPECT_EQ(*ParsePositiveCount("2147483647"), 2147483647);
  EXPECT_EQ(*ParsePositiveCount("4294967298"), 2);  // Slurm's int of it
  for (const char* bad : {"0", "-1", "", "2 ", "2k", "0x10", "1.5", "2147483648", "99999999999999999999"}) {
    EXPECT_FALSE(ParsePositiveCount(bad).ok()) << bad;
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
  EXPECT_EQ((*ParseGresList("gpu:nvidia_a100-sxm4-80gb:4"))[0].type, "nvidia_a100-sxm4-80gb");
  // Slurm has no "gres/" prefix here: a GRES of that name, which no cluster has.
  EXPECT_EQ((*ParseGresList("gres/gpu:2"))[0].name, "gres/gpu");
  // A count of 0 is dropped before the name is looked at.
  EXPECT_TRUE(ParseGresList(":0")->empty());
  EXPECT_EQ((*ParseGresList("gpu:1g.10gb:2"))[0].type, "1g.10gb");
  auto list = ParseGresList("gpu:v100:2,nvme:1,bandwidth:2g");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[2].count, 2LL * 1024 * 1024 * 1024);
}

TEST(GresTest, BadCountsAreErrors) {
  auto g = ParseGresList("gpu:h100:x");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("invalid GRES 'gpu:h100:x' ('x' is not a count"));
  for (const char* bad : {":2", "gpu::2", "gpu:h100:2:3", "gpu:", "gpu:h100:", "gpu:,"}) {
    EXPECT_FALSE(ParseGresList(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatGres({"gpu", "A100", 2, ""}), "gpu:A100:2");
}

// slurmctld's reading of a GRES: a word that is not a count is a type.
TEST(GresTest, AsSlurmctldReadsIt) {
  EXPECT_EQ((*ParseGresList("gpu:2x"))[0], (GresItem{"gpu", "2x", 1, "gpu:2x"}));
  EXPECT_EQ((*ParseGresList("gpu:1.5"))[0].type, "1.5");
  EXPECT_EQ((*ParseGresList("gpu:h100:1kb"))[0].count, 1000);
  EXPECT_EQ((*ParseGresList("gpu:h100:2KiB"))[0].count, 2048);
  EXPECT_TRUE(ParseGresList("gpu:0")->empty());
  EXPECT_TRUE(ParseGresList("gpu:h100:0")->empty());
  EXPECT_TRUE(ParseGresList("gpu:k")->empty());  // no digits before a unit: 0
  // Regression (review): without digits, blanks and a sign are part of the
  // word, which is then a type, not a count of 0.
  EXPECT_EQ((*ParseGresList("gpu:+"))[0], (GresItem{"gpu", "+", 1, "gpu:+"}));
  EXPECT_EQ((*ParseGresList("gpu: k"))[0].type, " k");
  EXPECT_FALSE(ParseGresList("gpu:h100:+").ok());
  EXPECT_TRUE(ParseGresList("none")->empty());
  EXPECT_TRUE(ParseGresList("NONE")->empty());
  EXPECT_TRUE(ParseGresList("")->empty());
  EXPECT_EQ(ParseGresList("gpu:1,,gpu:h100:2")->size(), 2u);
}

TEST(GpuListTest, TypedAndUntyped) {
  auto g = ParseGpuList("a100:2,v100:1");
  ASSERT_TRUE(g.ok());
  EXPECT_THAT(*g, ElementsAre(GpuCount{"a100", 2}, GpuCount{"v100", 1}));
  EXPECT_EQ((*ParseGpuList("8"))[0], (GpuCount{"", 8}));
  EXPECT_TRUE(ParseGpuList("0")->empty());
  EXPECT_TRUE(ParseGpuList("")->empty());
  // Slurm makes gpu:gpu:h100:4 of it and refuses it.
  for (const char* bad : {"gpu:h100:4", "h100:", ":4", "h100:x", "a:b:c"}) {
    EXPECT_FALSE(ParseGpuList(bad).ok()) << bad;
  }
}

// Regression (issue 11): "#SBATCH --gpus-per-node=h100" (a type, the count
// implied) was refused as "invalid GPU count 'h100'".
TEST(GpuListTest, ATypeAloneIsOneGpu) {
  EXPECT_THAT(*ParseGpuList("h100"), ElementsAre(GpuCount{"h100", 1}));
  EXPECT_THAT(*ParseGpuList("x"), ElementsAre(GpuCount{"x", 1}));
  EXPECT_THAT(*ParseGpuList("a100,h100:2"), ElementsAre(GpuCount{"a100", 1}, GpuCount{"h100", 2}));
}

TEST(ConstraintTest, PlainFeatureNames) {
  EXPECT_THAT(ConstraintFeatures("a100"), ElementsAre("a100"));
  EXPECT_THAT(ConstraintFeatures("a100&ib"), ElementsAre("a100", "ib"));
  EXPECT_THAT(ConstraintFeatures("[rack1*2|rack2*4]"), ElementsAre("rack1", "rack2"));
  EXPECT_THAT(ConstraintFeatures("(h100|a100)&!old"), ElementsAre("h100", "a100", "old"));
}

}  // namespace
}  // namespace skyslurm::job
