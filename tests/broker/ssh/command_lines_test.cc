// A command's values and its stdin reach the program through a shell's
// stdin, never through a process's arguments: run by this machine's real
// sh, with the program listing every process's arguments while it runs.
#include "broker/ssh/command_lines.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::ssh {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every process's arguments, as `ps -eo args` shows them to anyone.
constexpr const char* kListArguments =
    "for f in /proc/[0-9]*/cmdline; do tr '\\000' ' ' <\"$f\" 2>/dev/null; echo; done";

TEST(CommandLinesTest, ValuesAndInputAreInNoProcesssArguments) {
  const std::string secret = "s3cret-value-for-the-test";
  const std::string input = "#!/bin/sh\necho line-of-the-script-" + secret + "\n";
  std::string program = kListArguments;
  program.append("; echo \"[$TOKEN]\"; cat");  // not +: GCC 12's false -Warray-bounds
  Command c{.argv = {"sh", "-c", program},
            .stdin_data = input,
            .env_set = {{"TOKEN", secret}, {"SPACED", "a 'b' c"}},
            .env_unset = {"HOME"},
            .cwd = "/usr"};
  LocalCommandRunner local;
  auto ran = local.Run({.argv = {"sh", "-s"}, .stdin_data = CommandScript(c)});
  ASSERT_TRUE(ran.ok() && ran->success()) << (ran.ok() ? ran->err : ran.status().message());
  // The program got both, exactly ...
  EXPECT_THAT(ran->out, HasSubstr("[" + secret + "]\n" + input));
  // ... and no process had either in its arguments meanwhile.
  const std::string listed = ran->out.substr(0, ran->out.find("[" + secret));
  EXPECT_THAT(listed, Not(HasSubstr(secret)));
  EXPECT_THAT(listed, HasSubstr("sh -s"));
}

TEST(CommandLinesTest, AScriptRunsInItsFolderWithItsEnvironmentAndStatus) {
  Command c{.argv = {"sh", "-c", "pwd; echo \"$A|${GONE-unset}\"; exit 7"},
            .env_set = {{"A", "one 'two'"}},
            .env_unset = {"GONE"},
            .cwd = "/usr"};
  LocalCommandRunner local;
  auto ran = local.Run(
      {.argv = {"sh", "-s"}, .stdin_data = CommandScript(c), .env_set = {{"GONE", "here"}}});
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(ran->out, "/usr\none 'two'|unset\n");
  EXPECT_EQ(ran->exit_code, 7);
  c.cwd = "/nonexistent-skyslurm";
  ran = local.Run({.argv = {"sh", "-s"}, .stdin_data = CommandScript(c)});
  ASSERT_TRUE(ran.ok());
  EXPECT_NE(ran->exit_code, 0);
}

TEST(CommandLinesTest, AChannelLineHasNoEnvironment) {
  EXPECT_EQ(RemoteCommandLine({.argv = {"sbatch", "--parsable"}}), "sbatch --parsable");
  EXPECT_EQ(RemoteCommandLine({.argv = {"squeue", "-o", "%i %T"}, .cwd = "/scratch/my dir"}),
            "cd '/scratch/my dir' && exec squeue -o '%i %T'");
  EXPECT_FALSE(ChangesEnvironment({.argv = {"true"}}));
  EXPECT_TRUE(ChangesEnvironment({.argv = {"true"}, .env_unset = {"X"}}));
  // A name no shell assigns is left out, never handed to env.
  EXPECT_EQ(PosixCommandLine({.argv = {"true"}, .env_set = {{"a.b", "v"}, {"TZ", "UTC"}}}),
            "export TZ=UTC; exec true");
}

}  // namespace
}  // namespace skyslurm::ssh
