// The testbed's own scripts: `up` on a running testbed changes nothing,
// stop-/start-cluster and stop-/start-login kill and revive one part with its
// state, `status` tells, and `down` leaves no process (then `up` restores).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class LifecycleTest : public TestbedTest {
 protected:
  CommandOutput Script(const std::string& name, std::vector<std::string> args = {}) {
    Command c;
    c.argv = {TestbedScript(name)};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.env_set = {{"SKYSLURM_TESTBED_DIR", tb_.dir}};
    c.timeout = std::chrono::seconds(120);
    return Exec(c);
  }

  // Recorded daemon PIDs, by daemon name.
  std::map<std::string, std::string> RecordedPids() {
    std::map<std::string, std::string> pids;
    for (const auto& e : std::filesystem::directory_iterator(tb_.Path("run/pids"))) {
      if (e.path().extension() == ".pid") pids[e.path().stem()] = ReadFile(e.path());
    }
    return pids;
  }

  CommandOutput SshTrue(const std::string& cluster) {
    return Exec({.argv = {"ssh", "-F", tb_.Path("slurm-config"), "-o", "BatchMode=yes", "-o",
                          "ConnectTimeout=10", cluster, "true"},
                 .timeout = std::chrono::seconds(30)});
  }
};

TEST_F(LifecycleTest, UpOnARunningTestbedChangesNothing) {
  const std::string held = Submit(tb_, "gamma", {"--hold", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_FALSE(held.empty());
  const auto before = RecordedPids();
  const std::string env_before = ReadFile(tb_.Path("env"));
  const std::string known_hosts_before = ReadFile(tb_.Path("known_hosts"));

  CommandOutput up = Script("up");
  ASSERT_TRUE(up.success()) << up.err;
  EXPECT_THAT(up.err, Not(HasSubstr("restarting")));

  EXPECT_EQ(RecordedPids(), before);
  EXPECT_EQ(ReadFile(tb_.Path("env")), env_before);
  EXPECT_EQ(ReadFile(tb_.Path("known_hosts")), known_hosts_before);
  EXPECT_EQ(JobState(tb_, "gamma", held), "PENDING");
  RunOn(tb_, "gamma", {"scancel", held});
}

TEST_F(LifecycleTest, StopClusterKeepsItsStateAndStartClusterRestoresIt) {
  const std::string held = Submit(tb_, "beta", {"--hold", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_FALSE(held.empty());
  ASSERT_TRUE(Script("stop-cluster", {"beta"}).success());

  EXPECT_THAT(RunOn(tb_, "beta", {"scontrol", "ping"}).out, HasSubstr("DOWN"));
  CommandOutput status = Script("status");
  EXPECT_NE(status.exit_code, 0);
  EXPECT_THAT(status.out, HasSubstr("slurmctld beta         DOWN"));
  // The other clusters are untouched.
  EXPECT_THAT(RunOn(tb_, "gamma", {"scontrol", "ping"}).out, HasSubstr("is UP"));

  CommandOutput start = Script("start-cluster", {"beta"});
  ASSERT_TRUE(start.success()) << start.err;
  EXPECT_EQ(JobState(tb_, "beta", held), "PENDING");
  EXPECT_EQ(Script("status").exit_code, 0);
  RunOn(tb_, "beta", {"scancel", held});
}

TEST_F(LifecycleTest, StopLoginRefusesConnectionsAndStartLoginKeepsTheHostKey) {
  ASSERT_TRUE(Script("stop-login", {"gamma"}).success());
  CommandOutput refused = SshTrue("gamma");
  EXPECT_EQ(refused.exit_code, 255);
  EXPECT_THAT(refused.err, HasSubstr("Connection refused"));
  EXPECT_NE(Script("status").exit_code, 0);
  // The cluster itself keeps running.
  EXPECT_THAT(RunOn(tb_, "gamma", {"scontrol", "ping"}).out, HasSubstr("is UP"));

  ASSERT_TRUE(Script("start-login", {"gamma"}).success());
  // Strict host-key checking against the unchanged known_hosts passes.
  CommandOutput back = SshTrue("gamma");
  EXPECT_TRUE(back.success()) << back.err;
}

TEST_F(LifecycleTest, DaemonsRunInTheTestbedFolderNotTheCallers) {
  // A daemon that kept the folder `up` was run from (a CI clone, a build
  // tree) breaks every job once that folder is deleted: slurmstepd inherits
  // it ("Unable to get current working directory").
  int checked = 0;
  for (const auto& [name, record] : RecordedPids()) {
    const std::string pid = record.substr(0, record.find(' '));
    std::error_code ec;
    const auto cwd = std::filesystem::read_symlink("/proc/" + pid + "/cwd", ec);
    ASSERT_FALSE(ec) << name << ": " << ec.message();
    // Ours, or wherever the daemon moved itself (sshd and munged go to /,
    // mariadbd to its data folder); epsilon's, chrooted, at its root
    // filesystem's / (or under it).
    const auto rootfs = tb_.env.find("SKYSLURM_TESTBED_ROOTFS");
    const bool in_rootfs =
        rootfs != tb_.env.end() && cwd.string().starts_with(rootfs->second);
    EXPECT_TRUE(cwd == "/" || cwd.string().starts_with(tb_.dir) || in_rootfs)
        << name << ": " << cwd;
    ++checked;
  }
  EXPECT_GE(checked, 12);
}

TEST_F(LifecycleTest, ScriptsRejectUnknownNames) {
  CommandOutput out = Script("stop-cluster", {"epsilon"});
  EXPECT_NE(out.exit_code, 0);
  EXPECT_THAT(out.err, HasSubstr("usage: stop-cluster"));
  EXPECT_NE(Script("up", {"--bogus"}).exit_code, 0);
}

TEST_F(LifecycleTest, DownLeavesNoProcessAndUpBringsBackTheState) {
  const std::string held = Submit(tb_, "alpha", {"--hold", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_FALSE(held.empty());
  // A running job too, so that down has a slurmstepd and its job to stop.
  const std::string running = Submit(tb_, "beta", {"-o", "/dev/null", "--wrap", "sleep 300"});
  ASSERT_FALSE(running.empty());
  for (int i = 0; i < 100 && JobState(tb_, "beta", running) != "RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(JobState(tb_, "beta", running), "RUNNING");
  ASSERT_THAT(MarkedTestbedProcesses(tb_.dir), Not(IsEmpty()));

  CommandOutput down = Script("down");
  ASSERT_TRUE(down.success()) << down.err;
  EXPECT_THAT(MarkedTestbedProcesses(tb_.dir), IsEmpty());
  EXPECT_TRUE(std::filesystem::is_empty(tb_.Path("run/pids")));
  EXPECT_NE(Script("status").exit_code, 0);

  CommandOutput up = Script("up");
  ASSERT_TRUE(up.success()) << up.err;
  EXPECT_EQ(Script("status").exit_code, 0);
  EXPECT_EQ(JobState(tb_, "alpha", held), "PENDING");
  RunOn(tb_, "alpha", {"scancel", held});
}

}  // namespace
}  // namespace skyslurm::testing
