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

class PluginTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    for (const char* cluster : kClusters) {
      ASSERT_THAT(ReadFile(tb_.Path(std::string("clusters/") + cluster + "/etc/plugstack.conf")),
                  HasSubstr("optional " + kPlugin))
          << "the testbed does not list this build's plugin; run scripts/testbed/up after "
             "building";
    }
  }
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

TEST_F(PluginTest, AScriptFromStdinAskingForRoutingIsRefusedNotSubmittedHere) {
  // Read from stdin, the script is gone by the time the plugin sees its
  // #SBATCH --sky-any-cluster: it says so, and nothing is submitted.
  Command c;
  c.argv = {"sbatch", "--parsable", "-o", tmp_.File("job.out")};
  c.stdin_data = "#!/bin/bash\n#SBATCH --sky-any-cluster=beta,gamma\necho ran\n";
  c.env_set = {{"SLURM_CONF", tb_.SlurmConf("gamma")}};
  const std::string before = RunOn(tb_, "gamma", {"squeue", "-h", "-t", "all", "-o", "%i"}).out;
  CommandOutput out = Exec(c);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.err, HasSubstr("script read from standard input cannot be routed"));
  EXPECT_EQ(out.out, "");
  EXPECT_EQ(RunOn(tb_, "gamma", {"squeue", "-h", "-t", "all", "-o", "%i"}).out, before);
}

TEST_F(PluginTest, StepsInsideAnAllocationKeepTheirOptionAndGetSkypilotVariables) {
  // Inside an allocation srun is never handed over: its steps run here.
  CommandOutput out = RunOn(tb_, "beta", {"salloc", "-N2", "-Q", "srun", "-l", "--sky-any-cluster=beta",
                                          "--chdir", tmp_.path(), "printenv", "SKYPILOT_NUM_NODES"});
  EXPECT_TRUE(out.success()) << out.err;
  EXPECT_THAT(out.out, ::testing::MatchesRegex("[01]: 2\n[01]: 2\n"));
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

// A plugstack.conf line with an argument the plugin does not know: listed as
// required, the real command refuses to run and says why; as optional, it
// says why and runs without the plugin (its options are then unknown).
TEST_F(PluginTest, AnUnknownPlugstackArgumentIsRefusedWithItsName) {
  std::string conf = ReadFile(tb_.SlurmConf("alpha"));
  const std::size_t at = conf.find("PlugStackConfig=");
  ASSERT_NE(at, std::string::npos);
  conf.replace(at, conf.find('\n', at) - at, "PlugStackConfig=" + tmp_.File("plugstack.conf"));
  WriteFile(tmp_.File("slurm.conf"), conf);
  Command c;
  c.env_set = {{"SLURM_CONF", tmp_.File("slurm.conf")}};
  const std::string why =
      "skyslurm: unknown plugstack.conf argument 'bogus=1' (known: shim=DIR, reexec=yes|no, "
      "env=yes|no)";

  WriteFile(tmp_.File("plugstack.conf"), "required " + kPlugin + " bogus=1\n");
  c.argv = {"sbatch", "--test-only", "--wrap", "true"};
  CommandOutput out = Exec(c);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.err, HasSubstr(why));
  EXPECT_THAT(out.err, HasSubstr("Failed to initialize plugin stack"));

  WriteFile(tmp_.File("plugstack.conf"), "optional " + kPlugin + " bogus=1\n");
  out = Exec(c);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.err, HasSubstr(why));
  c.argv = {"sbatch", "--test-only", "--sky-explain", "--wrap", "true"};
  out = Exec(c);
  EXPECT_NE(out.exit_code, 0);
  EXPECT_THAT(out.err, HasSubstr("unrecognized option '--sky-explain'"));
}

}  // namespace
}  // namespace skyslurm::testing
