#include "broker/config/run_dir.h"

#include <gtest/gtest.h>

namespace skyslurm::config {
namespace {

TEST(RunDirTest, TheSocketPathAllThreeClientsAgreeOn) {
  EXPECT_EQ(StateDir(std::nullopt, "/home/a"), "/home/a/.local/state/skyslurm");
  EXPECT_EQ(StateDir("/x/state", "/home/a"), "/x/state/skyslurm");
  EXPECT_EQ(RunDir("/nonexistent-runtime", "/s"), "/s/run");  // must exist to be used
  EXPECT_EQ(RunDir("/tmp", "/s"), "/tmp/skyslurm");
  EXPECT_EQ(SocketIn("/s/run"), "/s/run/skyslurmd.sock");
}

}  // namespace
}  // namespace skyslurm::config
