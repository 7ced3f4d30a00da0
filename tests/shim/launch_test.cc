// Issue 19: SkyPilot tasks in the shapes its documentation shows
// (tests/data/tasks) run unchanged with `skyslurm launch` on the testbed:
// they land where they start first, run their setup then their run on
// every node, and their logs show the ranks; a bad task submits nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <regex>

#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSkyslurm = std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm";

class LaunchTest : public RouteTest {
 protected:
  void SetUp() override {
    RouteTest::SetUp();
    if (HasFatalFailure()) return;
    // The tasks and their workdir, as a user has them.
    fs::copy(fs::path(SKYSLURM_SOURCE_DIR) / "tests/data/tasks", tmp_.File("tasks"),
             fs::copy_options::recursive);
  }
  void TearDown() override {
    for (const auto& id : launched_) Typed({kSkyslurm, "cancel", id});
    RouteTest::TearDown();
  }

  // skyslurm launch ARGS in the tasks' folder; the sky id it printed kept
  // (cancelled at the end) and returned with the cluster.
  CommandOutput Launch(std::vector<std::string> args, std::vector<std::string> wrapper = {},
                       std::vector<std::pair<std::string, std::string>> env = {}) {
    std::vector<std::string> argv = {"sh", "-c", "cd \"$0\" && exec \"$@\"", tmp_.File("tasks")};
    argv.insert(argv.end(), wrapper.begin(), wrapper.end());
    argv.insert(argv.end(), {kSkyslurm, "launch"});
    argv.insert(argv.end(), args.begin(), args.end());
    CommandOutput out = Typed(argv, env);
    std::smatch m;
    if (std::regex_search(out.out, m, std::regex("(sky-[0-9a-f-]+) on (\\S+) \\(job [0-9]+; "))) {
      launched_.push_back(m[1]);
      cluster_ = m[2];
    }
    return out;
  }

  std::vector<std::string> launched_;
  std::string cluster_;
};

TEST_F(LaunchTest, AFineTuningTaskRunsSetupThenRunWhereItStartsFirst) {
  FillAlpha();  // alpha's H100s busy: beta starts it first
  CommandOutput out = Launch({"finetune.yaml", "--env", "MODEL=big-llama"});
  EXPECT_EQ(out.exit_code, 0) << out.err << out.out;
  EXPECT_EQ(cluster_, "beta") << out.out << out.err;
  // Setup, then run, on its node, with the command line's value and the
  // workdir's file (copied to beta).
  EXPECT_THAT(out.out, ContainsRegex("\\(head, rank=0\\) setup: installing for big-llama\n"
                                     "(.*\n)*\\(head, rank=0\\) train: big-llama for 2 epochs, "
                                     "rank 0 of 1, 1 GPU\\(s\\)\n"
                                     "\\(head, rank=0\\) train: data says ready\n"))
      << out.out;
  EXPECT_THAT(out.out, ContainsRegex(": COMPLETED\n$"));
  EXPECT_THAT(out.err, HasSubstr("following its logs"));
  // Its managed job is skyslurmd's (the store the dry runs below never make).
  EXPECT_TRUE(fs::exists(home_ + "/.local/state/skyslurm/skyslurmd.db"));
}

// A secret reaches the job's environment, and never its script, skyslurmd's
// store or its log in clear.
TEST_F(LaunchTest, ASecretReachesTheJobAndNeverTheStoreInClear) {
  const std::string secret = "hf_test_5ecret_value_19";
  std::ofstream(tmp_.File("tasks/secret.yaml"))
      << "name: with-secret\nsecrets:\n  HF_TOKEN:\nrun: |\n"
         "  echo \"token sha: $(printf %s \"$HF_TOKEN\" | sha256sum | cut -c1-16)\"\n";
  CommandOutput out =
      Launch({"secret.yaml", "--infra", "slurm/beta", "--secret", "HF_TOKEN=" + secret});
  EXPECT_EQ(out.exit_code, 0) << out.err << out.out;
  const std::string sha =
      Exec({.argv = {"sh", "-c", "printf %s \"$0\" | sha256sum | cut -c1-16", secret}}).out;
  EXPECT_THAT(out.out, HasSubstr("(head, rank=0) token sha: " + sha)) << out.out;
  EXPECT_THAT(out.out + out.err, Not(HasSubstr(secret)));
  // Nothing of the user's state holds it: the store (and its journal), the log.
  CommandOutput found = Exec({.argv = {"grep", "-rl", secret, home_ + "/.local/state/skyslurm"}});
  EXPECT_EQ(found.out, "") << "the secret is in clear in " << found.out;
  // ... which keeps the job's input with its value sealed.
  EXPECT_NE(
      Exec({.argv = {"grep", "-rl", "skyslurm-sealed:v1:", home_ + "/.local/state/skyslurm"}}).out,
      "");
  // A secret the task declares and the command line does not give: nothing submitted.
  CommandOutput missing = Launch({"secret.yaml"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("secret.yaml:3: secrets.HF_TOKEN has no value: give it with "
                                     "--secret HF_TOKEN=..."));
}

// A single candidate gets its estimate and its submission in one round
// trip to the login node. Every user of a shared login node can read any
// process's arguments: sampled with `ps -eo args` there while such
// submissions are made, none shows the secret or a line of the script, and
// neither does the submission's trace.
TEST_F(LaunchTest, NeitherTheSecretNorTheScriptIsInAnyProcesssArgumentsOnTheLoginNode) {
  const std::string secret = "hf_arg_5ecret_value_23";
  std::ofstream(tmp_.File("tasks/quiet.yaml"))
      << "name: quiet\nsecrets:\n  HF_TOKEN:\nrun: |\n"
         "  # distinctive-comment-of-the-script\n"
         "  echo \"length ${#HF_TOKEN}\"\n";
  // The patterns match the secret and the line, but not themselves (so the
  // sampler's own grep is never a finding); "sbatc[h]" shows that the
  // samples did see submissions being made.
  const std::string sampler =
      "end=$(( $(date +%s) + 40 )); rm -f /tmp/skyslurm-argv-stop; "
      "while [ $(date +%s) -lt $end ] && [ ! -e /tmp/skyslurm-argv-stop ]; do "
      "ps -eo args | grep -E '5ecre[t]|distinctive-[c]omment|sbatc[h]'; done | sort -u";
  std::future<CommandOutput> sampled = std::async(std::launch::async, [&] {
    return SshAsUser(tb_, "beta", sampler, std::chrono::seconds(60));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int i = 0; i < 3; ++i) {
    // (--secret NAME: its value from here, never in the command's own arguments.)
    CommandOutput out = Launch(
        {"quiet.yaml", "--infra", "slurm/beta/h100-cluster", "--secret", "HF_TOKEN", "--detach-run"},
        {}, {{"HF_TOKEN", secret}});
    EXPECT_EQ(out.exit_code, 0) << out.err << out.out;
    EXPECT_EQ(cluster_, "beta");
  }
  // And sbatch's: a value the job's --export takes from here.
  const std::string job = Script("quiet.sh",
                                 "#!/bin/bash\n#SBATCH -p h100-cluster -t 1 -o /dev/null\n"
                                 "# distinctive-comment-of-the-script\ntrue\n");
  const CommandOutput traced =
      Typed({"sbatch", "--sky-infra=beta", "--export=HF_TOKEN", job},
            {{"HF_TOKEN", secret}, {"SKYSLURM_TRACE", "1"}});
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  Submitted(traced);
  SshAsUser(tb_, "beta", "touch /tmp/skyslurm-argv-stop");
  const CommandOutput samples = sampled.get();
  EXPECT_THAT(samples.out, HasSubstr("sbatch")) << "the samples saw no submission: " << samples.err;
  EXPECT_THAT(samples.out, Not(HasSubstr("5ecret"))) << samples.out;
  EXPECT_THAT(samples.out, Not(HasSubstr("distinctive-comment"))) << samples.out;
  // The estimate and the submission went as one script.
  EXPECT_THAT(traced.err, HasSubstr("agent beta: a script")) << traced.err;
  EXPECT_THAT(traced.out + traced.err, Not(HasSubstr(secret)));
  // Nor the user's state: skyslurmd keeps the submitter's environment (the
  // value sbatch's --export took from it too) sealed, never in clear.
  EXPECT_EQ(Exec({.argv = {"grep", "-rl", secret, home_ + "/.local/state/skyslurm"}}).out, "");
}

TEST_F(LaunchTest, TwoNodesMeetAtTheHeadAndTheLogsShowBothRanks) {
  FillAlpha();  // beta starts it first
  CommandOutput out = Launch({"multinode.yaml"});
  EXPECT_EQ(out.exit_code, 0) << out.err << out.out;
  EXPECT_EQ(cluster_, "beta") << out.err;
  // Setup on both nodes before the run; the head's lines first.
  EXPECT_THAT(out.out, ContainsRegex("\\(head, rank=0\\) node 0 ready\n"
                                     "\\(worker1, rank=1\\) node 1 ready\n"
                                     "\\(head, rank=0\\) rank 0 of 2: met at [0-9.]+:[0-9]+, "
                                     "ranks \\[0, 1\\]\n"
                                     "\\(worker1, rank=1\\) rank 1 of 2: met at [0-9.]+:[0-9]+, "
                                     "ranks \\[0, 1\\]\n"))
      << out.out;
}

// infra: k8s and an image: a pod per node on kappa, each running the task.
TEST_F(LaunchTest, AKubernetesTaskRunsInItsImageOnEveryPod) {
  CommandOutput out = Launch({"kubernetes.yaml"});
  EXPECT_EQ(out.exit_code, 0) << out.err << out.out;
  EXPECT_EQ(cluster_, "kappa") << out.err;
  EXPECT_THAT(out.out, ContainsRegex("\\(head, rank=0\\) rank 0 of 2 on \\S+\n"));
  EXPECT_THAT(out.out, ContainsRegex("\\(worker1, rank=1\\) rank 1 of 2 on \\S+\n"));
}

TEST_F(LaunchTest, AcceleratorAlternativesGoWhereEitherStartsFirst) {
  FillAlpha();  // H100:8 would wait for alpha (or boot delta); A100:8 starts on gamma now
  CommandOutput out = Launch({"alternatives.yaml"});
  EXPECT_EQ(out.exit_code, 0) << out.err << out.out;
  EXPECT_EQ(cluster_, "gamma") << out.err;
  EXPECT_THAT(out.err, HasSubstr("skyslurm launch: A100:8 starts first (gamma); H100:8: "));
  EXPECT_THAT(out.out, HasSubstr("(head, rank=0) got 8 GPUs on "));
}

TEST_F(LaunchTest, DryRunShowsEachAlternativeOnEachClusterAndSubmitsNothing) {
  CommandOutput out = Launch({"--dryrun", "alternatives.yaml"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("=== H100:8: the batch script ===\n#!/bin/bash\n"));
  EXPECT_THAT(out.out, HasSubstr("#SBATCH --gpus-per-node=A100:8\n"));
  EXPECT_THAT(out.out, HasSubstr("=== A100:8: on each cluster ===\n"));
  EXPECT_THAT(out.out, HasSubstr("gamma: can run it"));
  EXPECT_THAT(out.out, HasSubstr("gamma: cannot run it"));  // for H100:8
  EXPECT_TRUE(launched_.empty());
  // skyslurm explain --yaml shows the same.
  CommandOutput explained = Typed({"sh", "-c", "cd \"$0\" && exec \"$@\"", tmp_.File("tasks"),
                                   kSkyslurm, "explain", "--yaml", "alternatives.yaml"});
  EXPECT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_THAT(explained.out, HasSubstr("=== A100:8: on each cluster ===\n"));
  // No daemon was needed, none was started: nothing was submitted.
  EXPECT_FALSE(fs::exists(home_ + "/.local/state/skyslurm/skyslurmd.db"));
}

TEST_F(LaunchTest, ABadTaskSaysItsLineAndSubmitsNothing) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name: x\nresources:\n  acelerators: H100:1\nrun: echo\n",
       "bad.yaml:3: unknown field 'acelerators' in resources (did you mean 'accelerators'?)"},
      {"resources:\n  accelerators: H1000:8\nrun: echo\n",
       "bad.yaml:2: resources.accelerators: 'H1000' is not a GPU skyslurm knows (did you mean "
       "'H100'?)"},
      {"file_mounts:\n  /data: s3://bucket/data\nrun: echo\n",
       "bad.yaml:2: file_mounts./data: 's3://bucket/data' is an object store"},
      {"run: echo\nservice:\n  replicas: 2\n", "bad.yaml:2: service: not honoured by skyslurm"},
      {"run: echo\nresources:\n  infra: slurm/betta\n",
       "bad.yaml:3: resources.infra: slurm/betta: no Slurm cluster named betta"},
  };
  for (const auto& [yaml, message] : cases) {
    std::ofstream(tmp_.File("tasks/bad.yaml")) << yaml;
    CommandOutput out = Launch({"bad.yaml"});
    EXPECT_EQ(out.exit_code, 2) << yaml;
    EXPECT_THAT(out.err, HasSubstr("skyslurm launch: " + message)) << yaml;
    EXPECT_EQ(out.out, "");
  }
  EXPECT_TRUE(launched_.empty());
  EXPECT_FALSE(fs::exists(home_ + "/.local/state/skyslurm/skyslurmd.db"));
}

TEST_F(LaunchTest, AnExportedScriptLaunchesAsTheSameRequest) {
  CommandOutput exported = Typed({"sh", "-c", "cd \"$0\" && exec \"$@\"", tmp_.File("tasks/sbatch"),
                                  kSkyslurm, "export", "single_gpu.sh", "-o", "single_gpu.yaml"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.err, HasSubstr("skyslurm export: not carried over: --time=30"));
  CommandOutput dry = Typed({"sh", "-c", "cd \"$0\" && exec \"$@\"", tmp_.File("tasks/sbatch"),
                             kSkyslurm, "launch", "--dryrun", "single_gpu.yaml"});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("#SBATCH --job-name=finetune-small\n#SBATCH --nodes=1\n"
                                 "#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=a100:1\n"
                                 "#SBATCH --cpus-per-task=8\n#SBATCH --mem=32G\n"));
  EXPECT_THAT(dry.out, HasSubstr("python train.py --epochs 3\n"));
  EXPECT_THAT(dry.out, HasSubstr("gamma: can run it"));
}

TEST_F(LaunchTest, CtrlCStopsFollowingAndTheJobGoesOn) {
  std::ofstream(tmp_.File("tasks/long.yaml")) << "name: long\nrun: |\n  echo started\n  sleep 60\n";
  // --detach-run: submitted, its line printed, nothing followed.
  CommandOutput detached = Launch({"-d", "long.yaml", "--infra", "slurm/beta"});
  EXPECT_EQ(detached.exit_code, 0) << detached.err;
  EXPECT_THAT(detached.out, ContainsRegex("^sky-[0-9a-f-]+ on beta \\(job [0-9]+; no GPU\\)\n$"));
  EXPECT_THAT(detached.err, Not(HasSubstr("following")));
  ASSERT_EQ(launched_.size(), 1u);
  Typed({kSkyslurm, "cancel", launched_[0]});
  launched_.clear();
  // SIGINT, as a terminal's Ctrl-C, while it follows the logs.
  CommandOutput out = Launch({"long.yaml", "--infra", "slurm/beta"},
                             {"timeout", "--preserve-status", "-s", "INT", "15"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.err, HasSubstr("skyslurm launch: stopped following; the job goes on"));
  ASSERT_EQ(launched_.size(), 1u) << out.out << out.err;
  CommandOutput status = Typed({kSkyslurm, "status", launched_[0]});
  EXPECT_THAT(status.out, ContainsRegex(launched_[0] + "  (RUNNING|PENDING) on beta:"));
}

}  // namespace
}  // namespace skyslurm::testing
