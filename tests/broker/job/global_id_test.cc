#include "broker/job/global_id.h"

#include <gtest/gtest.h>

#include <set>

namespace skyslurm {
namespace {

TEST(GlobalIdTest, AnIdCarriesItsClusterAboveBit26) {
  EXPECT_EQ(EncodeGlobalId(12, "77"), (std::uint64_t{12} << 26) + 77);
  const DecodedId d = DecodeGlobalId((std::uint64_t{12} << 26) + 77);
  EXPECT_EQ(d.index, 12);
  EXPECT_EQ(d.local, 77u);
  // The largest fits Slurm's 32-bit job ids.
  EXPECT_EQ(EncodeGlobalId(63, "67108863"), 4294967295u);
}

TEST(GlobalIdTest, OnlyAClustersOwnIdsBelow2To26AreEncoded) {
  EXPECT_FALSE(EncodeGlobalId(12, "67108864"));  // a site's MaxJobId above 2^26
  EXPECT_FALSE(EncodeGlobalId(0, "5"));
  EXPECT_FALSE(EncodeGlobalId(64, "5"));
  EXPECT_FALSE(EncodeGlobalId(3, "5_7"));
  EXPECT_FALSE(EncodeGlobalId(3, ""));
  EXPECT_FALSE(EncodeGlobalId(3, "0"));
}

TEST(GlobalIdTest, AHomeIdIsNotGlobal) {
  EXPECT_EQ(DecodeGlobalId(67043328).index, 0);  // Slurm's default MaxJobId
  EXPECT_FALSE(IsGlobalIdWord("464"));
  EXPECT_FALSE(IsGlobalIdWord("beta"));
  EXPECT_FALSE(IsGlobalIdWord(""));
  EXPECT_FALSE(IsGlobalIdWord("4294967296"));  // above 63 << 26
  EXPECT_TRUE(IsGlobalIdWord("805306445"));
  EXPECT_TRUE(IsGlobalIdWord("805306445_7"));
  EXPECT_TRUE(IsGlobalIdWord("805306445.batch"));
}

TEST(GlobalIdTest, AWordSplitsIntoItsNumberAndSuffix) {
  auto w = SplitJobIdWord("805306445_[1-3]");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->number, 805306445u);
  EXPECT_EQ(w->rest, "_[1-3]");
  EXPECT_FALSE(SplitJobIdWord("_7"));
  EXPECT_FALSE(SplitJobIdWord("99999999999999999999"));
}

TEST(GlobalIdTest, IndicesComeFromTheNamesAloneAndDoNotCollide) {
  const auto all = ClusterIndices({"alpha", "beta", "gamma", "delta", "kappa"}, {});
  // The testbed's names share no slot: any subset gives each the same index.
  EXPECT_EQ(all.at("beta"), DefaultClusterIndex("beta"));
  EXPECT_EQ(ClusterIndices({"beta"}, {}).at("beta"), all.at("beta"));
  EXPECT_EQ(ClusterIndices({"gamma", "alpha"}, {}).at("alpha"), all.at("alpha"));
  std::set<int> seen;
  for (const auto& [name, index] : all) {
    EXPECT_GE(index, 1);
    EXPECT_LE(index, 63);
    EXPECT_TRUE(seen.insert(index).second) << name;
  }
}

TEST(GlobalIdTest, APinnedIndexWinsAndTheOthersMoveAside) {
  const int beta = DefaultClusterIndex("beta");
  const auto indices = ClusterIndices({"alpha", "beta"}, {{"alpha", beta}});
  EXPECT_EQ(indices.at("alpha"), beta);
  EXPECT_EQ(indices.at("beta"), beta % 63 + 1);
  // Two names on one slot: the later name takes the next free one.
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("c" + std::to_string(i));
  const auto many = ClusterIndices(names, {});
  EXPECT_EQ(many.size(), 63u);  // no more than 63 clusters have an index
}

}  // namespace
}  // namespace skyslurm
