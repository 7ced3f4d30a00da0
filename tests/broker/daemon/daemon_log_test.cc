#include "broker/daemon/daemon_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace skyslurm::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(DaemonLogTest, AnUnknownLevelIsRefused) {
  Status st = SetUpLog({.level = "chatty"});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("--log-level chatty: expected trace, debug, info"));
}

TEST(DaemonLogTest, LinesCarryTheLevelAndMillisecondsAndTheFileIsRotatedBySize) {
  const std::string dir = ::testing::TempDir() + "/daemon_log_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/skyslurmd.log";
  ASSERT_TRUE(SetUpLog({.level = "info", .file = file, .max_bytes = 4096, .max_files = 2}).ok());
  LogDebug("not at info");
  LogInfo("first decision");
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  EXPECT_THAT(first, MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3} "
                                  "skyslurmd\\[[0-9]+\\] info: first decision"));
  for (int i = 0; i < 200; ++i) LogWarning(std::string(100, 'x'));
  EXPECT_TRUE(std::filesystem::exists(dir + "/skyslurmd.1.log"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/skyslurmd.2.log"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/skyslurmd.3.log"));
  EXPECT_LE(std::filesystem::file_size(file), 4096u);
  ASSERT_TRUE(SetUpLog({}).ok());  // back to stderr
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace skyslurm::daemon
