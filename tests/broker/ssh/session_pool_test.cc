// The libssh pool against the testbed's real login nodes (sshd, strict host
// keys, key-only authentication).
#include "broker/ssh/session_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "broker/config/ssh_config.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ssh::SessionPool;
using ssh::SshTarget;
using ::testing::HasSubstr;

class SessionPoolTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    targets_ = LoginTargets(tb_);
    ASSERT_EQ(targets_.size(), 4u);  // delta, the cloud, too
  }

  CommandOutput MustRun(SessionPool& pool, Command c) {
    auto r = pool.Run(c);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : CommandOutput{};
  }

  CommandOutput Script(const std::string& name, std::vector<std::string> args = {}) {
    Command c;
    c.argv = {TestbedScript(name)};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.env_set = {{"SKYSLURM_TESTBED_DIR", tb_.dir}};
    return Exec(c);
  }

  TempDir tmp_;
  std::map<std::string, SshTarget> targets_;
};

TEST_F(SessionPoolTest, RunsCommandsOnEachLoginNodeOverOneConnection) {
  for (const auto& [name, target] : targets_) {
    SessionPool pool(target);
    for (int i = 0; i < 10; ++i) {
      CommandOutput out = MustRun(
          pool, {.argv = {"sh", "-c", "id -un; echo $SLURM_CONF; sinfo -h -o %R | head -1"}});
      EXPECT_EQ(out.exit_code, 0) << out.err;
      EXPECT_THAT(out.out, HasSubstr("skyuser1\n" + tb_.LoginSlurmConf(name) + "\n"));
    }
    EXPECT_EQ(pool.connections_opened(), 1) << name;
  }
}

TEST_F(SessionPoolTest, StdinExitStatusStderrEnvAndFolder) {
  SessionPool pool(targets_["beta"]);
  CommandOutput cat = MustRun(pool, {.argv = {"cat"}, .stdin_data = std::string(300000, 'x')});
  EXPECT_EQ(cat.out.size(), 300000u);
  CommandOutput failing = MustRun(pool, {.argv = {"sh", "-c", "echo out; echo err >&2; exit 7"}});
  EXPECT_EQ(failing.exit_code, 7);
  EXPECT_EQ(failing.out, "out\n");
  EXPECT_EQ(failing.err, "err\n");
  // Words reach the remote program exactly, whatever they hold.
  CommandOutput quoted =
      MustRun(pool, {.argv = {"printf", "[%s]", "a b", "it's", "$HOME", "`id`", ";", ""},
                     .env_set = {{"SKY_X", "1 2"}},
                     .cwd = "/tmp"});
  EXPECT_EQ(quoted.out, "[a b][it's][$HOME][`id`][;][]");
  CommandOutput env = MustRun(pool, {.argv = {"sh", "-c", "echo \"$SKY_X|$(pwd)\""},
                                     .env_set = {{"SKY_X", "1 2"}},
                                     .cwd = "/tmp"});
  EXPECT_EQ(env.out, "1 2|/tmp\n");
}

// Output larger than libssh's buffers, on both streams at once, arrives whole
// and in order, run after run on one session (the wait for more output once
// slept on the socket while libssh already held the rest: see the
// large-output figures of bench/ssh_latency_bench).
TEST_F(SessionPoolTest, LargeOutputOnBothStreamsArrivesWhole) {
  SessionPool pool(targets_["gamma"]);
  std::string want_out, want_err;
  for (int i = 1; i <= 5000; ++i) {
    want_out += "out" + std::to_string(i) + "\n";
    want_err += "err" + std::to_string(i) + "\n";
  }
  for (int run = 0; run < 5; ++run) {
    CommandOutput out =
        MustRun(pool, {.argv = {"sh", "-c",
                                "i=1; while [ $i -le 5000 ]; do echo out$i; echo err$i >&2; "
                                "i=$((i+1)); done"}});
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.out, want_out);
    EXPECT_EQ(out.err, want_err);
  }
  // Only stderr, slowly: nothing lost while waiting for stdout.
  CommandOutput slow =
      MustRun(pool, {.argv = {"sh", "-c", "echo a >&2; sleep 0.3; echo b >&2; exit 4"}});
  EXPECT_EQ(slow.err, "a\nb\n");
  EXPECT_EQ(slow.out, "");
  EXPECT_EQ(slow.exit_code, 4);
  EXPECT_EQ(pool.connections_opened(), 1);
}

TEST_F(SessionPoolTest, RunAllRunsSeveralCommandsThroughOneChannel) {
  SessionPool pool(targets_["beta"]);
  auto results = pool.RunAll({{.argv = {"sinfo", "-h", "-o", "%R"}},
                              {.argv = {"sh", "-c", "echo $SLURM_CONF; echo oops >&2; exit 5"}},
                              {.argv = {"id", "-un"}}});
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(results[0]->out, "h100-cluster\ndebug\n");
  EXPECT_EQ(results[1]->exit_code, 5);
  EXPECT_EQ(results[1]->out, tb_.LoginSlurmConf("beta") + "\n");
  EXPECT_EQ(results[1]->err, "oops\n");
  EXPECT_EQ(results[2]->out, "skyuser1\n");
  EXPECT_EQ(pool.connections_opened(), 1);
  // With stdin data, one after another (the batch's stdin is its script).
  auto piped = pool.RunAll({{.argv = {"cat"}, .stdin_data = "in"}, {.argv = {"echo", "x"}}});
  ASSERT_TRUE(piped[0].ok() && piped[1].ok());
  EXPECT_EQ(piped[0]->out, "in");
  EXPECT_EQ(piped[1]->out, "x\n");
  // A deadline bounds them all.
  auto slow = pool.RunAll(
      {{.argv = {"sleep", "30"}, .timeout = std::chrono::milliseconds(500)}, {.argv = {"true"}}});
  ASSERT_FALSE(slow[0].ok());
  EXPECT_EQ(slow[0].status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(slow[1].status().code(), StatusCode::kDeadlineExceeded);
}

TEST_F(SessionPoolTest, DeadlineIsKept) {
  SessionPool pool(targets_["gamma"]);
  const auto start = std::chrono::steady_clock::now();
  auto r = pool.Run({.argv = {"sleep", "30"}, .timeout = std::chrono::milliseconds(700)});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(took, std::chrono::seconds(5));
  // The pool is still usable afterwards.
  EXPECT_EQ(MustRun(pool, {.argv = {"true"}}).exit_code, 0);
}

TEST_F(SessionPoolTest, ChangedHostKeyIsRefusedWithTheFix) {
  // known_hosts where gamma's entry holds another key.
  const std::string key = tmp_.File("other");
  Exec({.argv = {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key}});
  std::istringstream pub(ReadFile(key + ".pub"));
  std::string type, blob;
  pub >> type >> blob;
  SshTarget t = targets_["gamma"];
  const std::string port = std::to_string(t.port);
  std::ofstream(tmp_.File("known_hosts"))
      << "[" << t.hostname << "]:" << port << " " << type << " " << blob << "\n";
  t.known_hosts_files = {tmp_.File("known_hosts")};
  SessionPool pool(t);
  auto r = pool.Run({.argv = {"true"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(r.status().message(), HasSubstr("host key CHANGED"));
  EXPECT_THAT(r.status().message(), HasSubstr("ssh-keygen -R '[" + t.hostname + "]:" + port + "'"));
  EXPECT_THAT(r.status().message(), HasSubstr("SHA256:"));
}

TEST_F(SessionPoolTest, UnknownHostKeyIsRefusedWithTheFix) {
  SshTarget t = targets_["beta"];
  std::ofstream(tmp_.File("empty_known_hosts")).flush();
  t.known_hosts_files = {tmp_.File("empty_known_hosts")};
  auto r = SessionPool(t).Run({.argv = {"true"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(r.status().message(), HasSubstr("host key is not known"));
  EXPECT_THAT(r.status().message(), HasSubstr("ssh-keyscan -p " + std::to_string(t.port)));
  EXPECT_THAT(r.status().message(), HasSubstr("only if it is this one"));
}

// The host keys a site distributes (/etc/ssh/ssh_known_hosts, or the
// GlobalKnownHostsFile named) are read as OpenSSH reads them: the user's
// file knows nothing of beta, the site's does.
TEST_F(SessionPoolTest, TheSitesKnownHostsAreHonoured) {
  SshTarget t = targets_["beta"];
  const std::string users_file = t.known_hosts_files.front();
  std::ofstream(tmp_.File("empty_known_hosts")).flush();
  t.known_hosts_files = {tmp_.File("empty_known_hosts")};
  t.global_known_hosts_files = {users_file};
  auto r = SessionPool(t).Run({.argv = {"true"}});
  EXPECT_TRUE(r.ok()) << r.status().message();
  // And ~/.slurm/config's default names /etc/ssh/ssh_known_hosts.
  auto hosts =
      config::ParseSshConfig("Host beta\n  HostName h\n", "c", {.home = "/h", .local_user = "u"});
  ASSERT_TRUE(hosts.ok());
  EXPECT_THAT(hosts->front().global_known_hosts_files,
              ::testing::ElementsAre("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"));
  hosts = config::ParseSshConfig("Host beta\n  GlobalKnownHostsFile /site/known %h\n", "c",
                                 {.home = "/h", .local_user = "u"});
  ASSERT_TRUE(hosts.ok());
  EXPECT_THAT(hosts->front().global_known_hosts_files,
              ::testing::ElementsAre("/site/known", "beta"));
}

TEST_F(SessionPoolTest, WrongUserKeyIsPermissionDenied) {
  SshTarget t = targets_["alpha"];
  t.identity_files = {tb_.Path("keys/skyuser2")};  // skyuser2's key for skyuser1
  auto r = SessionPool(t).Run({.argv = {"true"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(r.status().message(), HasSubstr("refused every key"));
}

TEST_F(SessionPoolTest, UnresolvableAndRefusedAreReportedAtOnce) {
  SshTarget t = targets_["alpha"];
  t.hostname = "no-such-host.invalid";
  auto r = SessionPool(t).Run({.argv = {"true"}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("cannot resolve the login node's name"));
  SshTarget closed = targets_["alpha"];
  closed.port = 1;  // nothing listens there
  const auto start = std::chrono::steady_clock::now();
  auto refused = SessionPool(closed).Run({.argv = {"true"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("refused the connection"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(SessionPoolTest, DeadPooledConnectionIsReplacedOnce) {
  SessionPool pool(targets_["gamma"]);
  EXPECT_EQ(MustRun(pool, {.argv = {"true"}}).exit_code, 0);
  // Restarting the login node kills the pooled session.
  ASSERT_TRUE(Script("stop-login", {"gamma"}).success());
  ASSERT_TRUE(Script("start-login", {"gamma"}).success());
  CommandOutput after = MustRun(pool, {.argv = {"echo", "back"}});
  EXPECT_EQ(after.out, "back\n");
  EXPECT_EQ(pool.connections_opened(), 2);
}

TEST_F(SessionPoolTest, ParallelCommandsShareABoundedPool) {
  SessionPool pool(targets_["beta"], {.max_connections = 3});
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        auto r = pool.Run({.argv = {"sh", "-c", "echo x"}});
        if (r.ok() && r->out == "x\n") ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_LE(pool.connections_opened(), 3);
}

}  // namespace
}  // namespace skyslurm::testing
