#include "broker/daemon/dashboard/cluster_cards.h"

#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

cluster::Node GpuNode(std::string name, std::string state, std::int64_t used,
                      std::vector<std::string> partitions) {
  cluster::Node n;
  n.name = std::move(name);
  n.state = std::move(state);
  n.gres = {{"gpu", "h100", 8}};
  if (used > 0) n.gres_used = {{"gpu", "h100", used}};
  n.partitions = std::move(partitions);
  return n;
}

TEST(ClusterCardsTest, NodeStatesFallInTheirBuckets) {
  auto bucket = [](std::string state) { return NodeStateBucket(GpuNode("n", state, 0, {})); };
  EXPECT_EQ(bucket("idle"), "idle");
  EXPECT_EQ(bucket("mixed"), "mixed");
  EXPECT_EQ(bucket("allocated"), "allocated");
  EXPECT_EQ(bucket("mixed+DRAIN"), "drained");
  EXPECT_EQ(bucket("idle+CLOUD+POWERED_DOWN"), "powered_down");
  EXPECT_EQ(bucket("idle+CLOUD+POWERING_UP"), "booting");
  EXPECT_EQ(bucket("down+NOT_RESPONDING"), "down");
}

// Two partitions over the same nodes (beta's): every row counts them, the
// card's totals count each GPU once.
TEST(ClusterCardsTest, AGpuInTwoPartitionsCountsOnceInTheTotals) {
  cluster::Inventory inv;
  inv.description.name = "beta";
  inv.description.nodes = {GpuNode("b1", "mixed", 3, {"main", "debug"}),
                           GpuNode("b2", "mixed+DRAIN", 0, {"main", "debug"})};
  inv.description.partitions = {{.name = "main", .is_default = true, .nodes = {"b1", "b2"}},
                                {.name = "debug", .nodes = {"b1", "b2"}}};
  cluster::QueuedJob pending;
  pending.state = "PENDING";
  pending.phase = cluster::JobPhase::kPending;
  pending.partition = "main";
  pending.gpus_per_node = 4;
  inv.jobs = {pending};
  place::ClusterHandle h;
  h.name = "beta";
  catalog::AcceleratorCatalog catalog;
  const ClusterCard card = MakeClusterCard(h, &inv, catalog, nullptr);
  EXPECT_TRUE(card.probed);
  EXPECT_EQ(card.kind, "slurm");
  ASSERT_EQ(card.gpus.size(), 2u);  // a row per partition
  EXPECT_EQ(card.total_gpus, 16);
  EXPECT_EQ(card.free_gpus, 5);  // b1's 8 less 3 in use; b2 drained
  EXPECT_EQ(card.pending_gpus, 4);
  EXPECT_EQ(card.nodes.at("mixed"), 1);
  EXPECT_EQ(card.nodes.at("drained"), 1);
  const store::GpuSample s = GpuSampleOf(card, 42);
  EXPECT_EQ(s.cluster, "beta");
  EXPECT_EQ(s.time, 42);
  EXPECT_EQ(s.total, 16);
  EXPECT_EQ(s.free, 5);
  const Json::Value v = ClusterCardJson(card, "$");
  EXPECT_EQ(v["free_gpus"].asInt(), 5);
  EXPECT_EQ(v["partitions"].size(), 2u);
  EXPECT_FALSE(v.isMember("elastic"));
}

TEST(ClusterCardsTest, WithoutAProbeTheCardSaysSo) {
  place::ClusterHandle h;
  h.name = "kappa";
  h.caps.kind = "kubernetes";
  catalog::AcceleratorCatalog catalog;
  const ClusterCard card = MakeClusterCard(h, nullptr, catalog, nullptr);
  EXPECT_FALSE(card.probed);
  EXPECT_EQ(card.kind, "kubernetes");
  EXPECT_TRUE(card.gpus.empty());
}

}  // namespace
}  // namespace skyslurm::daemon
