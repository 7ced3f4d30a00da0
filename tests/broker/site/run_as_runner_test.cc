// The site daemon's commands as the user it acts for: rewritten through
// skyslurmd-runas, Slurm's commands only, and nothing that changes a job
// without a user.
#include "broker/site/run_as_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "broker/util/acting_user.h"

namespace skyslurm::site {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records what it is asked to run.
class Recorder final : public CommandRunner {
 public:
  Result<CommandOutput> Run(const Command& command) override {
    std::lock_guard lock(mu);
    ran.push_back(command);
    CommandOutput out;
    out.exit_code = 0;
    return out;
  }
  std::mutex mu;
  std::vector<Command> ran;
};

TEST(RunAsRunnerTest, ACommandRunsAsTheActingUserThroughTheHelper) {
  Recorder inner;
  RunAsRunner runner("/usr/libexec/skyslurm/skyslurmd-runas", inner);
  ActingFor as("alice");
  Command sbatch{.argv = {"/usr/bin/sbatch", "--parsable", "job.sh"}, .cwd = "/home/alice/run"};
  sbatch.env_set = {{"SLURM_CONF", "/etc/slurm/slurm.conf"}};
  ASSERT_TRUE(runner.Run(sbatch).ok());
  ASSERT_EQ(inner.ran.size(), 1u);
  EXPECT_THAT(inner.ran[0].argv,
              ElementsAre("/usr/libexec/skyslurm/skyslurmd-runas", "--user", "alice", "--cwd",
                          "/home/alice/run", "--", "sbatch", "--parsable", "job.sh"));
  // The folder is entered by the helper as the user, never by the daemon.
  EXPECT_EQ(inner.ran[0].cwd, "");
  EXPECT_EQ(inner.ran[0].env_set, sbatch.env_set);
}

TEST(RunAsRunnerTest, OnlySlurmsCommandsRunAsAUser) {
  Recorder inner;
  RunAsRunner runner("/runas", inner);
  ActingFor as("alice");
  for (const char* program : {"sh", "cat", "/bin/bash", "rsync", "ssh"}) {
    auto r = runner.Run({.argv = {program, "-c", "cat ~/.ssh/id_ed25519"}});
    EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << program;
    EXPECT_THAT(r.status().message(), HasSubstr("only Slurm's client commands"));
  }
  EXPECT_TRUE(inner.ran.empty());
}

TEST(RunAsRunnerTest, WithoutAUserItReadsButNeverChangesAJob) {
  Recorder inner;
  RunAsRunner runner("/runas", inner);
  EXPECT_TRUE(runner.Run({.argv = {"squeue", "-h"}}).ok());
  EXPECT_TRUE(runner.Run({.argv = {"scontrol", "-o", "show", "job", "7"}}).ok());
  EXPECT_TRUE(runner.Run({.argv = {"sinfo"}}).ok());
  ASSERT_EQ(inner.ran.size(), 3u);
  EXPECT_EQ(inner.ran[0].argv[0], "squeue");  // as the daemon itself
  for (std::vector<std::string> argv :
       std::vector<std::vector<std::string>>{{"sbatch", "x.sh"},
                                             {"scancel", "7"},
                                             {"scontrol", "hold", "7"},
                                             {"scontrol", "-o", "update", "JobId=7"},
                                             {"srun", "hostname"}}) {
    auto r = runner.Run({.argv = argv});
    EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << argv[0];
  }
  EXPECT_EQ(inner.ran.size(), 3u);
}

TEST(RunAsRunnerTest, RunAllRunsEachAsTheCallersUser) {
  Recorder inner;
  RunAsRunner runner("/runas", inner);
  ActingFor as("bob");
  auto results =
      runner.RunAll({{.argv = {"squeue"}}, {.argv = {"sh"}}, {.argv = {"scancel", "9"}}});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].status().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(results[2].ok());
  ASSERT_EQ(inner.ran.size(), 2u);
  for (const Command& c : inner.ran) EXPECT_THAT(c.argv, ::testing::Contains("bob"));
}

}  // namespace
}  // namespace skyslurm::site
