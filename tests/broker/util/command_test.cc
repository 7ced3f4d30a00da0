#include "broker/util/command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <string>

namespace skyslurm {
namespace {

using ::testing::HasSubstr;

Result<CommandOutput> Sh(const std::string& script, Command extra = {}) {
  extra.argv = {"/bin/sh", "-c", script};
  return LocalCommandRunner().Run(extra);
}

TEST(CommandTest, CapturesOutputsAndExitStatus) {
  auto r = Sh("echo out; echo err >&2; exit 3");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->term_signal, 0);
  EXPECT_FALSE(r->success());
  EXPECT_EQ(r->DescribeEnd(), "exit status 3");
}

TEST(CommandTest, SearchesPath) {
  auto r = LocalCommandRunner().Run({.argv = {"true"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->success());
}

TEST(CommandTest, MissingProgramIsNotFound) {
  auto r = LocalCommandRunner().Run({.argv = {"/nonexistent/skyslurm-no-such-program"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("skyslurm-no-such-program"));
}

TEST(CommandTest, EmptyArgvIsInvalid) {
  EXPECT_EQ(LocalCommandRunner().Run({}).status().code(), StatusCode::kInvalidArgument);
}

TEST(CommandTest, FeedsStdin) {
  Command c;
  c.stdin_data = "#!/bin/bash\n#SBATCH -N 2\necho hi\n";
  auto r = LocalCommandRunner().Run({.argv = {"cat"}, .stdin_data = c.stdin_data});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, *c.stdin_data);
}

TEST(CommandTest, StdinIsDevNullByDefault) {
  auto r = Sh("cat; echo end");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "end\n");
}

TEST(CommandTest, LargeStdinAndOutputDoNotDeadlock) {
  // More than any pipe buffer in both directions at once.
  std::string big(4 << 20, 'x');
  auto r = LocalCommandRunner().Run({.argv = {"cat"}, .stdin_data = big});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), big.size());
  EXPECT_FALSE(r->truncated);
}

TEST(CommandTest, ProgramThatStopsReadingStdinIsNotAnError) {
  std::string big(1 << 20, 'x');
  auto r = LocalCommandRunner().Run(
      {.argv = {"/bin/sh", "-c", "head -c 10 >/dev/null; echo ok"}, .stdin_data = big});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "ok\n");
}

TEST(CommandTest, OutputBeyondTheCapIsDropped) {
  Command c;
  c.max_output_bytes = 1000;
  auto r = Sh("head -c 100000 /dev/zero", c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_TRUE(r->truncated);
}

TEST(CommandTest, EnvironmentChanges) {
  setenv("SKYSLURM_TEST_INHERITED", "yes", 1);
  setenv("SKYSLURM_TEST_REMOVED", "no", 1);
  Command c;
  c.env_set = {{"SKYSLURM_TEST_SET", "a b'c"}};
  c.env_unset = {"SKYSLURM_TEST_REMOVED"};
  auto r =
      Sh("echo \"$SKYSLURM_TEST_INHERITED|$SKYSLURM_TEST_SET|${SKYSLURM_TEST_REMOVED-unset}\"", c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "yes|a b'c|unset\n");
}

TEST(CommandTest, WorkingDirectory) {
  Command c;
  c.cwd = "/usr";
  auto r = Sh("pwd", c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "/usr\n");
}

TEST(CommandTest, TimeoutKillsTheProcessGroupAndReportsStderr) {
  Command c;
  c.timeout = std::chrono::milliseconds(300);
  // The child starts a grandchild holding the pipes: both must go.
  auto r =
      Sh("echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; "
         "sleep 30 & sleep 30",
         c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("did not finish within 300 ms"));
  EXPECT_THAT(r.status().message(), HasSubstr("Unable to contact slurm controller"));
}

TEST(CommandTest, TimeoutAlsoHoldsWhenTheProgramClosesItsOutput) {
  Command c;
  c.timeout = std::chrono::milliseconds(300);
  auto r = Sh("exec >/dev/null 2>&1; sleep 30", c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
}

TEST(CommandTest, ReportsTerminatingSignal) {
  auto r = Sh("kill -TERM $$");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->term_signal, SIGTERM);
  EXPECT_FALSE(r->success());
  EXPECT_THAT(r->DescribeEnd(), HasSubstr("signal 15"));
}

TEST(CommandTest, ChildGetsDefaultSignalHandling) {
  // Even when the caller ignores SIGTERM and blocks SIGINT, the child must
  // start clean (Slurm's slurmscriptd once passed a blocked SIGTERM on).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old {};
  sigaction(SIGTERM, &ignore, &old);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  auto r = Sh("grep -E '^Sig(Blk|Ign):' /proc/self/status");
  sigaction(SIGTERM, &old, nullptr);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->out, HasSubstr("SigBlk:\t0000000000000000"));
  // Bit 15 (SIGTERM) is 0x4000 in SigIgn.
  const auto ign = r->out.substr(r->out.find("SigIgn:\t") + 8, 16);
  EXPECT_EQ(std::stoull(ign, nullptr, 16) & 0x4000u, 0u) << r->out;
}

TEST(CommandTest, NoDescriptorsLeakIntoTheChild) {
  auto r = Sh("ls /proc/self/fd | wc -l");
  ASSERT_TRUE(r.ok());
  // 0, 1, 2 and the one ls opens for the directory.
  EXPECT_EQ(std::stoi(r->out), 4);
}

TEST(ShellQuoteTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(ShellQuote("sbatch"), "sbatch");
  EXPECT_EQ(ShellQuote("--gres=gpu:h100:8"), "--gres=gpu:h100:8");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$(rm -rf ~)"), "'$(rm -rf ~)'");
  EXPECT_EQ(ShellJoin({"squeue", "-o", "%i %T"}), "squeue -o '%i %T'");
}

TEST(ShellQuoteTest, RoundTripsThroughARealShell) {
  const std::vector<std::string> words = {"a b", "it's", "$HOME", "`id`", "\\", "\n", "*", ""};
  auto r = Sh("printf '[%s]' " + ShellJoin(words));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "[a b][it's][$HOME][`id`][\\][\n][*][]");
}

TEST(RunAllTest, RunsSideBySideAndAnswersInOrder) {
  // Each waits for the other's mark: only side by side can both see it.
  const std::string dir = ::testing::TempDir() + "runall-side-by-side";
  LocalCommandRunner local;
  ASSERT_TRUE(local.Run({.argv = {"rm", "-rf", dir}}).ok());
  ASSERT_TRUE(local.Run({.argv = {"mkdir", "-p", dir}}).ok());
  const std::string wait_for =
      "touch \"$1\"; i=0; while [ ! -e \"$2\" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
      "[ -e \"$2\" ] && echo saw \"$2\"";
  auto results = local.RunAll({{.argv = {"sh", "-c", wait_for, "sh", "a", "b"}, .cwd = dir},
                               {.argv = {"sh", "-c", wait_for, "sh", "b", "a"}, .cwd = dir},
                               {.argv = {"/nonexistent/program"}}});
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].ok() && results[1].ok());
  EXPECT_EQ(results[0]->out, "saw b\n");
  EXPECT_EQ(results[1]->out, "saw a\n");
  EXPECT_FALSE(results[2].ok());
  EXPECT_TRUE(local.RunAll({}).empty());
}

}  // namespace
}  // namespace skyslurm
