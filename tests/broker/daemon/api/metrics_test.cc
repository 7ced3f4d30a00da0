// /metrics' text: every family with its HELP and TYPE, counts from the
// store's tallies, clusters' reachability and probe time.
#include "broker/daemon/api/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTest, CountsAndFamilies) {
  LatencyHistogram submissions, store;
  submissions.Observe(std::chrono::milliseconds(80));
  store.Observe(std::chrono::microseconds(300));
  MetricsInput in;
  in.jobs = {{{"RUNNING", "alpha"}, 3}, {{"SUBMITTING", ""}, 1}};
  in.events = {{"submitted", 7}, {"moved", 2}, {"re-placed", 1}, {"state", 40}};
  in.clusters = {{"alpha", true, 0.12}, {"beta", false, -1}};
  in.takeovers = 5;
  in.submissions_refused = 1;
  in.submissions = &submissions;
  in.store = &store;
  const std::string text = RenderMetrics(in);
  EXPECT_THAT(text, HasSubstr("skyslurm_jobs{state=\"RUNNING\",cluster=\"alpha\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_jobs{state=\"SUBMITTING\",cluster=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_placements_total{reason=\"submitted\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_placements_total{reason=\"cluster_lost\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_placements_total{reason=\"restarted\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_moves_total 2\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_failovers_total 1\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_cluster_up{cluster=\"alpha\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_cluster_up{cluster=\"beta\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_cluster_probe_seconds{cluster=\"alpha\"} 0.12\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("probe_seconds{cluster=\"beta\"}")));
  EXPECT_THAT(text, HasSubstr("skyslurm_lease_takeovers_total 5\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_submissions_refused_total 1\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_submission_seconds_count 1\n"));
  EXPECT_THAT(text, HasSubstr("skyslurm_store_statement_seconds_bucket{le=\"0.001\"} 1\n"));
  // Every family announced once, before its samples.
  for (const char* family : {"skyslurm_jobs", "skyslurm_placements_total", "skyslurm_cluster_up",
                             "skyslurm_submission_seconds", "skyslurm_store_statement_seconds"}) {
    const std::string type = std::string("# TYPE ") + family + " ";
    EXPECT_EQ(text.find(type), text.rfind(type)) << family;
    EXPECT_LT(text.find(type), text.find(std::string("\n") + family)) << family;
  }
}

}  // namespace
}  // namespace skyslurm::daemon
