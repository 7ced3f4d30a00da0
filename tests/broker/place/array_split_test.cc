#include "broker/place/array_split.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace skyslurm::place {
namespace {

constexpr std::time_t kNow = 1'800'000'000;

job::ArrayIndices Indices(std::string_view text) {
  auto parsed = job::ParseArrayIndices(text);
  EXPECT_TRUE(parsed.ok() && parsed->has_value()) << text;
  return **parsed;
}

// `width` tasks at once, each `run_s`, the first at now + `wait`.
SplitTarget Target(std::string name, int width, std::int64_t tasks, std::time_t wait = 0,
                   std::int64_t run_s = 600) {
  SplitTarget t;
  t.cluster = std::move(name);
  t.start = kNow + wait;
  t.run_s = run_s;
  for (std::int64_t k = 0; k < tasks; ++k) t.task_starts.push_back(t.start + (k / width) * run_s);
  return t;
}

std::map<std::string, std::string> Specs(const ArraySplit& split) {
  std::map<std::string, std::string> out;
  for (const auto& p : split.parts) out[p.cluster] = p.ArraySpec();
  return out;
}

TEST(ArraySplitTest, EachWaveOfTasksGoesWhereItStartsSoonest) {
  // Free now: alpha 4, beta 2, gamma 6; 24 tasks of 10 min: two waves.
  const auto array = Indices("0-23");
  auto split =
      SplitArray(array, {Target("alpha", 4, 24), Target("beta", 2, 24), Target("gamma", 6, 24)});
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(Specs(*split), (std::map<std::string, std::string>{
                               {"alpha", "0-7"}, {"beta", "8-11"}, {"gamma", "12-23"}}));
  EXPECT_EQ(split->last_start, kNow + 600);
  // Kept whole on alpha it would end its last wave 5 waves later.
  EXPECT_EQ(LastStartOn(array, Target("alpha", 4, 24)), kNow + 5 * 600);
}

TEST(ArraySplitTest, AHugeArrayIsAFewRunsOfIndices) {
  // 10,000 tasks over three clusters 16, 8 and 24 at a time: 208 whole
  // waves, the rest to the first (a tie); each part's --array is one run.
  auto split = SplitArray(Indices("0-9999"), {Target("alpha", 16, 10000), Target("beta", 8, 10000),
                                              Target("gamma", 24, 10000)});
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(split->parts.size(), 3u);
  EXPECT_EQ(Specs(*split),
            (std::map<std::string, std::string>{
                {"alpha", "0-3343"}, {"beta", "3344-5007"}, {"gamma", "5008-9999"}}));
}

TEST(ArraySplitTest, EveryIndexOnceWithStepsAndLists) {
  const auto array = Indices("0-240:10,3,7");
  auto split = SplitArray(array, {Target("alpha", 3, 40), Target("beta", 5, 40, 300)});
  ASSERT_TRUE(split.ok());
  std::multiset<std::int64_t> seen;
  for (const auto& p : split->parts) {
    EXPECT_TRUE(std::is_sorted(p.indices.begin(), p.indices.end()));
    seen.insert(p.indices.begin(), p.indices.end());
  }
  EXPECT_EQ(seen, std::multiset<std::int64_t>(array.indices.begin(), array.indices.end()));
}

TEST(ArraySplitTest, AClusterThatStartsNothingSoonerGetsNothing) {
  auto split = SplitArray(Indices("0-3"), {Target("alpha", 4, 4), Target("beta", 4, 4, 3600)});
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(split->parts.size(), 1u);
  EXPECT_EQ(split->parts[0].cluster, "alpha");
  // A tie goes to the first.
  split = SplitArray(Indices("0-3"), {Target("beta", 4, 4), Target("alpha", 4, 4)});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(Specs(*split), (std::map<std::string, std::string>{{"beta", "0-3"}}));
}

TEST(ArraySplitTest, TheThrottleIsSharedSoThePartsNeverRunMoreTogether) {
  // %10 over alpha (4 at once) and gamma (8): the first 10 starts are 4 on
  // alpha and 6 on gamma; after that each part runs at most its share.
  auto split = SplitArray(Indices("0-39%10"), {Target("alpha", 4, 40), Target("gamma", 8, 40)});
  ASSERT_TRUE(split.ok());
  std::int64_t total = 0, tasks = 0;
  for (const auto& p : split->parts) {
    ASSERT_TRUE(p.throttle.has_value());
    total += *p.throttle;
    tasks += static_cast<std::int64_t>(p.indices.size());
    EXPECT_TRUE(p.ArraySpec().ends_with("%" + std::to_string(*p.throttle)));
  }
  EXPECT_EQ(total, 10);
  EXPECT_EQ(tasks, 40);
  EXPECT_EQ(split->parts[0].throttle, 4);
  EXPECT_EQ(split->parts[1].throttle, 6);
  // 40 tasks 10 at a time: four waves.
  EXPECT_EQ(split->last_start, kNow + 3 * 600);
  // %1 keeps it on one cluster.
  split = SplitArray(Indices("0-9%1"), {Target("alpha", 4, 10), Target("gamma", 8, 10)});
  ASSERT_TRUE(split.ok());
  ASSERT_EQ(split->parts.size(), 1u);
  EXPECT_EQ(split->parts[0].ArraySpec(), "0-9%1");
}

TEST(ArraySplitTest, IndicesAtOrAboveAClustersMaxArraySizeGoElsewhere) {
  SplitTarget small = Target("alpha", 100, 20);
  small.max_array_size = 1001;
  auto split = SplitArray(Indices("995-1004"), {small, Target("beta", 1, 20, 0, 60)});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(Specs(*split),
            (std::map<std::string, std::string>{{"alpha", "995-1000"}, {"beta", "1001-1004"}}));
  SplitTarget beta = Target("beta", 1, 20);
  beta.max_array_size = 1001;
  auto refused = SplitArray(Indices("999-1002"), {small, beta});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("array index 1001 is at or above the MaxArraySize"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("alpha 1001, beta 1001"), std::string::npos);
}

TEST(ArraySplitTest, WithoutALayoutAClusterRunsOneTaskAtATime) {
  SplitTarget kube;
  kube.cluster = "kappa";
  kube.start = kNow;
  kube.run_s = 600;
  auto split = SplitArray(Indices("0-5"), {Target("alpha", 2, 6), kube});
  ASSERT_TRUE(split.ok());
  // alpha: 2 now, 2 at +10 min...; kappa: one now, one at +10 min.
  EXPECT_EQ(Specs(*split),
            (std::map<std::string, std::string>{{"alpha", "0-3"}, {"kappa", "4-5"}}));
}

}  // namespace
}  // namespace skyslurm::place
