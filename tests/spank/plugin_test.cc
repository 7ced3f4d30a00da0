// skyslurm.so loaded by the real Slurm commands of the testbed (listed as
// optional in every cluster's plugstack.conf by scripts/testbed/up).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;

const std::string kPlugin = std::string(SKYSLURM_BINARY_DIR) + "/spank/skyslurm.so";

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tb = LoadTestbed();
    ASSERT_TRUE(tb.ok()) << tb.status().message();
    tb_ = *tb;
    for (const char* cluster : kClusters) {
      ASSERT_THAT(ReadFile(tb_.Path(std::string("clusters/") + cluster + "/etc/plugstack.conf")),
                  HasSubstr("optional " + kPlugin))
          << "the testbed does not list this build's plugin; run scripts/testbed/up after "
             "building";
    }
  }
  Testbed tb_;
  TempDir tmp_;
};

TEST_F(PluginTest, RealCommandsListTheSkyOptions) {
  for (const char* command : {"sbatch", "salloc", "srun"}) {
    CommandOutput help = RunOn(tb_, "alpha", {command, "--help"});
    ASSERT_TRUE(help.success()) << help.err;
    const std::string plugins = help.out.substr(help.out.find("Options provided by plugins:"));
    EXPECT_THAT(plugins, HasSubstr("--sky-any-cluster=[clusters]")) << command;
    EXPECT_THAT(plugins, HasSubstr("--sky-infra=cluster")) << command;
    EXPECT_THAT(plugins, HasSubstr("--sky-explain")) << command;
    EXPECT_THAT(plugins, HasSubstr("--sky-managed")) << command;
    EXPECT_THAT(plugins, HasSubstr("--sky-retry-on-failure=N")) << command;
  }
}

TEST_F(PluginTest, RealSbatchAcceptsSkyOptionsOnTheCommandLineAndInDirectives) {
  const std::string out = tmp_.File("job.out");
  Command c;
  c.argv = {"sbatch", "--parsable", "--sky-any-cluster", "-o", out};
  c.stdin_data = "#!/bin/bash\n#SBATCH --sky-any-cluster=beta,gamma\necho ran\n";
  c.env_set = {{"SLURM_CONF", tb_.SlurmConf("gamma")}};
  CommandOutput submitted = Exec(c);
  ASSERT_TRUE(submitted.success()) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  EXPECT_EQ(WaitForJobEnd(tb_, "gamma", id), "COMPLETED");
  EXPECT_EQ(ReadFileWhenReady(out), "ran\n");
}

TEST_F(PluginTest, SrunStepsRunWithTheOptionOnEveryNode) {
  CommandOutput out =
      RunOn(tb_, "beta", {"srun", "-N2", "--sky-any-cluster=beta", "--chdir", tmp_.path(), "true"});
  EXPECT_TRUE(out.success()) << out.err;
}

TEST_F(PluginTest, BadValuesAreRefusedWithTheReason) {
  CommandOutput out =
      RunOn(tb_, "alpha", {"sbatch", "--sky-retry-on-failure=many", "--wrap", "true"});
  EXPECT_NE(out.exit_code, 0);
  EXPECT_THAT(out.err, HasSubstr("invalid --sky-retry-on-failure value 'many'"));
  out = RunOn(tb_, "alpha", {"srun", "--sky-any-cluster=a;b", "true"});
  EXPECT_NE(out.exit_code, 0);
  EXPECT_THAT(out.err, HasSubstr("invalid --sky-any-cluster list 'a;b'"));
}

}  // namespace
}  // namespace skyslurm::testing
