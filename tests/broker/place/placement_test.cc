#include "broker/place/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::place {
namespace {

using ::testing::HasSubstr;
using Kind = Verdict::Kind;

constexpr std::time_t kNow = 1'800'000'000;

Candidate At(std::string cluster, std::string partition, std::time_t start, bool home = false,
             int preference = 0) {
  Candidate c;
  c.cluster = std::move(cluster);
  c.partition = std::move(partition);
  c.start = start;
  c.home = home;
  c.preference = preference;
  return c;
}

TEST(PlacementTest, EarliestStartWins) {
  auto d = Place({At("alpha", "gpu", kNow + 600, true), At("beta", "h100-cluster", kNow + 5)}, {},
                 kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(*d.chosen, 1u);
  EXPECT_EQ(d.verdicts[1].kind, Kind::kChosen);
  EXPECT_EQ(d.verdicts[0].kind, Kind::kLater);
  EXPECT_EQ(d.verdicts[0].reason, "starts in 10 min, 10 min after beta");
  EXPECT_EQ(d.summary, "beta/h100-cluster: the earliest start (in 5 s)");
}

TEST(PlacementTest, WithinTheTieToleranceHomeWins) {
  auto d = Place({At("beta", "h100-cluster", kNow + 1), At("alpha", "gpu", kNow + 50, true)}, {},
                 kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "alpha");
  EXPECT_EQ(d.verdicts[0].kind, Kind::kTied);
  EXPECT_THAT(d.summary, HasSubstr("the home cluster wins the tie"));
  // Outside the tolerance the earlier one wins even against home.
  auto later = Place({At("beta", "h100-cluster", kNow + 1), At("alpha", "gpu", kNow + 62, true)},
                     {}, kNow);
  EXPECT_EQ(later.verdicts[*later.chosen].cluster, "beta");
  Policy wide;
  wide.tie_tolerance = std::chrono::seconds(300);
  auto tolerant = Place({At("beta", "h100-cluster", kNow + 1), At("alpha", "gpu", kNow + 62, true)},
                        wide, kNow);
  EXPECT_EQ(tolerant.verdicts[*tolerant.chosen].cluster, "alpha");
}

TEST(PlacementTest, PreferenceBeatsHomeInATie) {
  auto d = Place({At("alpha", "gpu", kNow + 10, true, 0), At("gamma", "batch", kNow + 20, false, 2)},
                 {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "gamma");
  EXPECT_THAT(d.summary, HasSubstr("preference 2 wins"));
}

// Issue 13: Kubernetes overflows; a Slurm peer wins a tie against it, and
// an earlier start on Kubernetes still wins outright.
TEST(PlacementTest, ASlurmClusterWinsATieOverKubernetes) {
  Candidate kappa = At("kappa", "default", kNow);
  kappa.overflow = true;
  auto d = Place({kappa, At("gamma", "batch", kNow + 30)}, {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "gamma");
  EXPECT_THAT(d.summary, HasSubstr("a Slurm cluster wins the tie over Kubernetes"));
  EXPECT_EQ(d.verdicts[0].kind, Kind::kTied);
  auto sooner = Place({kappa, At("gamma", "batch", kNow + 600)}, {}, kNow);
  EXPECT_EQ(sooner.verdicts[*sooner.chosen].cluster, "kappa");
  // Home still comes first, as before.
  auto home = Place({At("gamma", "batch", kNow + 5), kappa, At("alpha", "gpu", kNow + 20, true)}, {},
                    kNow);
  EXPECT_EQ(home.verdicts[*home.chosen].cluster, "alpha");
}

TEST(PlacementTest, EveryCandidateGetsAVerdictWithItsReason) {
  Candidate excluded = At("delta", "", kNow);
  excluded.excluded = "not in --sky-any-cluster=beta";
  Candidate unreachable;
  unreachable.cluster = "beta";
  unreachable.unreachable = "slurm_load_partitions: Unable to contact slurm controller";
  Candidate infeasible;
  infeasible.cluster = "gamma";
  infeasible.infeasible = {"gamma has no H100 GPUs", "module x: none"};
  Candidate unknown;
  unknown.cluster = "epsilon";
  unknown.no_estimate = "sbatch --test-only refused the job: ...";
  auto d = Place({excluded, unreachable, infeasible, unknown, At("alpha", "gpu", kNow + 30, true)},
                 {}, kNow);
  ASSERT_EQ(d.verdicts.size(), 5u);
  EXPECT_EQ(d.verdicts[0].kind, Kind::kExcluded);
  EXPECT_EQ(d.verdicts[1].kind, Kind::kUnreachable);
  EXPECT_EQ(d.verdicts[1].reason, "slurm_load_partitions: Unable to contact slurm controller");
  EXPECT_EQ(d.verdicts[2].kind, Kind::kInfeasible);
  EXPECT_EQ(d.verdicts[2].reason, "gamma has no H100 GPUs; module x: none");
  EXPECT_EQ(d.verdicts[3].kind, Kind::kNoEstimate);
  EXPECT_EQ(d.verdicts[4].kind, Kind::kChosen);
}

TEST(PlacementTest, NothingRunnable) {
  Candidate c;
  c.cluster = "gamma";
  c.infeasible = {"no"};
  auto d = Place({c}, {}, kNow);
  EXPECT_FALSE(d.chosen);
  EXPECT_EQ(d.summary, "no cluster can run the job");
  EXPECT_FALSE(Place({}, {}, kNow).chosen);
}

TEST(PlacementTest, TheClustersFirstChoiceOfPartitionWinsItsTie) {
  Candidate first = At("beta", "h100-cluster", kNow + 2);
  Candidate second = At("beta", "debug", kNow + 1);
  second.partition_rank = 1;
  auto d = Place({first, second}, {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].partition, "h100-cluster");
  EXPECT_THAT(d.summary, HasSubstr("beta's first choice of partition wins"));
}

TEST(PlacementTest, DeterministicAmongEquals) {
  auto d = Place({At("gamma", "b", kNow), At("beta", "a", kNow)}, {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "beta");
}

TEST(PlacementTest, FormatWait) {
  EXPECT_EQ(FormatWait(kNow - 5, kNow), "now");
  EXPECT_EQ(FormatWait(kNow + 45, kNow), "in 45 s");
  EXPECT_EQ(FormatWait(kNow + 720, kNow), "in 12 min");
  EXPECT_EQ(FormatWait(kNow + 3 * 3600 + 300, kNow), "in 3 h 5 min");
  EXPECT_EQ(FormatWait(kNow + 3 * 86400, kNow), "in 3 d 0 h");
}

// Elastic clusters (issue 15): nodes booted on demand and billed.
Candidate Cloud(std::string partition, std::time_t start, double cost, bool spot = false) {
  Candidate c = At("delta", std::move(partition), start);
  c.elastic = true;
  c.cost = cost;
  c.spot = spot;
  return c;
}

TEST(PlacementTest, AnElasticClusterWaitsWhileAnotherStartsTheJobWithinOverflowAfter) {
  Policy policy;
  policy.overflow_after = std::chrono::minutes(15);
  // alpha frees up in 10 min: the job waits for alpha, and says why.
  auto d =
      Place({At("alpha", "gpu", kNow + 600, true), Cloud("cloud", kNow + 30, 12.4)}, policy, kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "alpha");
  EXPECT_EQ(d.verdicts[1].kind, Kind::kHeldBack);
  EXPECT_EQ(d.verdicts[1].reason,
            "an elastic cluster is used only when no other starts the job within "
            "overflow.after (15 min); alpha starts it in 10 min");
  EXPECT_EQ(KindName(Kind::kHeldBack), "held back");
  // With overflow.after 5 min it goes to the cloud, which boots sooner.
  policy.overflow_after = std::chrono::minutes(5);
  auto burst =
      Place({At("alpha", "gpu", kNow + 600, true), Cloud("cloud", kNow + 30, 12.4)}, policy, kNow);
  EXPECT_EQ(burst.verdicts[*burst.chosen].cluster, "delta");
  EXPECT_EQ(burst.verdicts[*burst.chosen].cost, 12.4);
  EXPECT_EQ(burst.summary, "delta/cloud: the earliest start (in 30 s)");
  // Nothing else can run it: the cloud, whatever overflow.after says.
  auto alone = Place({Cloud("cloud", kNow + 30, 12.4)}, policy, kNow);
  EXPECT_EQ(alone.verdicts[*alone.chosen].cluster, "delta");
}

// overflow.worth: a whole node booted for a short 1-GPU job is not worth
// the wait it saves; the same job beside others on a node already up is.
TEST(PlacementTest, AnElasticClusterOnlyWhenTheWaitItSavesIsWorthItsCost) {
  Policy policy;
  policy.overflow_after = std::chrono::minutes(5);
  policy.wait_worth = 4.0;  // an hour of waiting, per GPU
  // alpha in 30 min; a fresh node would bill 8 H100s: $16.
  Candidate boots = Cloud("cloud", kNow + 60, 16.0);
  boots.gpus = 1;
  auto d = Place({At("alpha", "gpu", kNow + 1800, true), boots}, policy, kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "alpha");
  EXPECT_EQ(d.verdicts[1].kind, Kind::kHeldBack);
  EXPECT_EQ(d.verdicts[1].reason,
            "the wait it saves (29 min sooner than alpha) is worth $1.93 at overflow.worth ($4.00 "
            "a GPU-hour of waiting), less than its cost $16.00");
  // Beside jobs on a node already up: its GPU's share, $2, worth it.
  Candidate shares = Cloud("cloud", kNow + 60, 1.90);
  shares.gpus = 1;
  auto joins = Place({At("alpha", "gpu", kNow + 1800, true), shares}, policy, kNow);
  EXPECT_EQ(joins.verdicts[*joins.chosen].cluster, "delta");
  // Eight GPUs' wait is worth eight times as much: for an hour's wait the
  // fresh node goes.
  boots.gpus = 8;
  auto big = Place({At("alpha", "gpu", kNow + 3600, true), boots}, policy, kNow);
  EXPECT_EQ(big.verdicts[*big.chosen].cluster, "delta");
  // Nothing else can run it: no wait to weigh, the cloud it is.
  boots.gpus = 1;
  auto alone = Place({boots}, policy, kNow);
  EXPECT_EQ(alone.verdicts[*alone.chosen].cluster, "delta");
  // Without overflow.worth nothing is weighed.
  policy.wait_worth.reset();
  auto unweighed = Place({At("alpha", "gpu", kNow + 1800, true), boots}, policy, kNow);
  EXPECT_EQ(unweighed.verdicts[*unweighed.chosen].cluster, "delta");
}

// Beside jobs that keep a node up anyway, the job's share is what it is
// billed, not what it adds to the bill: overflow.worth weighs what it adds.
TEST(PlacementTest, BesideJobsOnANodeUpAnywayTheWorthWeighsWhatTheJobAddsToTheBill) {
  Policy policy;
  policy.overflow_after = std::chrono::minutes(1);
  policy.wait_worth = 2.0;
  // 1 on-demand H100 for its 10 min: $0.67 billed; the wait it saves
  // (5 min) is worth $0.17.
  Candidate shares = Cloud("cloud", kNow, 0.67);
  shares.gpus = 1;
  auto share = Place({At("alpha", "gpu", kNow + 300, true), shares}, policy, kNow);
  EXPECT_EQ(share.verdicts[*share.chosen].cluster, "alpha");
  // The jobs there keep the node up past its time limit: it adds nothing.
  shares.added_cost = 0.0;
  auto fills = Place({At("alpha", "gpu", kNow + 300, true), shares}, policy, kNow);
  EXPECT_EQ(fills.verdicts[*fills.chosen].cluster, "delta");
  EXPECT_EQ(fills.verdicts[1].cost, 0.67);  // what explain shows and a budget counts
  // A little past them: the node's time it adds, 8 H100s for 56 s, $0.50.
  shares.added_cost = 0.50;
  auto extends = Place({At("alpha", "gpu", kNow + 300, true), shares}, policy, kNow);
  EXPECT_EQ(extends.verdicts[*extends.chosen].cluster, "alpha");
  EXPECT_EQ(extends.verdicts[1].reason,
            "the wait it saves (5 min sooner than alpha) is worth $0.17 at overflow.worth ($2.00 "
            "a GPU-hour of waiting), less than what it adds to the bill $0.50");
  // Among elastic partitions too: a spot node booted for it ($0.25 share)
  // against an on-demand one that adds nothing.
  shares.added_cost = 0.0;
  Candidate spot = Cloud("spot", kNow + 6, 0.25, true);
  spot.gpus = 1;
  auto among = Place({shares, spot}, policy, kNow);
  EXPECT_EQ(among.verdicts[*among.chosen].partition, "cloud");
  EXPECT_THAT(among.summary, HasSubstr("the cheaper wins (it adds $0.00 to the bill)"));
  // Without overflow.worth, the same in a tie of estimates.
  policy.wait_worth.reset();
  auto tie = Place({shares, spot}, policy, kNow);
  EXPECT_EQ(tie.verdicts[*tie.chosen].partition, "cloud");
}

// A move's weighing: where the job pends, it holds back the jobs queued
// behind it; a move to the cloud spares them that wait too, and
// overflow.worth counts it.
TEST(PlacementTest, AMoveAlsoSparesTheJobsQueuedBehindItTheirWait) {
  Policy policy;
  policy.overflow_after = std::chrono::minutes(1);
  policy.wait_worth = 2.0;
  // Its own place on alpha in 5 min; a spot node booted for it, $0.50: the
  // 5 min it saves are worth $0.17.
  Candidate here = At("alpha", "gpu", kNow + 300, true);
  Candidate spot = Cloud("spot", kNow + 6, 0.50, true);
  spot.gpus = 1;
  auto alone = Place({here, spot}, policy, kNow);
  EXPECT_EQ(alone.verdicts[*alone.chosen].cluster, "alpha");
  // 6 GPUs' jobs behind it, each starting 2 min later for its run: 12 GPU-min
  // more of waiting, $0.40; with its own, worth its cost.
  here.gpus_queued_behind = 6;
  here.holds_those_behind_s = 120;
  auto spares = Place({here, spot}, policy, kNow);
  EXPECT_EQ(spares.verdicts[*spares.chosen].cluster, "delta");
  // 3 GPUs' jobs behind: $0.36 in all, still less.
  here.gpus_queued_behind = 3;
  auto fewer = Place({here, spot}, policy, kNow);
  EXPECT_EQ(fewer.verdicts[*fewer.chosen].cluster, "alpha");
  EXPECT_EQ(fewer.verdicts[1].reason,
            "the wait it saves (5 min sooner than alpha, and 2 min sooner for the jobs queued "
            "behind it there wanting 3 GPU(s)) is worth $0.36 at overflow.worth ($2.00 a GPU-hour "
            "of waiting), less than its cost $0.50");
}

// overflow.worth also chooses among elastic partitions: an on-demand node
// up now is not bought for a spot node's boot of a few seconds.
TEST(PlacementTest, AnElasticPartitionSoonerButDearerIsHeldBackForTheOneWorthMore) {
  Policy policy;
  policy.wait_worth = 2.0;
  Candidate on_demand = Cloud("cloud", kNow, 0.67);  // 1 H100 for 10 min at $4
  Candidate spot = Cloud("spot", kNow + 6, 0.25, true);
  on_demand.gpus = spot.gpus = 1;
  auto d = Place({At("alpha", "gpu", kNow + 1800, true), on_demand, spot}, policy, kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(d.verdicts[*d.chosen].partition, "spot");
  EXPECT_EQ(d.verdicts[1].kind, Kind::kHeldBack);
  EXPECT_EQ(d.verdicts[1].reason,
            "starts it 6 s sooner than delta/spot for $0.42 more: that is worth $0.00 at "
            "overflow.worth ($2.00 a GPU-hour of waiting)");
  // Without a fixed cluster in the running, the same.
  auto only_elastic = Place({on_demand, spot}, policy, kNow);
  EXPECT_EQ(only_elastic.verdicts[*only_elastic.chosen].partition, "spot");
  // An hour sooner for eight GPUs is worth $16: the dearer one goes.
  on_demand.gpus = spot.gpus = 8;
  on_demand.cost = 5.33;
  spot.start = kNow + 3600;
  spot.cost = 2.0;
  auto hour = Place({At("alpha", "gpu", kNow + 7200, true), on_demand, spot}, policy, kNow);
  EXPECT_EQ(hour.verdicts[*hour.chosen].partition, "cloud");
  EXPECT_EQ(hour.verdicts[2].kind, Kind::kLater);
  // Two minutes sooner for one GPU is worth $0.07: spot, by worth; without
  // overflow.worth the earliest start wins (past the tie tolerance), as before.
  on_demand.gpus = spot.gpus = 1;
  on_demand.cost = 0.67;
  spot.start = kNow + 120;
  spot.cost = 0.25;
  auto weighed = Place({on_demand, spot}, policy, kNow);
  EXPECT_EQ(weighed.verdicts[*weighed.chosen].partition, "spot");
  policy.wait_worth.reset();
  auto unweighed = Place({on_demand, spot}, policy, kNow);
  EXPECT_EQ(unweighed.verdicts[*unweighed.chosen].partition, "cloud");
}

TEST(PlacementTest, InATieACostlessClusterThenTheCheaperWins) {
  auto free_first =
      Place({Cloud("cloud", kNow + 20, 12.4), At("gamma", "batch", kNow + 40)}, {}, kNow);
  EXPECT_EQ(free_first.verdicts[*free_first.chosen].cluster, "gamma");
  EXPECT_THAT(free_first.summary, HasSubstr("a cluster that costs nothing to start wins the tie"));
  // Kubernetes costs nothing either: it wins the tie over the cloud.
  Candidate kappa = At("kappa", "", kNow + 50);
  kappa.overflow = true;
  auto kube = Place({Cloud("cloud", kNow + 20, 12.4), kappa}, {}, kNow);
  EXPECT_EQ(kube.verdicts[*kube.chosen].cluster, "kappa");
  EXPECT_THAT(kube.summary, HasSubstr("a cluster that costs nothing to start wins the tie"));
  auto cheaper =
      Place({Cloud("cloud", kNow + 20, 12.4), Cloud("spot", kNow + 40, 3.1, true)}, {}, kNow);
  EXPECT_EQ(cheaper.verdicts[*cheaper.chosen].partition, "spot");
  EXPECT_THAT(cheaper.summary, HasSubstr("the cheaper wins ($3.10)"));
}

TEST(PlacementTest, ABudgetTooSmallRefusesTheElasticClusterWithTheFigures) {
  Policy policy;
  policy.budgets = {{"your daily budget", 50, 45.5}};
  auto d = Place({Cloud("cloud", kNow + 30, 12.4)}, policy, kNow);
  EXPECT_FALSE(d.chosen);
  EXPECT_EQ(d.verdicts[0].kind, Kind::kOverBudget);
  EXPECT_EQ(d.verdicts[0].reason,
            "would cost $12.40 for its time limit: over your daily budget ($50.00, $45.50 spent)");
  EXPECT_EQ(d.summary,
            "no cluster can run the job within its budget: delta/cloud would cost $12.40 for its "
            "time limit: over your daily budget ($50.00, $45.50 spent)");
  // A cluster that costs nothing still takes it; a cheaper partition fits.
  auto fits =
      Place({Cloud("cloud", kNow + 30, 12.4), Cloud("spot", kNow + 30, 4.0, true)}, policy, kNow);
  EXPECT_EQ(fits.verdicts[*fits.chosen].partition, "spot");
  auto home =
      Place({Cloud("cloud", kNow + 30, 12.4), At("alpha", "gpu", kNow + 7200, true)}, policy, kNow);
  EXPECT_EQ(home.verdicts[*home.chosen].cluster, "alpha");
  // Every budget holds: the site's too.
  policy.budgets.push_back({"the site's monthly budget", 1000, 998});
  auto site = Place({Cloud("spot", kNow + 30, 4.0, true)}, policy, kNow);
  EXPECT_FALSE(site.chosen);
  EXPECT_THAT(site.verdicts[0].reason, HasSubstr("over the site's monthly budget ($1000.00"));
}

TEST(PlacementTest, SpotIsAllowedAvoidedOrRequired) {
  const std::vector<Candidate> both = {Cloud("cloud", kNow + 30, 12.4),
                                       Cloud("spot", kNow + 30, 3.1, true)};
  Policy policy;
  EXPECT_EQ(Place(both, policy, kNow).verdicts[1].kind, Kind::kChosen);  // allow: cheaper
  policy.spot = SpotUse::kAvoid;
  auto avoid = Place(both, policy, kNow);
  EXPECT_EQ(avoid.verdicts[*avoid.chosen].partition, "cloud");
  EXPECT_EQ(avoid.verdicts[1].kind, Kind::kHeldBack);
  EXPECT_THAT(avoid.verdicts[1].reason, HasSubstr("spot: avoid"));
  // Avoided, not refused: when only spot can run it, spot it is.
  auto only_spot = Place({both[1]}, policy, kNow);
  EXPECT_EQ(only_spot.verdicts[*only_spot.chosen].partition, "spot");
  policy.spot = SpotUse::kRequire;
  auto require = Place(both, policy, kNow);
  EXPECT_EQ(require.verdicts[*require.chosen].partition, "spot");
  EXPECT_EQ(require.verdicts[0].kind, Kind::kExcluded);
  EXPECT_THAT(require.verdicts[0].reason, HasSubstr("spot: require"));
  // An on-premises cluster is never held to the spot policy.
  auto home = Place({At("alpha", "gpu", kNow + 10, true), both[0]}, policy, kNow);
  EXPECT_EQ(home.verdicts[*home.chosen].cluster, "alpha");
}

TEST(PlacementTest, FormatCostIsToTheCent) {
  EXPECT_EQ(FormatCost(12.4, "$"), "$12.40");
  EXPECT_EQ(FormatCost(0.349, "€"), "€0.35");
}

}  // namespace
}  // namespace skyslurm::place
