#include "bench/trace/testbed_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace skyslurm::trace {
namespace {

// squeue's local time as the replay reads it.
double Epoch(const char* text) {
  std::tm tm{};
  ::strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm));
}

// A replay run minutes before left its ended jobs in squeue (MinJobAge),
// under the same names: they were read as this run's copies, a job of the
// last run counted as started at once (wait 0) and as a move. Only what was
// submitted since the replay began is its own.
TEST(TestbedReplayTest, AQueueReadKeepsOnlyThisRunsJobsByTheirSubmission) {
  const std::string out =
      "1133|trace-replay-skyslurm-1|COMPLETED|2026-12-06T17:07:21|2026-12-06T17:08:04|"
      "2026-12-06T17:07:20\n"
      "1381|trace-replay-skyslurm-1|RUNNING|2026-12-06T17:08:49|2026-12-06T17:09:16|"
      "2026-12-06T17:08:49\n"
      "1382|trace-replay-skyslurm-2|PENDING|N/A|N/A|2026-12-06T17:08:48\n"
      "1383|trace-replay-skyslurm-x|PENDING|N/A|N/A|2026-12-06T17:08:50\n"
      "1384|other-job-3|PENDING|N/A|N/A|2026-12-06T17:08:50\n"
      "1385|trace-replay-skyslurm-4|PENDING|N/A\n";
  const auto copies =
      ParseReplayQueue(out, "alpha", "trace-replay-skyslurm-", Epoch("2026-12-06T17:08:49"));
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_EQ(copies.at(1).size(), 1u);
  const QueuedCopy& running = copies.at(1).front();
  EXPECT_EQ(running.cluster, "alpha");
  EXPECT_EQ(running.id, "1381");
  EXPECT_EQ(running.state, "RUNNING");
  EXPECT_EQ(running.start, Epoch("2026-12-06T17:08:49"));
  EXPECT_EQ(running.end, Epoch("2026-12-06T17:09:16"));
  // A second early: squeue's whole seconds against the replay's clock.
  ASSERT_EQ(copies.at(2).size(), 1u);
  EXPECT_FALSE(copies.at(2).front().start.has_value());
}

}  // namespace
}  // namespace skyslurm::trace
