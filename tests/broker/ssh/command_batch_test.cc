#include "broker/ssh/command_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/ssh/command_lines.h"
#include "broker/ssh/session_pool.h"

namespace skyslurm::ssh {
namespace {

using ::testing::HasSubstr;

// The script is run by this machine's real sh and bash, as a login node's
// would run it.
// Its temporary folders go under tmpdir when one is given.
std::vector<CommandOutput> RunBatch(const std::vector<Command>& commands, const char* shell = "sh",
                                    std::vector<std::size_t> limits = {}, const std::string& tmpdir = "") {
  std::vector<std::string> lines;
  for (const auto& c : commands) {
    lines.push_back(PosixCommandLine(c));
    if (limits.size() < lines.size()) limits.push_back(c.max_output_bytes);
  }
  LocalCommandRunner local;
  Command batch{.argv = {shell, "-s"}, .stdin_data = BatchScript(lines)};
  if (!tmpdir.empty()) batch.env_set = {{"TMPDIR", tmpdir}};
  auto ran = local.Run(batch);
  EXPECT_TRUE(ran.ok() && ran->success()) << (ran.ok() ? ran->err : ran.status().message());
  if (!ran.ok()) return {};
  auto parsed = ParseBatchOutput(ran->out, commands.size(), limits);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return parsed.ok() ? *parsed : std::vector<CommandOutput>{};
}

TEST(CommandBatchTest, EachCommandKeepsItsOutputStatusEnvironmentAndFolder) {
  for (const char* shell : {"sh", "bash"}) {
    auto out = RunBatch({{.argv = {"sh", "-c", "sleep 0.2; echo first; echo warn >&2; exit 3"}},
                         {.argv = {"printf", "%s|", "a b", "it's", "$HOME", ""}},
                         {.argv = {"sh", "-c", "echo \"$SKY_X $(pwd)\""},
                          .env_set = {{"SKY_X", "1 2"}},
                          .env_unset = {"HOME"},
                          .cwd = "/tmp"},
                         {.argv = {"sh", "-c", "kill -9 $$"}},
                         {.argv = {"true"}}},
                        shell);
    ASSERT_EQ(out.size(), 5u) << shell;
    EXPECT_EQ(out[0].exit_code, 3);
    EXPECT_EQ(out[0].out, "first\n");
    EXPECT_EQ(out[0].err, "warn\n");
    EXPECT_EQ(out[1].out, "a b|it's|$HOME||");
    EXPECT_EQ(out[2].out, "1 2 /tmp\n");
    EXPECT_EQ(out[3].term_signal, 9);
    EXPECT_FALSE(out[3].success());
    EXPECT_TRUE(out[4].success());
    EXPECT_EQ(out[4].out, "");
  }
}

TEST(CommandBatchTest, CommandsRunSideBySideAndNothingIsLeftBehind) {
  // Each waits for the other's mark: only side by side can both finish.
  const std::string dir = ::testing::TempDir() + "batch-side-by-side";
  const std::string tmp = ::testing::TempDir() + "batch-tmp";
  LocalCommandRunner local;
  ASSERT_TRUE(local.Run({.argv = {"rm", "-rf", dir, tmp}}).ok());
  ASSERT_TRUE(local.Run({.argv = {"mkdir", "-p", dir, tmp}}).ok());
  auto out = RunBatch(
      {{.argv = {"sh", "-c", "touch a; i=0; while [ ! -e b ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; ls"},
        .cwd = dir},
       {.argv = {"sh", "-c", "touch b; i=0; while [ ! -e a ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; ls"},
        .cwd = dir}},
      "sh", {}, tmp);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].out, "a\nb\n");
  EXPECT_EQ(out[1].out, "a\nb\n");
  // The script's temporary folder is removed.
  auto left = local.Run({.argv = {"ls", "-A", tmp}});
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->out, "");
}

TEST(CommandBatchTest, LargeAndBinaryOutputsAndTheirLimits) {
  auto out = RunBatch({{.argv = {"sh", "-c", "head -c 300000 /dev/zero"}},
                       {.argv = {"printf", "x\\ny\\0z"}},
                       {.argv = {"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' e >&2"}}},
                      "sh", {std::string::npos, std::string::npos, 100});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].out, std::string(300000, '\0'));
  EXPECT_EQ(out[1].out, std::string("x\ny\0z", 5));
  EXPECT_EQ(out[2].err, std::string(100, 'e'));
  EXPECT_TRUE(out[2].truncated);
  EXPECT_FALSE(out[0].truncated);
}

TEST(CommandBatchTest, AnythingButTheFramesIsAnError) {
  const std::vector<std::size_t> none;
  EXPECT_THAT(ParseBatchOutput("Welcome to the login node\n", 1, none).status().message(),
              HasSubstr("expected the output of command 1 of 1, got 'Welcome to the login node"));
  EXPECT_THAT(ParseBatchOutput("skyslurm-batch 0 0 10 0\nshort", 1, none).status().message(),
              HasSubstr("output cut short (5 of 10 bytes)"));
  EXPECT_THAT(ParseBatchOutput("skyslurm-batch 1 0 0 0\n", 1, none).status().message(),
              HasSubstr("malformed frame header 'skyslurm-batch 1 0 0 0'"));
  EXPECT_THAT(ParseBatchOutput("skyslurm-batch 0 x 0 0\n", 1, none).status().message(),
              HasSubstr("malformed frame header"));
  EXPECT_THAT(ParseBatchOutput("skyslurm-batch 0 0 0 0\nextra", 1, none).status().message(),
              HasSubstr("unexpected output after the last command: 'extra'"));
  // wc -c may pad with spaces.
  auto ok = ParseBatchOutput("skyslurm-batch 0 2       3       1\nabcd", 1, none);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0].exit_code, 2);
  EXPECT_EQ((*ok)[0].out, "abc");
  EXPECT_EQ((*ok)[0].err, "d");
}

}  // namespace
}  // namespace skyslurm::ssh
