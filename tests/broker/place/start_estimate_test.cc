#include "broker/place/start_estimate.h"

#include <gtest/gtest.h>

namespace skyslurm::place {
namespace {

constexpr std::time_t kNow = 1'800'000'000;

cluster::QueuedJob Job(std::string state, std::int64_t gpus, std::time_t start, std::time_t end,
                       std::int64_t minutes, std::string partition = "batch",
                       std::string type = "A100") {
  cluster::QueuedJob j;
  j.state = std::move(state);
  j.gpus_per_node = gpus;
  j.nodes = 1;
  j.start_time = start;
  j.end_time = end;
  j.time_limit_minutes = minutes;
  j.partition = std::move(partition);
  j.gpu_type = std::move(type);
  return j;
}

EstimateInput In(std::int64_t gpus, std::int64_t capacity, std::time_t test_only) {
  EstimateInput in;
  in.now = kNow;
  in.test_only_start = test_only;
  in.partitions = {"batch"};
  in.gpu_type = "A100";
  in.gpus = gpus;
  in.minutes = 10;
  in.capacity = capacity;
  return in;
}

catalog::AcceleratorCatalog kCatalog;

TEST(StartEstimateTest, EmptyClusterKeepsSlurmsAnswer) {
  auto e = AccountForPendingWork(In(8, 24, kNow + 1), {}, kCatalog);
  EXPECT_EQ(e.start, kNow + 1);
  EXPECT_FALSE(e.moved);
}

TEST(StartEstimateTest, PendingJobsAheadTakeTheGpusFirst) {
  // 24 GPUs; a running job holds 24 until +5 min. Slurm says we start at +5
  // min, but a pending 16-GPU job (backfill: +5 min, 10 min) goes first:
  // only 8 are left until +15 min, and we need 16.
  std::vector<cluster::QueuedJob> q = {Job("RUNNING", 24, kNow - 60, kNow + 300, 10),
                                       Job("PENDING", 16, kNow + 300, 0, 10)};
  auto e = AccountForPendingWork(In(16, 24, kNow + 300), q, kCatalog);
  EXPECT_EQ(e.start, kNow + 900);
  EXPECT_TRUE(e.moved);
  EXPECT_EQ(e.pending_ahead, 1);
  EXPECT_EQ(e.pending_gpus, 16);
  // An 8-GPU job fits beside the pending one.
  EXPECT_EQ(AccountForPendingWork(In(8, 24, kNow + 300), q, kCatalog).start, kNow + 300);
}

// Regression: jobs held by their user (sbatch --hold) or an admin waited
// "ahead" of every new job, so a cluster with held jobs looked hours away.
TEST(StartEstimateTest, HeldJobsAreNotAhead) {
  std::vector<cluster::QueuedJob> q = {Job("PENDING", 24, 0, 0, 600), Job("PENDING", 24, 0, 0, 600)};
  q[0].reason = "JobHeldUser";
  q[1].reason = "JobHeldAdmin";
  auto e = AccountForPendingWork(In(8, 24, kNow), q, kCatalog);
  EXPECT_EQ(e.start, kNow);
  EXPECT_EQ(e.pending_ahead, 0);
  q[1].reason = "Priority";
  EXPECT_EQ(AccountForPendingWork(In(8, 24, kNow), q, kCatalog).pending_ahead, 1);
}

TEST(StartEstimateTest, OtherTypesAndPartitionsDoNotCount) {
  std::vector<cluster::QueuedJob> q = {Job("RUNNING", 24, kNow, kNow + 300, 10, "batch", "V100"),
                                       Job("PENDING", 24, kNow, 0, 10, "other", "A100")};
  EXPECT_EQ(AccountForPendingWork(In(8, 24, kNow), q, kCatalog).start, kNow);
  // A job over several partitions counts when one of them is ours; the same
  // GPU under another spelling counts too.
  q = {Job("RUNNING", 24, kNow, kNow + 300, 10, "other,batch", "a100")};
  EXPECT_EQ(AccountForPendingWork(In(8, 24, kNow), q, kCatalog).start, kNow + 300);
}

TEST(StartEstimateTest, PendingWithoutBackfillEstimateStartsAfterTheRunningWork) {
  std::vector<cluster::QueuedJob> q = {Job("RUNNING", 24, kNow, kNow + 600, 10),
                                       Job("PENDING", 24, 0, 0, 20)};
  auto e = AccountForPendingWork(In(24, 24, kNow + 600), q, kCatalog);
  EXPECT_EQ(e.start, kNow + 600 + 1200);
}

TEST(StartEstimateTest, CpuJobsKeepSlurmsAnswer) {
  std::vector<cluster::QueuedJob> q = {Job("PENDING", 24, kNow, 0, 10)};
  EXPECT_EQ(AccountForPendingWork(In(0, 24, kNow + 5), q, kCatalog).start, kNow + 5);
}

TEST(StartEstimateTest, NeverEarlierThanSlurmOrNow) {
  EXPECT_EQ(AccountForPendingWork(In(8, 24, kNow - 100), {}, kCatalog).start, kNow);
  std::vector<cluster::QueuedJob> q = {Job("RUNNING", 16, kNow, kNow + 60, 10)};
  // The model would allow now; Slurm (node layout) says later: Slurm wins.
  EXPECT_EQ(AccountForPendingWork(In(8, 24, kNow + 120), q, kCatalog).start, kNow + 120);
}

TEST(OverlapTest, PartitionsSharingNodes) {
  auto d = cluster::ParseDescriptionYaml(
      "name: beta\npartitions:\n  - {name: a, nodes: 'n[1-2]'}\n  - {name: b, nodes: n2}\n"
      "  - {name: c, nodes: n3}\nnodes:\n  - {name: 'n[1-3]', cpus: 1, memory_mb: 1, gres: 'gpu:h100:4'}\n",
      "x");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(OverlappingPartitions(*d, "a"), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(OverlappingPartitions(*d, "c"), (std::set<std::string>{"c"}));
  EXPECT_EQ(GpuCapacity(*d, "a", ""), 8);
  EXPECT_EQ(GpuCapacity(*d, "a", "h100"), 8);
  EXPECT_EQ(GpuCapacity(*d, "a", "a100"), 0);
}

}  // namespace
}  // namespace skyslurm::place
