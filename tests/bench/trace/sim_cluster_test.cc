#include "bench/trace/sim_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::trace {
namespace {

using Kind = SimCluster::Event::Kind;

SimJob Job(std::string id, int nodes, int gpus, double limit, double runtime) {
  return {std::move(id), nodes, gpus, limit, runtime};
}

std::string Said(const std::vector<SimCluster::Event>& events) {
  std::string out;
  for (const auto& e : events) {
    out += (e.kind == Kind::kStart ? "start " : "end ") + e.id + "@" +
           std::to_string(static_cast<int>(e.t)) + " ";
  }
  return out;
}

TEST(SimClusterTest, JobsStartInOrderAndEndByTheirRuntimeNotTheirLimit) {
  SimCluster c("alpha", 2, 8);
  std::vector<SimCluster::Event> events;
  ASSERT_TRUE(c.Submit(Job("a", 1, 8, 100, 50), 0, &events));
  ASSERT_TRUE(c.Submit(Job("b", 2, 8, 100, 100), 0, &events));
  EXPECT_EQ(Said(events), "start a@0 ");
  EXPECT_EQ(c.PlannedStart("b"), 100);  // behind a's limit: all the scheduler knows
  EXPECT_EQ(c.busy_gpus(), 8);
  events.clear();
  c.AdvanceTo(200, &events);
  EXPECT_EQ(Said(events), "end a@50 start b@50 end b@150 ");
  EXPECT_EQ(c.busy_gpus(), 0);
}

TEST(SimClusterTest, ALaterJobBackfillsOnlyWhereItDelaysNoReservation) {
  SimCluster c("alpha", 2, 8);
  std::vector<SimCluster::Event> events;
  c.Submit(Job("running", 1, 8, 100, 100), 0, &events);
  c.Submit(Job("wide", 2, 8, 100, 100), 0, &events);  // reserved at 100
  c.Submit(Job("short", 1, 8, 50, 50), 0, &events);   // ends before 100: backfills
  c.Submit(Job("long", 1, 8, 150, 150), 0, &events);  // would delay "wide": waits
  c.Submit(Job("half", 1, 4, 50, 50), 0, &events);    // no room now; 50 s after "short"
  EXPECT_EQ(Said(events), "start running@0 start short@0 ");
  EXPECT_EQ(c.PlannedStart("wide"), 100);
  EXPECT_EQ(c.PlannedStart("long"), 200);
  EXPECT_EQ(c.PlannedStart("half"), 50);  // after "short", before "wide" takes the node
  // The estimate a new job gets is the start the plan leaves it.
  EXPECT_EQ(c.EstimateStart(Job("new", 1, 8, 100, 1), 0), 200);
  EXPECT_EQ(c.EstimateStart(Job("new", 1, 4, 50, 1), 0), 50);
}

TEST(SimClusterTest, ACancelledPendingJobLetsTheOnesBehindItStartSooner) {
  SimCluster c("beta", 1, 4);
  std::vector<SimCluster::Event> events;
  c.Submit(Job("running", 1, 4, 100, 100), 0, &events);
  c.Submit(Job("first", 1, 4, 100, 100), 0, &events);
  c.Submit(Job("second", 1, 4, 100, 100), 0, &events);
  EXPECT_EQ(c.PlannedStart("second"), 200);
  EXPECT_TRUE(c.CancelPending("first", 10, &events));  // moved elsewhere
  EXPECT_EQ(c.PlannedStart("second"), 100);
  EXPECT_FALSE(c.CancelPending("running", 10, &events));
  EXPECT_FALSE(c.IsPending("first"));
  EXPECT_EQ(c.pending(), 1u);
}

TEST(SimClusterTest, AJobThatCanNeverFitIsRefused) {
  SimCluster c("beta", 2, 4);
  EXPECT_FALSE(c.Submit(Job("eight", 1, 8, 10, 10), 0, nullptr));
  EXPECT_FALSE(c.Submit(Job("three-nodes", 3, 1, 10, 10), 0, nullptr));
  EXPECT_FALSE(c.EstimateStart(Job("eight", 1, 8, 10, 10), 0).has_value());
  EXPECT_TRUE(c.Submit(Job("cpu", 1, 0, 10, 5), 0, nullptr));
  EXPECT_EQ(c.NextEnd(), 5);
  EXPECT_EQ(c.total_gpus(), 8);
}

TEST(SimClusterTest, AJobOverItsLimitEndsAtItsLimit) {
  SimCluster c("gamma", 1, 8);
  std::vector<SimCluster::Event> events;
  c.Submit(Job("overrun", 1, 8, 60, 600), 0, &events);
  c.AdvanceTo(1000, &events);
  EXPECT_EQ(Said(events), "start overrun@0 end overrun@60 ");
}

TEST(SimClusterTest, OnlyThePlanDepthIsPlannedAndMayBackfill) {
  for (const std::size_t depth : {std::size_t{1}, std::size_t{500}}) {
    SimCluster c("alpha", 1, 4, depth);
    std::vector<SimCluster::Event> events;
    c.Submit(Job("running", 1, 2, 100, 100), 0, &events);
    c.Submit(Job("whole", 1, 4, 100, 100), 0, &events);  // reserved at 100
    c.Submit(Job("short", 1, 2, 50, 50), 0, &events);    // fits before it
    EXPECT_EQ(c.PlannedStart("whole"), 100);
    if (depth == 1) {
      EXPECT_EQ(Said(events), "start running@0 ");
      EXPECT_EQ(c.PlannedStart("short"), kNever);
    } else {
      EXPECT_EQ(Said(events), "start running@0 start short@0 ");
    }
  }
}

TEST(SimClusterTest, AWideJobWaitsForEnoughNodesAtOnce) {
  SimCluster c("beta", 3, 4);
  std::vector<SimCluster::Event> events;
  c.Submit(Job("a", 1, 4, 100, 100), 0, &events);
  c.Submit(Job("b", 1, 4, 300, 300), 0, &events);
  c.Submit(Job("c", 1, 2, 200, 200), 0, &events);
  // Two whole nodes: a's at 100 and c's at 200 (b's only at 300).
  EXPECT_EQ(c.EstimateStart(Job("wide", 2, 4, 50, 50), 0), 200);
  // Two nodes with 2 free: c's half is free now, a's node at 100.
  EXPECT_EQ(c.EstimateStart(Job("pair", 2, 2, 50, 50), 0), 100);
  // The same at a later instant with nothing ended between: the plan holds.
  EXPECT_EQ(c.EstimateStart(Job("pair", 2, 2, 50, 50), 60), 100);
}

}  // namespace
}  // namespace skyslurm::trace
