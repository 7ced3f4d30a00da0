#include "broker/job/array_indices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::job {
namespace {

using ::testing::HasSubstr;

// The array as Slurm writes it back ("(none)": no array), or the error.
std::string Read(std::string_view text) {
  auto a = ParseArrayIndices(text);
  if (!a.ok()) return "error: " + a.status().message();
  return *a ? FormatArrayIndices(**a) : "(none)";
}

// Each answer below is what slurmctld 22.05 stored for the same value on the
// testbed (scontrol show job's ArrayTaskId).
TEST(ArrayIndicesTest, ReadsEverySlurmForm) {
  EXPECT_EQ(Read("0-3"), "0-3");
  EXPECT_EQ(Read("0-8:3"), "0,3,6");
  EXPECT_EQ(Read("1,3,5-7"), "1,3,5-7");
  EXPECT_EQ(Read("1-3:2,10%2"), "1,3,10%2");
  EXPECT_EQ(Read("0-10:20"), "0");
  EXPECT_EQ(Read("7,3,3"), "3,7");
  EXPECT_EQ(Read("1-3,2-5"), "1-5");
  EXPECT_EQ(Read("2-2"), "2");
  EXPECT_EQ(Read("0-1000"), "0-1000");
}

TEST(ArrayIndicesTest, ReadsNumbersAsStrtolDoes) {
  EXPECT_EQ(Read(" 1-3"), "1-3");
  EXPECT_EQ(Read("1- 3"), "1-3");
  EXPECT_EQ(Read("+3"), "3");
  EXPECT_EQ(Read("01-03"), "1-3");
  EXPECT_EQ(Read("1-3:+2"), "1,3");
  // No digits read as 0: "-" is 0-0, "0-" is 0-0.
  EXPECT_EQ(Read("-"), "0");
  EXPECT_EQ(Read("0-"), "0");
  EXPECT_EQ(Read("1-3,-"), "0-3");
}

TEST(ArrayIndicesTest, EmptyElementsAreSkippedAndNoIndexIsNoArray) {
  EXPECT_EQ(Read("1,,3"), "1,3");
  EXPECT_EQ(Read(",5"), "5");
  EXPECT_EQ(Read("5,"), "5");
  EXPECT_EQ(Read(""), "(none)");
  EXPECT_EQ(Read(","), "(none)");
  // With a limit and no index, slurmctld stores index 0.
  EXPECT_EQ(Read("%2"), "0%2");
  EXPECT_EQ(Read(",%2"), "0%2");
  EXPECT_EQ(Read("%"), "0");
}

TEST(ArrayIndicesTest, TheLimitIsReadAsSlurmReadsIt) {
  EXPECT_EQ(Read("0-3%1"), "0-3%1");
  EXPECT_EQ(Read("0-3%0"), "0-3");
  EXPECT_EQ(Read("0-3%-1"), "0-3");
  EXPECT_EQ(Read("0-3%x"), "0-3");
  EXPECT_EQ(Read("0-3% 2"), "0-3%2");
  EXPECT_EQ(Read("0-3%2x"), "0-3%2");
  EXPECT_EQ(Read("0-3%2%3"), "0-3%2");
  EXPECT_EQ(Read("0-3:2%"), "0,2");
  EXPECT_EQ(Read("0-3%70000"), "0-3%70000");
  EXPECT_EQ(Read("0-3%4294967295"), "0-3");  // INFINITE
}

TEST(ArrayIndicesTest, RefusesWhatSlurmctldRefusesSayingWhy) {
  EXPECT_THAT(Read("3-1"), HasSubstr("'3-1': the range ends before it starts"));
  EXPECT_THAT(Read("5-"), HasSubstr("the range ends before it starts"));
  EXPECT_THAT(Read("0-8:0"), HasSubstr("a step must be a number above 0"));
  EXPECT_THAT(Read("0-10:-2"), HasSubstr("a step must be a number above 0"));
  EXPECT_THAT(Read("1-3:"), HasSubstr("a step must be a number above 0"));
  EXPECT_THAT(Read("-1"), HasSubstr("an index cannot be negative"));
  EXPECT_THAT(Read("x"), HasSubstr("'x': unexpected text after the numbers"));
  EXPECT_THAT(Read("0x5"), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("1 -3"), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("1-3 "), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("3-5-7"), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("1:2"), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("1-5:2:3"), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("1;2"), HasSubstr("unexpected text"));
  EXPECT_THAT(Read("1-:2"), HasSubstr("the range ends before it starts"));
  EXPECT_THAT(Read("x"), HasSubstr("expected MIN, MIN-MAX or MIN-MAX:STEP (as 0-15:4)"));
}

TEST(ArrayIndicesTest, IndicesStayBelowSlurmsLargestMaxArraySize) {
  auto largest = ParseArrayIndices("4000000");
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ((*largest)->indices, std::vector<std::int64_t>{4000000});
  EXPECT_THAT(Read("0-4000001"), HasSubstr("an index must be below 4000001"));
  EXPECT_THAT(Read("99999999999999999999999"), HasSubstr("an index must be below 4000001"));
  // The same index named many times is one task: memory is the largest index's.
  std::string many;
  for (int i = 0; i < 50; ++i) many += "0-399999,";
  auto big = ParseArrayIndices(many);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->indices.size(), 400'000u);
  EXPECT_EQ(FormatArrayIndices(**big), "0-399999");
}

TEST(ArrayIndicesTest, WritesRunsAndSinglesAsSlurmDoes) {
  EXPECT_EQ(FormatArrayIndices(std::vector<std::int64_t>{}), "");
  EXPECT_EQ(FormatArrayIndices(std::vector<std::int64_t>{0, 1}), "0-1");
  EXPECT_EQ(FormatArrayIndices(std::vector<std::int64_t>{0, 2, 3, 4, 9}), "0,2-4,9");
  ArrayIndices a;
  a.indices = {0, 119, 120, 240};
  a.throttle = 50;
  EXPECT_EQ(FormatArrayIndices(a), "0,119-120,240%50");
}

}  // namespace
}  // namespace skyslurm::job
