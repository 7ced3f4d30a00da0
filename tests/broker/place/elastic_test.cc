// What placement knows of an elastic cluster's partition (issue 15): whether
// it is one, its boot and how that is known, spot, price, and a job's
// expected cost there.
#include "broker/place/elastic.h"

#include <gtest/gtest.h>

#include "broker/backend/slurm/slurm_state.h"

namespace skyslurm::place {
namespace {

// A cloud like the testbed's delta: partitions cloud (n1-n2) and spot
// (n3-n4), 8 H100s per node, in the given states.
cluster::Description Delta(const std::string& state) {
  cluster::Description d;
  d.name = "delta";
  for (const std::string part : {"cloud", "spot"}) {
    cluster::Partition p;
    p.name = part;
    p.is_default = part == "cloud";
    for (int i = 1; i <= 2; ++i) {
      cluster::Node n;
      n.name = "delta-n" + std::to_string(part == "cloud" ? i : i + 2);
      n.gres = {{"gpu", "h100", 8}};
      n.partitions = {part};
      n.state = state;
      p.nodes.push_back(n.name);
      d.nodes.push_back(n);
    }
    d.partitions.push_back(p);
  }
  d.BuildIndex();
  return d;
}

TEST(ElasticTest, ACloudClusterIsElasticFromItsNodesAlone) {
  config::ClusterSettings none;
  ElasticFacts f = ElasticFactsOf(none, Delta("idle+CLOUD+POWERED_DOWN"), "cloud", nullptr);
  EXPECT_TRUE(f.elastic);
  EXPECT_FALSE(f.spot);
  EXPECT_EQ(f.boot_seconds, kAssumedBootSeconds);
  EXPECT_EQ(f.boot_basis, "assumed: no ledger and no boot_time for this cluster");
  EXPECT_FALSE(f.price.has_value());
  EXPECT_EQ(f.idle_tail_seconds, 600);  // suspend_time's default
  // Powered up (CLOUD still) is elastic too; an on-premises node is not.
  EXPECT_TRUE(ElasticFactsOf(none, Delta("idle+CLOUD"), "cloud", nullptr).elastic);
  EXPECT_FALSE(ElasticFactsOf(none, Delta("idle"), "cloud", nullptr).elastic);
  EXPECT_EQ(ElasticFactsOf(none, Delta("idle"), "cloud", nullptr).idle_tail_seconds, 0);
}

TEST(ElasticTest, TheBootIsMeasuredFromTheLedgerElseTheSettingsSayIt) {
  config::ClusterSettings s;
  s.boot_time = 180;
  s.spot = {"spot"};
  s.cost = {{"spot", 1.5}};
  s.cost_default = 4.0;
  const cluster::Description d = Delta("idle+CLOUD+POWERED_DOWN");
  ElasticFacts f = ElasticFactsOf(s, d, "spot", nullptr);
  EXPECT_EQ(f.boot_seconds, 180);
  EXPECT_EQ(f.boot_basis, "boot_time");
  EXPECT_TRUE(f.spot);
  EXPECT_EQ(f.price, 1.5);
  EXPECT_EQ(ElasticFactsOf(s, d, "cloud", nullptr).price, 4.0);

  // Boots of 20, 25 and 40 s in the ledger (and one still booting): 25.
  const std::vector<cloud::PowerUp> ledger = {{"delta-n3", "spot", 1000, 1020, 1100},
                                              {"delta-n4", "spot", 1000, 1025, 1100},
                                              {"delta-n3", "spot", 2000, 2040, 0},
                                              {"delta-n4", "spot", 3000, 0, 0}};
  f = ElasticFactsOf(s, d, "spot", &ledger);
  EXPECT_EQ(f.boot_seconds, 25);
  EXPECT_EQ(f.boot_basis, "measured: the median of the ledger's latest boots");
  // A ledger with no boot yet: boot_time, saying why (no "not read" error).
  const std::vector<cloud::PowerUp> empty;
  f = ElasticFactsOf(s, d, "spot", &empty);
  EXPECT_EQ(f.boot_seconds, 180);
  EXPECT_EQ(f.boot_basis, "boot_time (no node has booted yet for the ledger to measure)");
  // The provider writes its ledger at the first power-up: none yet is empty.
  auto none = ReadLedger("/nonexistent/skyslurm-ledger.csv");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->empty());
  // An on-premises cluster's settings may name no boot: it is not elastic.
  config::ClusterSettings onprem;
  onprem.cost_default = 0.5;
  f = ElasticFactsOf(onprem, Delta("idle"), "cloud", &ledger);
  EXPECT_FALSE(f.elastic);
  EXPECT_EQ(f.boot_seconds, 0);
}

// A 2 min boot, a 10 min idle tail, $4 a GPU-hour.
config::ClusterSettings Billed() {
  config::ClusterSettings s;
  s.boot_time = 120;
  s.suspend_time = 600;
  s.cost_default = 4.0;
  return s;
}

// A job is billed what Slurm allocates it, from the boot to the power-down.
TEST(ElasticTest, AJobsExpectedCostBillsWhatSlurmAllocatesFromBootToPowerDown) {
  const config::ClusterSettings s = Billed();
  const cluster::Description d = Delta("idle+CLOUD+POWERED_DOWN");
  const ElasticFacts f = ElasticFactsOf(s, d, "cloud", nullptr);
  // Whole nodes (--exclusive, OverSubscribe=EXCLUSIVE): 2 nodes, 4 of
  // their 8 GPUs each, 30 min: 2 x (2 + 30 + 10) min x 8 x $4.
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(f, d, "cloud", 2, 4, 30, NodeStart::kBoots, true),
                   2 * 42.0 / 60 * 8 * 4);
  // Its nodes up already: no boot billed for it.
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(f, d, "cloud", 2, 4, 30, NodeStart::kIdleUp, true),
                   2 * 40.0 / 60 * 8 * 4);
  // Beside jobs on nodes others keep up (or boot): its own GPUs for its run.
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(f, d, "cloud", 2, 4, 30, NodeStart::kShares, false),
                   2 * 0.5 * 4 * 4);
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(f, d, "cloud", 2, 4, 30, NodeStart::kSharesBooting, false),
                   2 * 0.5 * 4 * 4);
  // An on-premises cluster's internal rate: the job's GPUs for its run.
  config::ClusterSettings onprem;
  onprem.cost_default = 0.5;
  const cluster::Description up = Delta("idle");
  const ElasticFacts o = ElasticFactsOf(onprem, up, "cloud", nullptr);
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(o, up, "cloud", 2, 4, 30, NodeStart::kIdleUp, false),
                   2 * 0.5 * 4 * 0.5);
  // On a shared partition (the rest of the nodes others' to use): its GPUs'
  // share of their time, boot and idle tail included.
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(f, d, "cloud", 2, 4, 30, NodeStart::kBoots, false),
                   2 * 42.0 / 60 * 4 * 4);
  EXPECT_DOUBLE_EQ(*ExpectedJobCost(f, d, "cloud", 2, 4, 30, NodeStart::kIdleUp, false),
                   2 * 40.0 / 60 * 4 * 4);
  // No price, no cost.
  EXPECT_FALSE(ExpectedJobCost(ElasticFactsOf({}, d, "cloud", nullptr), d, "cloud", 1, 8, 30,
                               NodeStart::kBoots, true)
                   .has_value());
}

TEST(ElasticTest, WaitingWorkFillsTheNodesAJobBoots) {
  const cluster::Description d = Delta("idle+CLOUD+POWERED_DOWN");
  // A 1-GPU job on an 8-GPU node: 7 GPUs of waiting jobs fill the rest.
  EXPECT_TRUE(WaitingWorkFillsNodes(d, "cloud", 1, 1, 7));
  EXPECT_FALSE(WaitingWorkFillsNodes(d, "cloud", 1, 1, 6));
  // Two nodes, 4 GPUs each: 8 more.
  EXPECT_FALSE(WaitingWorkFillsNodes(d, "cloud", 2, 4, 7));
  EXPECT_TRUE(WaitingWorkFillsNodes(d, "cloud", 2, 4, 8));
  // A whole-node job fills its nodes itself: nothing to share, whatever waits.
  EXPECT_FALSE(WaitingWorkFillsNodes(d, "cloud", 1, 8, 16));
  EXPECT_FALSE(WaitingWorkFillsNodes(d, "cloud", 1, 1, 0));
}

// The job that boots nodes a burst fills is billed its share of them, but
// adds their boot and idle tail whole: the jobs that join it add their runs.
TEST(ElasticTest, BootingNodesTheWaitingWorkFillsAddsTheirBootAndIdleTailWhole) {
  const config::ClusterSettings s = Billed();
  const cluster::Description d = Delta("idle+CLOUD+POWERED_DOWN");
  const ElasticFacts f = ElasticFactsOf(s, d, "cloud", nullptr);
  // 2 nodes, 1 of their 8 GPUs each, 30 min: (2 + 10) min x 8 GPUs x 2
  // nodes, and 30 min x 1 GPU x 2 nodes, at $4.
  const double added = *BootedNodesAddedCost(f, d, "cloud", 2, 1, 30);
  EXPECT_DOUBLE_EQ(added, (2 * 12.0 / 60 * 8 + 2 * 0.5 * 1) * 4);
  // More than its share of the bill, less than the nodes for its limit.
  EXPECT_GT(added, *ExpectedJobCost(f, d, "cloud", 2, 1, 30, NodeStart::kBoots, false));
  EXPECT_LT(added, *ExpectedJobCost(f, d, "cloud", 2, 1, 30, NodeStart::kBoots, true));
  EXPECT_FALSE(BootedNodesAddedCost(ElasticFactsOf({}, d, "cloud", nullptr), d, "cloud", 1, 1, 30)
                   .has_value());
}

// A node a burst fills is opened for the waiting work, not for the one job
// that boots it: what the jobs that fill the rest gain (their waits spared,
// less their runs' bill) is what the boot buys besides that job's wait.
TEST(ElasticTest, TheWaitingWorkThatFillsTheNodesGainsTheWaitsItIsSpared) {
  const config::ClusterSettings s = Billed();  // cloud at $4 a GPU-hour
  const cluster::Description d = Delta("idle+CLOUD+POWERED_DOWN");
  const ElasticFacts f = ElasticFactsOf(s, d, "cloud", nullptr);
  // A 1-GPU, 10-min job reaching the front of 14 GPUs of waiting work in
  // 40 min; the node starts it in 2 min. The 7 GPUs just ahead of it start,
  // on average, at 40 x (1 - 7/28) = 30 min: 28 min sooner, worth 7 x 28/60
  // x $3 at overflow.worth; their 10-min runs cost 7 x 10/60 x $4.
  WaitingWorkGain g = GainOfWaitingWork(f, d, "cloud", 1, 1, 10, 14, 2400, 120, 3.0);
  EXPECT_EQ(g.gpus, 7);
  EXPECT_DOUBLE_EQ(g.spared_s, 1680);
  EXPECT_DOUBLE_EQ(g.wait_worth, 7 * 28.0 / 60 * 3);
  EXPECT_DOUBLE_EQ(g.run_cost, 7 * 10.0 / 60 * 4);
  EXPECT_DOUBLE_EQ(g.Net(), 7 * 28.0 / 60 * 3 - 7 * 10.0 / 60 * 4);
  // The deeper the queue, the nearer their waits come to the job's own.
  EXPECT_GT(GainOfWaitingWork(f, d, "cloud", 1, 1, 10, 70, 2400, 120, 3.0).spared_s, g.spared_s);
  // Waits shorter than their runs are worth less than the runs' bill:
  // nothing gained, never a negative gain.
  g = GainOfWaitingWork(f, d, "cloud", 1, 1, 10, 14, 600, 120, 3.0);
  EXPECT_LT(g.wait_worth, g.run_cost);
  EXPECT_DOUBLE_EQ(g.Net(), 0);
  // Waits the boot does not beat are spared nothing.
  EXPECT_DOUBLE_EQ(GainOfWaitingWork(f, d, "cloud", 1, 1, 10, 14, 100, 120, 3.0).spared_s, 0);
  // Nothing fills the rest (too little waits, a whole-node job, no price):
  // no gain.
  EXPECT_EQ(GainOfWaitingWork(f, d, "cloud", 1, 1, 10, 6, 2400, 120, 3.0).gpus, 0);
  EXPECT_DOUBLE_EQ(GainOfWaitingWork(f, d, "cloud", 1, 8, 10, 16, 2400, 120, 3.0).Net(), 0);
  EXPECT_DOUBLE_EQ(GainOfWaitingWork(ElasticFactsOf({}, d, "cloud", nullptr), d, "cloud", 1, 1, 10,
                                     14, 2400, 120, 3.0)
                       .Net(),
                   0);
}

// Where sbatch --test-only would put the job says how it meets the nodes.
TEST(ElasticTest, TheNodesSlurmNamesSayWhetherTheJobBootsOrShares) {
  EXPECT_EQ(NodeStartOn(Delta("idle+CLOUD+POWERED_DOWN"), "delta-n1"), NodeStart::kBoots);
  EXPECT_EQ(NodeStartOn(Delta("idle+CLOUD+POWERING_DOWN"), "delta-n1"), NodeStart::kBoots);
  EXPECT_EQ(NodeStartOn(Delta("idle+CLOUD"), "delta-n[1-2]"), NodeStart::kIdleUp);
  EXPECT_EQ(NodeStartOn(Delta("mixed+CLOUD"), "delta-n1"), NodeStart::kShares);
  EXPECT_EQ(NodeStartOn(Delta("mixed+CLOUD+POWERING_UP"), "delta-n3"), NodeStart::kSharesBooting);
  // Booting but holding nothing yet: a boot for this job.
  EXPECT_EQ(NodeStartOn(Delta("idle+CLOUD+POWERING_UP"), "delta-n3"), NodeStart::kBoots);
  // One of two nodes powered down: it boots for the job.
  cluster::Description d = Delta("mixed+CLOUD");
  d.nodes[1].state = "idle+CLOUD+POWERED_DOWN";
  d.BuildIndex();
  EXPECT_EQ(NodeStartOn(d, "delta-n[1-2]"), NodeStart::kBoots);
  EXPECT_EQ(NodeStartOn(d, "delta-n1"), NodeStart::kShares);
  // Unknown or unreadable: assume a boot.
  EXPECT_EQ(NodeStartOn(d, "delta-n9"), NodeStart::kBoots);
  EXPECT_EQ(NodeStartOn(d, ""), NodeStart::kBoots);
  EXPECT_EQ(NodeStartOn(d, "delta-n[1-"), NodeStart::kBoots);
}

// A job beside others adds to the bill only the node time it holds the
// node past them.
TEST(ElasticTest, BesideJobsANodeIsKeptUpUntilTheirEndAndTheJobAddsOnlyThePast) {
  auto job = [](std::string state, std::string nodes, std::time_t end) {
    cluster::QueuedJob j;
    j.state = std::move(state);
    j.phase = backend::SlurmPhaseOf(j.state);
    j.nodelist = std::move(nodes);
    j.end_time = end;
    return j;
  };
  const std::vector<cluster::QueuedJob> jobs = {
      job("RUNNING", "delta-n1", 1000),
      job("RUNNING", "delta-n[1-2]", 1600),
      job("CONFIGURING", "delta-n3", 900),
      job("COMPLETING", "delta-n4", 5000),
      job("PENDING", "", 9000),
      job("RUNNING", "delta-n[", 9000),
  };
  EXPECT_EQ(NodesKeptUpUntil(jobs, "delta-n1"), std::vector<std::time_t>{1600});
  EXPECT_EQ(NodesKeptUpUntil(jobs, "delta-n[2-4]"), (std::vector<std::time_t>{1600, 900, 0}));
  EXPECT_TRUE(NodesKeptUpUntil(jobs, "delta-n[").empty());

  config::ClusterSettings s;
  s.cost_default = 4.0;
  s.suspend_time = 60;
  const cluster::Description d = Delta("mixed+CLOUD");
  const ElasticFacts f = ElasticFactsOf(s, d, "cloud", nullptr);
  // Ends before them: nothing added.
  EXPECT_DOUBLE_EQ(*AddedNodeCost(f, d, "cloud", {1600}, 1500), 0.0);
  // 3 min past one node's jobs, 1 min past the other's: 4 node-min of 8 H100s at $4.
  EXPECT_DOUBLE_EQ(*AddedNodeCost(f, d, "cloud", {1420, 1540}, 1600), 4.0 / 60 * 8 * 4);
  // A node whose end is not known, no nodes, or no price: not known.
  EXPECT_FALSE(AddedNodeCost(f, d, "cloud", {1600, 0}, 1500).has_value());
  EXPECT_FALSE(AddedNodeCost(f, d, "cloud", {}, 1500).has_value());
  EXPECT_FALSE(
      AddedNodeCost(ElasticFactsOf({}, d, "cloud", nullptr), d, "cloud", {1600}, 1500).has_value());
}

}  // namespace
}  // namespace skyslurm::place
