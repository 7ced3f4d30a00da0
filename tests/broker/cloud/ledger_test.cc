#include "broker/cloud/ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::cloud {
namespace {

using ::testing::HasSubstr;

TEST(LedgerTest, ReadsRowsInAnyColumnOrderWithStepsNotReachedYet) {
  auto rows = ParseLedger(
      "# the provider's export\n"
      "partition,node,requested,ready,down,instance\n"
      "cloud,delta-n1,1796000000,1796000021,1796000110,i-1\n"
      "spot,delta-n3,2026-12-02T20:00:00Z,,,i-2\n"
      "\n",
      "ledger.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].node, "delta-n1");
  EXPECT_EQ((*rows)[0].partition, "cloud");
  EXPECT_EQ((*rows)[0].requested, 1796000000);
  EXPECT_EQ((*rows)[0].ready, 1796000021);
  EXPECT_EQ((*rows)[0].down, 1796000110);
  EXPECT_EQ((*rows)[1].requested, 1796241600);  // 2026-12-02T20:00:00Z
  EXPECT_EQ((*rows)[1].ready, 0);
  EXPECT_EQ((*rows)[1].down, 0);
}

TEST(LedgerTest, WithoutAPartitionColumnRowsHaveNone) {
  auto rows = ParseLedger("node,requested,ready,down\nn1,10,20,30\n", "x");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)[0].partition, "");
}

TEST(LedgerTest, ErrorsNameTheFileTheLineAndTheColumn) {
  auto missing = ParseLedger("node,requested,ready\n", "ledger.csv");
  EXPECT_THAT(missing.status().message(),
              HasSubstr("ledger.csv:1: the header has no 'down' column"));
  auto bad = ParseLedger("node,requested,ready,down\nn1,10,20,30\nn2,10,soon,\n", "ledger.csv");
  EXPECT_THAT(bad.status().message(),
              HasSubstr("ledger.csv:3: ready: 'soon' is neither seconds since the epoch"));
  auto early = ParseLedger("node,requested,ready,down\nn1,100,90,\n", "ledger.csv");
  EXPECT_THAT(early.status().message(), HasSubstr("ledger.csv:2: n1: a time before the request"));
  auto unrequested = ParseLedger("node,requested,ready,down\nn1,,90,\n", "l");
  EXPECT_THAT(unrequested.status().message(), HasSubstr("l:2: n1: a power-up without its request"));
  auto nameless = ParseLedger("node,requested,ready,down\n,1,2,3\n", "l");
  EXPECT_THAT(nameless.status().message(), HasSubstr("l:2: no node name"));
}

TEST(LedgerTest, AnEmptyLedgerHasNoRows) {
  auto rows = ParseLedger("", "x");
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  auto header_only = ParseLedger("node,requested,ready,down,partition\n", "x");
  ASSERT_TRUE(header_only.ok());
  EXPECT_TRUE(header_only->empty());
}

std::vector<PowerUp> Boots(const std::string& partition, std::vector<int> seconds,
                           std::time_t first = 1000) {
  std::vector<PowerUp> out;
  for (int s : seconds) {
    out.push_back({"n", partition, first, first + s, 0});
    first += 1000;
  }
  return out;
}

TEST(LedgerTest, BootTimeIsTheUpperMedianOfThePartitionsLatestBoots) {
  EXPECT_EQ(MeasuredBootSeconds(Boots("cloud", {20, 25, 90}), "cloud"), 25);
  EXPECT_EQ(MeasuredBootSeconds(Boots("cloud", {20, 30}), "cloud"), 30);
  // Only the latest `window` boots count: the provider got faster.
  auto ledger = Boots("cloud", {300, 300, 300, 20, 21, 22}, 1000);
  EXPECT_EQ(MeasuredBootSeconds(ledger, "cloud", 3), 21);
  EXPECT_EQ(MeasuredBootSeconds(ledger, "cloud", 6), 300);
}

TEST(LedgerTest, BootTimeFallsBackToEveryPartitionThenToNothing) {
  auto ledger = Boots("cloud", {40});
  auto spot = Boots("spot", {10}, 50000);
  ledger.insert(ledger.end(), spot.begin(), spot.end());
  EXPECT_EQ(MeasuredBootSeconds(ledger, "spot"), 10);
  EXPECT_EQ(MeasuredBootSeconds(ledger, "gpu"), 40);  // upper median of 40 and 10
  ledger.push_back({"n9", "gpu", 90000, 0, 0});        // still booting: not a measure
  EXPECT_EQ(MeasuredBootSeconds(ledger, "gpu"), 40);
  EXPECT_EQ(MeasuredBootSeconds({}, "cloud"), std::nullopt);
}

}  // namespace
}  // namespace skyslurm::cloud
