#include "broker/backend/slurm/slurm_accounting.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::backend {
namespace {

using ::testing::ElementsAre;

// As delta's sacct printed it (TZ=UTC): a job that booted a node, one
// running, one that never got a node, a two-node job.
TEST(SlurmAccountingTest, ReadsEveryJobThatHeldNodes) {
  auto uses = ParseSacctNodeUses(
      "15|skyuser1|delta-n3|2026-12-03T05:04:04|2026-12-03T05:04:04\n"
      "43|skyuser2|delta-n3|2026-12-03T07:37:48|Unknown\n"
      "44|skyuser1|None assigned|Unknown|Unknown\n"
      "45|skyuser1|delta-n[1-2]|2026-12-03T07:40:00|2026-12-03T07:50:00\n");
  ASSERT_TRUE(uses.ok()) << uses.status().message();
  ASSERT_EQ(uses->size(), 3u);
  EXPECT_EQ((*uses)[0].job_id, "15");
  EXPECT_EQ((*uses)[0].user, "skyuser1");
  EXPECT_EQ((*uses)[0].start, 1796274244);
  EXPECT_EQ((*uses)[1].end, 0);  // still running
  EXPECT_EQ((*uses)[1].user, "skyuser2");
  EXPECT_THAT((*uses)[2].nodes, ElementsAre("delta-n1", "delta-n2"));
  EXPECT_EQ((*uses)[2].end - (*uses)[2].start, 600);
}

TEST(SlurmAccountingTest, ALineOfAnotherShapeIsAnErrorNamingIt) {
  EXPECT_EQ(ParseSacctNodeUses("15|skyuser1|delta-n3\n").status().message(),
            "sacct line 1: expected JobIDRaw|User|NodeList|Start|End, got '15|skyuser1|delta-n3'");
  EXPECT_FALSE(ParseSacctNodeUses("1|u|n[3-|2026-12-03T05:04:04|Unknown\n").ok());
}

TEST(SlurmAccountingTest, AsksForEveryUsersAllocationsFromADayBefore) {
  EXPECT_THAT(SacctNodeUseArgs(1796256000),
              ElementsAre("-X", "-a", "-n", "-P", "-S", "2026-12-02T00:00:00", "-E", "now", "-o",
                          "JobIDRaw,User,NodeList,Start,End"));
}

}  // namespace
}  // namespace skyslurm::backend
