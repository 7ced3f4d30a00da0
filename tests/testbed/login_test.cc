// Each cluster has a login node: an sshd with its own host key (the home's on
// 127.0.0.1, each peer's in a network namespace of its own),
// key-only authentication, whose sessions see that cluster. slurm-config and
// known_hosts are what a user keeps; a wrong or unknown host key is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

class LoginTest : public TestbedTest {
 protected:
  // OpenSSH with the testbed's slurm-config (as the user keeps it).
  CommandOutput Ssh(const std::string& host, const std::string& remote_command,
                    std::vector<std::string> extra = {}, const std::string& config = "slurm-config",
                    std::optional<std::string> stdin_data = std::nullopt) {
    Command c;
    c.argv = {"ssh", "-F", tb_.Path(config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"};
    c.argv.insert(c.argv.end(), extra.begin(), extra.end());
    c.argv.push_back(host);
    c.argv.push_back(remote_command);
    c.stdin_data = std::move(stdin_data);
    c.timeout = std::chrono::seconds(60);
    return Exec(c);
  }

  // known_hosts with `cluster`'s entry given another key.
  std::string KnownHostsWithWrongKeyFor(const std::string& cluster) {
    const std::string key = tmp_.File("other_host_key");
    Exec({.argv = {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key}});
    std::istringstream pub(ReadFile(key + ".pub"));
    std::string type, blob;
    pub >> type >> blob;
    const std::string port = tb_.env.at("SKYSLURM_LOGIN_PORT_" + Upper(cluster));
    const std::string host = "[" + tb_.LoginHost(cluster) + "]:" + port;
    std::istringstream in(ReadFile(tb_.Path("known_hosts")));
    std::ostringstream out;
    std::string line;
    int replaced = 0;
    while (std::getline(in, line)) {
      if (line.starts_with(host + " ")) {
        line = host + " " + type + " " + blob;
        ++replaced;
      }
      out << line << "\n";
    }
    EXPECT_EQ(replaced, 1);
    const std::string path = tmp_.File("known_hosts.wrong");
    std::ofstream(path) << out.str();
    return path;
  }

  static std::string Upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }

  TempDir tmp_;
};

class EachLoginNode : public LoginTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(EachLoginNode, SessionSeesItsOwnClusterAsTheUser) {
  const std::string cluster = GetParam();
  CommandOutput out =
      Ssh(cluster, "id -un; echo $SLURM_CONF; sinfo -h -o %R | sort | tr '\\n' ' '");
  ASSERT_TRUE(out.success()) << out.err;
  std::map<std::string, std::string> partitions = {
      {"alpha", "cpu gpu "}, {"beta", "debug h100-cluster "}, {"gamma", "batch "}};
  EXPECT_EQ(out.out, "skyuser1\n" + tb_.LoginSlurmConf(cluster) + "\n" + partitions[cluster]);
}

TEST_P(EachLoginNode, ModuleLoadWorksOnTheLoginNode) {
  const std::string cluster = GetParam();
  std::map<std::string, std::string> module = {
      {"alpha", "cuda/12.1"}, {"beta", "cuda/12.6"}, {"gamma", "CUDA/12.2"}};
  CommandOutput out = Ssh(cluster, "module load " + module[cluster] + " && echo $CUDA_VERSION");
  ASSERT_TRUE(out.success()) << out.err;
  EXPECT_EQ(out.out, module[cluster].substr(module[cluster].find('/') + 1) + "\n");
}

TEST_P(EachLoginNode, BatchScriptFromTheLoginNodeRunsAsTheUserAndLoadsModules) {
  const std::string cluster = GetParam();
  std::map<std::string, std::string> module = {
      {"alpha", "cuda/12.4"}, {"beta", "cuda/12.4"}, {"gamma", "cuda-toolkit/12.4"}};
  const std::string out_name = "skyslurm-login-test-" + cluster + ".out";
  // The script travels over stdin, as skyslurm will send it.
  CommandOutput submitted = Ssh(
      cluster, "rm -f ~/" + out_name + "; sbatch --parsable -o ~/" + out_name, {}, "slurm-config",
      "#!/bin/bash\nmodule load " + module[cluster] +
          " || exit 3\necho USER=$(id -un) CUDA_VERSION=$CUDA_VERSION\n");
  ASSERT_TRUE(submitted.success()) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
  EXPECT_EQ(ReadOnCluster(tb_, cluster, out_name), "USER=skyuser1 CUDA_VERSION=12.4\n");
}

// beta and gamma have filesystems of their own (docs/testbed.md): a session
// and a job there see that cluster's home and scratch, and none of alpha's
// files; alpha sees the machine's own.
TEST_P(EachLoginNode, SeesTheFilesystemsOfItsOwnCluster) {
  const std::string cluster = GetParam();
  const bool own = cluster != "alpha";
  const std::map<std::string, std::string> scratch = {
      {"alpha", "/scratch"}, {"beta", "/lustre/scratch"}, {"gamma", "/gpfs/scratch"}};
  const std::string mark = "skyslurm-fs-test-" + cluster;
  WriteFile("/home/skyuser1/" + mark, "on alpha\n");  // alpha's home of skyuser1
  const std::string look =
      "echo home=$HOME; test -e ~/" + mark +
      " && echo alpha-home=seen || echo alpha-home=absent; " + "test -d " + scratch.at(cluster) +
      "/skyuser1 && echo scratch=ok; ls " + tb_.Path("home") +
      " >/dev/null 2>&1 && echo ready=visible || echo ready=hidden; ls " + tb_.Path("fs") +
      " >/dev/null 2>&1 && echo fs=visible || echo fs=hidden; test -r " + tb_.Path("munge") +
      " && echo testbed=visible";
  CommandOutput out = SshAsUser(tb_, cluster, look);
  std::remove(("/home/skyuser1/" + mark).c_str());
  ASSERT_TRUE(out.success()) << out.err;
  const std::string hidden = own ? "hidden" : "visible";
  EXPECT_EQ(out.out, "home=/home/skyuser1\nalpha-home=" + std::string(own ? "absent" : "seen") +
                         "\nscratch=ok\nready=" + hidden + "\nfs=" + hidden +
                         "\ntestbed=visible\n");
  // A job: the cluster's SCRATCH (its TaskProlog's), writable by its user.
  const std::string out_name = "skyslurm-fs-test-" + cluster + ".out";
  CommandOutput submitted =
      SshAsUser(tb_, cluster,
                "rm -f ~/" + out_name + "; sbatch --parsable -o ~/" + out_name +
                    " --wrap 'echo SCRATCH=$SCRATCH; touch $SCRATCH/fs-test && echo wrote; "
                    "test -e ~/" +
                    mark + " || echo alpha-home=absent'");
  ASSERT_TRUE(submitted.success()) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
  EXPECT_EQ(ReadOnCluster(tb_, cluster, out_name),
            "SCRATCH=" + scratch.at(cluster) + "/skyuser1\nwrote\nalpha-home=absent\n");
  (void)SshAsUser(tb_, cluster,
                  "rm -f ~/" + out_name + " " + scratch.at(cluster) + "/skyuser1/fs-test");
}

TEST_P(EachLoginNode, ChangedHostKeyIsRefused) {
  const std::string cluster = GetParam();
  CommandOutput out =
      Ssh(cluster, "true", {"-o", "UserKnownHostsFile=" + KnownHostsWithWrongKeyFor(cluster)});
  EXPECT_EQ(out.exit_code, 255);
  EXPECT_THAT(out.err, HasSubstr("REMOTE HOST IDENTIFICATION HAS CHANGED"));
  EXPECT_THAT(out.err, HasSubstr("Host key verification failed"));
}

INSTANTIATE_TEST_SUITE_P(Testbed, EachLoginNode, ::testing::Values("alpha", "beta", "gamma"));

TEST_F(LoginTest, UnknownHostKeyIsRefused) {
  const std::string empty = tmp_.File("known_hosts.empty");
  std::ofstream(empty).flush();
  CommandOutput out = Ssh("beta", "true", {"-o", "UserKnownHostsFile=" + empty});
  EXPECT_EQ(out.exit_code, 255);
  EXPECT_THAT(out.err, HasSubstr("Host key verification failed"));
}

TEST_F(LoginTest, SlurmConfigHasEveryClusterAsSpecified) {
  std::istringstream in(ReadFile(tb_.Path("slurm-config")));
  std::map<std::string, std::map<std::string, std::string>> hosts;
  std::string line, current;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, value;
    if (!(words >> key >> value) || key.starts_with("#")) continue;
    if (key == "Host") {
      current = value;
    } else {
      hosts[current][key] = value;
    }
  }
  ASSERT_EQ(hosts.size(), 4u);
  std::vector<std::string> clusters(std::begin(kClusters), std::end(kClusters));
  clusters.push_back(kCloudCluster);
  for (const std::string& cluster : clusters) {
    auto& h = hosts[cluster];
    EXPECT_EQ(h["HostName"], tb_.LoginHost(cluster));
    EXPECT_EQ(h["Port"], tb_.env.at("SKYSLURM_LOGIN_PORT_" + Upper(cluster)));
    EXPECT_EQ(h["User"], "skyuser1");
    EXPECT_THAT(h["IdentityFile"], StartsWith("/"));
    EXPECT_EQ(h["UserKnownHostsFile"], tb_.Path("known_hosts"));
    EXPECT_EQ(h["StrictHostKeyChecking"], "yes");
  }
  // The four login nodes', then epsilon's and its bastion's.
  const int keys = tb_.env.count("SLURM_CONF_EPSILON") != 0 ? 6 : 4;
  EXPECT_THAT(ReadFile(tb_.Path("known_hosts")),
              MatchesRegex("(\\[[0-9.]+\\]:[0-9]+ ssh-ed25519 [A-Za-z0-9+/=]+\n){" +
                           std::to_string(keys) + "}"));
}

TEST_F(LoginTest, KeysAreNotInterchangeableBetweenUsers) {
  // skyuser2's key does not open skyuser1's account, and no password is asked.
  CommandOutput out =
      Ssh("alpha", "true", {"-o", "IdentitiesOnly=yes", "-l", "skyuser1"}, "slurm-config.skyuser2");
  EXPECT_EQ(out.exit_code, 255);
  EXPECT_THAT(out.err, HasSubstr("Permission denied (publickey)"));
  out = Ssh("alpha", "id -un", {}, "slurm-config.skyuser2");
  ASSERT_TRUE(out.success()) << out.err;
  EXPECT_EQ(out.out, "skyuser2\n");
}

TEST_F(LoginTest, OneUserCannotCancelAnothersJob) {
  CommandOutput submitted = Ssh("alpha", "sbatch --parsable --hold -o /dev/null --wrap 'sleep 1'");
  ASSERT_TRUE(submitted.success()) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  CommandOutput denied = Ssh("alpha", "scancel " + id, {}, "slurm-config.skyuser2");
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_THAT(denied.err, HasSubstr("Access/permission denied"));
  EXPECT_EQ(JobState(tb_, "alpha", id), "PENDING");
  ASSERT_TRUE(Ssh("alpha", "scancel " + id).success());
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "CANCELLED");
}

}  // namespace
}  // namespace skyslurm::testing
