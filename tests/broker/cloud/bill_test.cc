#include "broker/cloud/bill.h"

#include <gtest/gtest.h>

namespace skyslurm::cloud {
namespace {

// delta's shape: 8 GPUs a node, cloud at 4.00 and spot at 1.50 a GPU-hour.
NodePrice Delta(const PowerUp& up) { return {8, up.partition == "spot" ? 1.5 : 4.0}; }

TEST(BillTest, EachPowerUpAtItsNodesPriceChargedToItsJobsAndTheirUsers) {
  // n1 (cloud) up an hour for job 1 of ann; n3 (spot) up half an hour, its
  // first 20 min job 2 of bob's, then idle (bob's tail); n4 unused 6 min.
  const std::vector<PowerUp> ledger = {
      {"n1", "cloud", 0, 300, 3600}, {"n3", "spot", 0, 60, 1800}, {"n4", "spot", 0, 0, 360}};
  const std::vector<NodeUse> uses = {{"1", {"n1"}, 300, 3000, "ann"},
                                     {"2", {"n3"}, 60, 1200, "bob"}};
  const Bill bill = BillOf(ledger, uses, Delta, 0, 10000);
  EXPECT_DOUBLE_EQ(bill.by_job.at("1"), 32.0);  // 1 h x 8 GPUs x 4.00
  EXPECT_DOUBLE_EQ(bill.by_job.at("2"), 6.0);   // 0.5 h x 8 x 1.50
  EXPECT_DOUBLE_EQ(bill.by_user.at("ann"), 32.0);
  EXPECT_DOUBLE_EQ(bill.by_user.at("bob"), 6.0);
  EXPECT_DOUBLE_EQ(bill.by_user.at(""), 1.2);  // 0.1 h x 8 x 1.50, nobody's
  EXPECT_DOUBLE_EQ(bill.amount, 39.2);
  EXPECT_DOUBLE_EQ(bill.node_seconds, 3600 + 1800 + 360);
  EXPECT_DOUBLE_EQ(bill.gpu_seconds, 8 * (3600 + 1800 + 360));
  // Today's bill from 1800 on: only n1's second half hour.
  const Bill later = BillOf(ledger, uses, Delta, 1800, 10000);
  EXPECT_DOUBLE_EQ(later.amount, 16.0);
  EXPECT_EQ(later.by_job.count("2"), 0u);
}

TEST(BillTest, PeriodsStartAtUtcMidnightAndOnTheFirst) {
  const std::time_t t = 1796283436;           // 2026-12-03T07:37:16Z
  EXPECT_EQ(StartOfUtcDay(t), 1796256000);    // 2026-12-03T00:00:00Z
  EXPECT_EQ(StartOfUtcMonth(t), 1796083200);  // 2026-12-01T00:00:00Z
}

TEST(BillTest, PeriodsAskedForByName) {
  const std::time_t t = 1796283436;  // 2026-12-03T07:37:16Z
  EXPECT_EQ(PeriodStart("month", t), 1796083200);
  EXPECT_EQ(PeriodStart("today", t), 1796256000);
  EXPECT_EQ(PeriodStart("7d", t), t - 7 * 86400);
  EXPECT_EQ(PeriodStart("24h", t), t - 86400);
  EXPECT_EQ(PeriodStart("90m", t), t - 5400);
  EXPECT_EQ(PeriodStart("30s", t), t - 30);
  EXPECT_EQ(PeriodStart("2026-12-01", t), 1796083200);
  EXPECT_EQ(PeriodStart("2026-12-03T06:00:00", t), 1796277600);
  EXPECT_EQ(PeriodStart("week", t), std::nullopt);
  EXPECT_EQ(PeriodStart("7x", t), std::nullopt);
  EXPECT_EQ(PeriodStart("d", t), std::nullopt);
}

}  // namespace
}  // namespace skyslurm::cloud
