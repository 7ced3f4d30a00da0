// `cmake --install` lays out what users and admins rely on
// (docs/admin-guide.md): <prefix>/bin/skyslurm, <prefix>/sbin/skyslurmd,
// <prefix>/libexec/skyslurm/bin/{sbatch,salloc,srun} -> ../skyslurm-shim and
// <prefix>/lib/skyslurm/skyslurm.so; and the installed files work as a new
// user types them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InstallTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    CommandOutput out = Exec({.argv = {SKYSLURM_CMAKE_COMMAND, "--install", SKYSLURM_BINARY_DIR},
                              .env_set = {{"DESTDIR", tmp_.File("root")}}});
    ASSERT_TRUE(out.success()) << out.out << out.err;
    prefix_ = tmp_.File("root") + SKYSLURM_INSTALL_PREFIX;
  }
  std::string At(const std::string& relative) const { return prefix_ + "/" + relative; }

  TempDir tmp_;
  std::string prefix_;
};

TEST_F(InstallTest, TheLayoutIsThePromisedOne) {
  for (const char* program : {"bin/skyslurm", "sbin/skyslurmd", "libexec/skyslurm/skyslurm-shim"}) {
    EXPECT_EQ(access(At(program).c_str(), X_OK), 0) << program;
  }
  for (const char* command : {"sbatch", "salloc", "srun"}) {
    const fs::path link = At(std::string("libexec/skyslurm/bin/") + command);
    ASSERT_TRUE(fs::is_symlink(link)) << link;
    EXPECT_EQ(fs::read_symlink(link), "../skyslurm-shim");
  }
  // Literally lib/skyslurm, whatever the multiarch folder.
  EXPECT_TRUE(fs::is_regular_file(At("lib/skyslurm/skyslurm.so")));
  // The plugin hands invocations to the shim where this build installs it.
  EXPECT_THAT(ReadFile(At("lib/skyslurm/skyslurm.so")),
              HasSubstr(std::string(SKYSLURM_INSTALL_PREFIX) + "/libexec/skyslurm/bin"));
  // Nothing installed points back into the build tree.
  for (const char* file : {"bin/skyslurm", "sbin/skyslurmd", "libexec/skyslurm/skyslurm-shim",
                           "lib/skyslurm/skyslurm.so"}) {
    CommandOutput dynamic = Exec({.argv = {"readelf", "-d", At(file)}});
    EXPECT_THAT(dynamic.out, ::testing::Not(HasSubstr("RUNPATH"))) << file;
    EXPECT_THAT(dynamic.out, ::testing::Not(HasSubstr("RPATH"))) << file;
  }
  // Both name the Slurm release they were built against as Slurm spells it
  // (sbatch --version says "slurm-wlm 22.05.8"; once they printed 22.5.8).
  std::smatch m;
  const std::string sbatch_version = RunOn(tb_, "alpha", {"sbatch", "--version"}).out;
  ASSERT_TRUE(std::regex_search(sbatch_version, m, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << sbatch_version;
  const std::string built_against = "(built against Slurm " + m[0].str() + ")\n";
  EXPECT_THAT(Exec({.argv = {At("bin/skyslurm"), "--version"}}).out, ::testing::EndsWith(built_against));
  EXPECT_THAT(Exec({.argv = {At("sbin/skyslurmd"), "--version"}}).out, ::testing::EndsWith(built_against));
}

// As the issue spells it: source $SKYSLURM_TESTBED_DIR/env;
// HOME=$SKYSLURM_TESTBED_DIR/home PATH=<prefix>/libexec/skyslurm/bin:$PATH
// sbatch --sky-any-cluster job.sh
TEST_F(InstallTest, TheReadyUserTypesSbatchWithTheInstalledShimFirst) {
  WriteFile(tmp_.File("job.sh"), "#!/bin/bash\n#SBATCH -t 5\n#SBATCH -o /dev/null\ntrue\n");
  Command c;
  c.argv = {"/bin/bash", "-c",
            "source \"$1/env\" && HOME=\"$1/home\" PATH=\"$2:$PATH\" sbatch --sky-any-cluster job.sh",
            "bash", tb_.dir, At("libexec/skyslurm/bin")};
  c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                 "SKYSLURM_ROUTER", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "SLURM_CONF"};
  c.cwd = tmp_.path();
  c.timeout = std::chrono::seconds(120);
  CommandOutput out = Exec(c);
  // The routed sbatch started the ready user's skyslurmd, from the install.
  const int daemon = UserDaemonPid(tb_.Path("home"));
  EXPECT_NE(daemon, 0);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/" + std::to_string(daemon) + "/exe").string(),
            At("sbin/skyslurmd"));
  StopUserDaemon(tb_.Path("home"));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(out.out, m, std::regex("Submitted batch job ([0-9]+) on cluster ([a-z]+)\n")))
      << out.out;
  EXPECT_EQ(WaitForJobEnd(tb_, m[2].str(), m[1].str()), "COMPLETED");
  // Without a sky option the installed shim is simply the real sbatch.
  EXPECT_EQ(Exec({.argv = {At("libexec/skyslurm/bin/sbatch"), "--version"},
                  .env_set = {{"SLURM_CONF", tb_.SlurmConf("alpha")}}})
                .out,
            RunOn(tb_, "alpha", {"sbatch", "--version"}).out);
}

}  // namespace
}  // namespace skyslurm::testing
