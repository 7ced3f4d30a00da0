// Without a --sky-* option the shim is the real command: same argv (argv[0]
// included), same environment, same output and exit status, failures too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const std::string kShimBin = std::string(SKYSLURM_BINARY_DIR) + "/shim/bin";

class PassthroughTest : public TestbedTest {
 protected:
  // Runs `argv` on alpha as a user types it, once with the shim's folder
  // first on PATH and once without.
  std::pair<CommandOutput, CommandOutput> Both(const std::vector<std::string>& argv,
                                               std::optional<std::string> stdin_data = {}) {
    auto run = [&](bool shim) {
      Command c;
      c.argv = {"/bin/sh", "-c", "exec \"$@\"", "sh"};
      c.argv.insert(c.argv.end(), argv.begin(), argv.end());
      c.stdin_data = stdin_data;
      c.cwd = tmp_.path();
      const std::string path = std::getenv("PATH");
      c.env_set = {{"SLURM_CONF", tb_.SlurmConf("alpha")},
                   {"PATH", shim ? kShimBin + ":" + path : path}};
      c.timeout = std::chrono::seconds(60);
      return Exec(c);
    };
    return {run(true), run(false)};
  }

  TempDir tmp_;
};

struct Invocation {
  const char* name;
  std::vector<std::string> argv;
  // srun prints the tasks' lines (and its own) in whatever order they arrive.
  bool any_line_order = false;
};

void PrintTo(const Invocation& invocation, std::ostream* os) { *os << ShellJoin(invocation.argv); }

// Job and step ids differ between two runs, the node a task ran on, and
// whether srun had to wait a moment for the nodes; nothing else may.
std::string WithoutIds(std::string text, bool sort_lines) {
  text = std::regex_replace(
      text, std::regex("srun: job [0-9]+ (queued and waiting for|has been allocated) resources\n"),
      "");
  text = std::regex_replace(text, std::regex("(StepId=|job |Job |allocation )[0-9]+"), "$1N");
  text = std::regex_replace(text, std::regex("alpha-n[0-9]+"), "alpha-nN");
  if (!sort_lines) return text;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  std::string sorted;
  for (const auto& line : lines) sorted += line + "\n";
  return sorted;
}

class IdenticalTest : public PassthroughTest, public ::testing::WithParamInterface<Invocation> {};

TEST_P(IdenticalTest, SameOutputAndExitStatus) {
  const Invocation& invocation = GetParam();
  auto [shim, real] = Both(invocation.argv);
  EXPECT_EQ(shim.exit_code, real.exit_code);
  EXPECT_EQ(shim.term_signal, real.term_signal);
  EXPECT_EQ(WithoutIds(shim.out, invocation.any_line_order),
            WithoutIds(real.out, invocation.any_line_order));
  EXPECT_EQ(WithoutIds(shim.err, invocation.any_line_order),
            WithoutIds(real.err, invocation.any_line_order));
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, IdenticalTest,
    ::testing::Values(
        Invocation{"sbatch_version", {"sbatch", "--version"}},
        Invocation{"salloc_version", {"salloc", "--version"}},
        Invocation{"srun_version", {"srun", "--version"}},
        Invocation{"sbatch_usage", {"sbatch", "--usage"}},
        Invocation{"sbatch_help", {"sbatch", "--help"}},
        Invocation{"sbatch_unknown_option", {"sbatch", "--no-such-option", "--wrap", "true"}},
        Invocation{"sbatch_missing_script", {"sbatch", "/nonexistent/job.sh"}},
        Invocation{"sbatch_bad_time", {"sbatch", "-t", "99-00:00:00", "--wrap", "true"}},
        Invocation{"sbatch_bad_gres", {"sbatch", "--gres=gpu:h100:x", "--wrap", "true"}},
        Invocation{"sbatch_test_only_bad_partition",
                   {"sbatch", "--test-only", "-p", "nope", "--wrap", "true"}},
        Invocation{"srun_exit_status",
                   {"srun", "-N1", "sh", "-c", "echo out; echo err >&2; exit 7"},
                   /*any_line_order=*/true},
        Invocation{"srun_two_nodes",
                   {"srun", "-N2", "-l", "--gres=gpu:h100:1", "sh", "-c",
                    "echo $SLURM_GPUS_ON_NODE $SLURM_NNODES"},
                   /*any_line_order=*/true},
        Invocation{"srun_killed_by_signal", {"srun", "-N1", "sh", "-c", "kill -9 $$"}},
        Invocation{"salloc_with_command",
                   {"salloc", "-N1", "-Q", "srun", "printenv", "SLURM_JOB_NUM_NODES"}},
        Invocation{"salloc_failing", {"salloc", "-N9", "true"}}),
    [](const auto& p) { return std::string(p.param.name); });

TEST_F(PassthroughTest, SbatchSubmitsThroughTheShim) {
  auto [shim, real] = Both({"sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_TRUE(shim.success()) << shim.err;
  ASSERT_TRUE(real.success()) << real.err;
  EXPECT_THAT(shim.out, MatchesRegex("[0-9]+\n"));
  EXPECT_EQ(std::stol(real.out), std::stol(shim.out) + 1);
}

TEST_F(PassthroughTest, ScriptOnStdinReachesTheRealCommand) {
  const std::string script = "#!/bin/bash\n#SBATCH -J via-stdin\necho hi\n";
  auto [shim, real] = Both({"sbatch", "--parsable", "-o", "/dev/null"}, script);
  ASSERT_TRUE(shim.success()) << shim.err;
  const std::string id = shim.out.substr(0, shim.out.find('\n'));
  EXPECT_EQ(RunOn(tb_, "alpha", {"squeue", "-h", "-t", "all", "-j", id, "-o", "%j"}).out,
            "via-stdin\n");
}

// A stand-in "real" sbatch that reports exactly what it was given.
TEST_F(PassthroughTest, ArgvAndEnvironmentAreHandedOverUnchanged) {
  const std::string fake_dir = tmp_.File("fakebin");
  std::filesystem::create_directories(fake_dir);
  {
    std::ofstream fake(fake_dir + "/sbatch");
    fake << "#!/bin/sh\nprintf '[%s]' \"$0\" \"$@\"; echo; env | LC_ALL=C sort\n";
  }
  std::filesystem::permissions(fake_dir + "/sbatch", std::filesystem::perms::owner_all);
  const std::vector<std::string> args = {"-N", "2", "--wrap=echo 'a b'", "", "--", "x"};

  auto run = [&](const std::string& program, const std::string& argv0) {
    Command c;
    c.argv = {"/bin/bash", "-c", "exec -a \"$0\" \"$@\"", argv0, program};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.env_set = {{"PATH", kShimBin + ":" + fake_dir + ":/usr/bin:/bin"},
                 {"SKYSLURM_TEST_MARK", "x y"}};
    return Exec(c);
  };
  CommandOutput via_shim = run(kShimBin + "/sbatch", "sbatch");
  CommandOutput direct = run(fake_dir + "/sbatch", "sbatch");
  ASSERT_TRUE(via_shim.success()) << via_shim.err;
  // $0 differs only because the fake is a script (the kernel passes its
  // path); everything after it, and the whole environment, must match.
  auto after_argv0 = [](const std::string& s) { return s.substr(s.find(']')); };
  EXPECT_EQ(after_argv0(via_shim.out), after_argv0(direct.out));
  EXPECT_THAT(via_shim.out, HasSubstr("][-N][2][--wrap=echo 'a b'][][--][x]\n"));
  EXPECT_THAT(via_shim.out, HasSubstr("\nSKYSLURM_TEST_MARK=x y\n"));
}

TEST_F(PassthroughTest, PinnedRealBinDirWins) {
  Command c;
  c.argv = {kShimBin + "/srun", "--version"};
  c.env_set = {{"SKYSLURM_REAL_BIN_DIR", "/nonexistent"}};
  CommandOutput out = Exec(c);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.err, "srun: error: skyslurm: cannot find the real srun: no srun on PATH\n");
}

TEST_F(PassthroughTest, OnlyShimsOnPathIsAClearError) {
  Command c;
  c.argv = {kShimBin + "/sbatch", "--version"};
  c.env_set = {{"PATH", kShimBin}};
  CommandOutput out = Exec(c);
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.err, HasSubstr("cannot find the real sbatch: no sbatch on PATH other than "
                                 "skyslurm's shim"));
}

TEST_F(PassthroughTest, ShimRunUnderItsOwnNameSaysHowToUseIt) {
  CommandOutput out = Exec({.argv = {std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm-shim"}});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.err,
              HasSubstr("run me as sbatch, salloc, srun, squeue, sacct, scontrol or scancel"));
}

}  // namespace
}  // namespace skyslurm::testing
