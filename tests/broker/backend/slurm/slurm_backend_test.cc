#include "broker/backend/slurm/slurm_backend.h"

#include <gtest/gtest.h>

#include "broker/backend/slurm/slurm_local.h"
#include "broker/job/request.h"

namespace skyslurm::backend {
namespace {

// The job as the translation for alpha makes it (its description file).
translate::TranslatedJob ForAlpha(const SlurmBackend& alpha, std::vector<std::string> args,
                                  const std::string& script = "") {
  job::RequestInput in;
  in.args = std::move(args);
  if (!script.empty()) {
    in.args.push_back("job.sh");
    in.script_text = script;
  }
  auto request = job::ParseRequest(in);
  EXPECT_TRUE(request.ok()) << request.status().message();
  auto d = cluster::ReadDescriptionFile(SKYSLURM_SOURCE_DIR "/tests/data/clusters/alpha.yaml");
  EXPECT_TRUE(d.ok()) << d.status().message();
  static const catalog::AcceleratorCatalog catalog;
  static const config::ClusterSettings settings;
  auto t = alpha.Translate(*request, *d, {"alpha", &catalog, &settings});
  EXPECT_TRUE(t.ok()) << (t.reasons.empty() ? "" : t.reasons.front());
  return t.ok() ? *t.job : translate::TranslatedJob{};
}

// The job just sent, as the next decisions see it before squeue lists it.
// Regression (issue 16): a --wrap job was read with a script operand, which
// sbatch refuses beside --wrap, so it was shown as nothing.
TEST(SlurmBackendTest, AJobJustSentIsShownAsSqueueWillListIt) {
  SlurmLocalBackend alpha("alpha", "", "");
  SubmitSpec spec;
  spec.sky_id = "sky-20261204-120000-abcdef";
  spec.job = ForAlpha(alpha, {"--gpus=2", "-t", "5", "-J", "sweep", "--wrap", "sleep 60"});
  auto wrapped = alpha.AsQueued(spec, {"alpha", "41"});
  ASSERT_TRUE(wrapped.has_value());
  EXPECT_EQ(wrapped->job_id, "41");
  EXPECT_EQ(wrapped->state, "PENDING");
  EXPECT_EQ(wrapped->gpus_per_job, 2);
  EXPECT_EQ(wrapped->time_limit_minutes, 5);
  EXPECT_EQ(wrapped->partition, "");  // the default: the view knows which
  EXPECT_NE(wrapped->comment.find(spec.sky_id), std::string::npos);

  spec.job = ForAlpha(alpha, {"-p", "gpu", "--hold"},
                      "#!/bin/sh\n#SBATCH --gpus-per-node=4\n#SBATCH -N 2\nsrun true\n");
  auto scripted = alpha.AsQueued(spec, {"alpha", "42"});
  ASSERT_TRUE(scripted.has_value());
  EXPECT_EQ(scripted->partition, "gpu");
  EXPECT_EQ(scripted->reason, "JobHeldUser");
  EXPECT_EQ(scripted->nodes, 2);
  EXPECT_EQ(scripted->gpus_per_node, 4);
  EXPECT_EQ(scripted->tasks, 1);

  // A part of a spread array pends as its tasks (regression: counted as
  // one, the next part placed after a crash saw its cluster empty).
  spec.job = ForAlpha(alpha, {"--gpus=1", "--array=16-23,40", "--wrap", "sleep 2"});
  auto array = alpha.AsQueued(spec, {"alpha", "43"});
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->tasks, 9);
}

// Every command of skyslurm's own runs as the real one, whatever is first on
// PATH. Regression (issue 17): skyslurmd started from a shell with the shim
// folder first read alpha's queue through the shim's squeue, which then
// listed the user's routed jobs too: peers' jobs were taken as alpha's.
class RecordingRunner : public CommandRunner {
 public:
  Result<CommandOutput> Run(const Command& command) override {
    commands.push_back(command);
    CommandOutput out;
    out.exit_code = 0;
    return out;
  }
  std::vector<Command> commands;
};

bool SetsDirect(const Command& c) {
  for (const auto& [name, value] : c.env_set) {
    if (name == "SKYSLURM_CLIENT_DIRECT" && value == "1") return true;
  }
  return false;
}

TEST(SlurmBackendTest, ItsClientCommandsAreTheRealOnesBehindAShim) {
  RecordingRunner runner;
  SlurmBackend alpha("alpha", runner, {{"SLURM_CONF", "/etc/alpha.conf"}});
  (void)alpha.Cancel("41", false, std::chrono::seconds(1));
  (void)alpha.Hold("41", std::chrono::seconds(1));
  (void)alpha.Queue(std::chrono::seconds(1));
  (void)alpha.RunClientCommand({"sacct", "-j", "41"}, {{"TZ", "UTC"}}, std::chrono::seconds(1));
  ASSERT_GE(runner.commands.size(), 4u);
  for (const Command& c : runner.commands) {
    EXPECT_TRUE(SetsDirect(c)) << c.argv.front();
  }
  EXPECT_EQ(runner.commands.back().argv, (std::vector<std::string>{"sacct", "-j", "41"}));
}

// Slurm's answers as the testbed gave them once tasks 2-5 of
// "85 --array=0-5%2" were held and cancelled (array_throttle.h).
class ThrottleRunner : public CommandRunner {
 public:
  explicit ThrottleRunner(std::string limit_shown) : limit_shown_(std::move(limit_shown)) {}
  Result<CommandOutput> Run(const Command& command) override {
    commands.push_back(command.argv);
    CommandOutput out;
    if (command.argv.at(1) == "update") {
      out.exit_code = 1;
      out.err = "85_0-1: No error\n85_4-5: Job has already finished\n";
    } else {
      out.exit_code = 0;
      out.out = "JobId=85 ArrayJobId=85 ArrayTaskThrottle=" + limit_shown_ +
                " JobState=CANCELLED Reason=JobHeldAdmin\n"
                "JobId=86 ArrayJobId=85 ArrayTaskId=0 ArrayTaskThrottle=" +
                limit_shown_ + " JobState=RUNNING Reason=None\n";
    }
    return out;
  }
  std::vector<std::vector<std::string>> commands;

 private:
  std::string limit_shown_;
};

// Regression (issue 16, a CI run): a move that took every pending task of a
// spread array's part then set the part's lower "%N"; scontrol refused it
// for the cancelled records though it had limited the running ones, the
// move waited minutes for the tasks to end, and its cancelled tasks were
// forgotten. The live records decide.
TEST(SlurmBackendTest, AThrottleRefusedOnlyForEndedRecordsIsSet) {
  ThrottleRunner set("1");
  SlurmBackend gamma("gamma", set, {});
  EXPECT_TRUE(gamma.SetArrayThrottle("85", 1, std::chrono::seconds(1)).ok());
  ASSERT_EQ(set.commands.size(), 2u);
  EXPECT_EQ(set.commands[1], (std::vector<std::string>{"scontrol", "-o", "show", "job", "85"}));

  ThrottleRunner not_set("2");
  SlurmBackend again("gamma", not_set, {});
  EXPECT_FALSE(again.SetArrayThrottle("85", 1, std::chrono::seconds(1)).ok());
}

}  // namespace
}  // namespace skyslurm::backend
