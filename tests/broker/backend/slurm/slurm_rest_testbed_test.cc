// access: rest against the testbed's gamma: slurmrestd started as the user
// over the SSH connection takes a job exactly as sbatch would (the same
// record in slurmctld, the same environment in the job), and cancels it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <thread>

#include "broker/backend/slurm/slurm_ssh.h"
#include "broker/util/trace.h"
#include "tests/support/testbed.h"
#include "tests/support/translated_script.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;

class SlurmRestTestbedTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    auto targets = LoginTargets(tb_);
    ASSERT_TRUE(targets.contains("gamma"));
    rest_ = std::make_unique<backend::SlurmSshBackend>("gamma", targets.at("gamma"));
    rest_->UseRest(true);
    sbatch_ = std::make_unique<backend::SlurmSshBackend>("gamma", targets.at("gamma"));
  }
  void TearDown() override {
    for (const std::string& id : submitted_) RunOn(tb_, "gamma", {"scancel", id});
  }

  backend::SubmitSpec Spec(std::string sky_id) {
    backend::SubmitSpec s;
    s.sky_id = std::move(sky_id);
    s.first_attempt = true;
    testing::SetScript(
        s.job,
        "#!/bin/bash\n#SBATCH --gres=gpu:A100:1\n#SBATCH -t 5 -o rest-test-%j.out\n"
        "#SBATCH --hold\n"
        "echo \"dir=$SLURM_SUBMIT_DIR host=$SLURM_SUBMIT_HOST foo=$FOO task=$SKYPILOT_TASK_ID "
        "umask=$SLURM_UMASK cwd=$PWD name=$SLURM_JOB_NAME tz=${TZ-unset}\"\n"
        "echo \"exported path=$(printenv PATH) home=$(printenv HOME)\"\n");
    s.job.args = {"--job-name=rest-test", "--mem=100M", "--ntasks=2"};
    s.user_export = "ALL,FOO";
    s.export_values = {{"FOO", "from-the-submitter"}};
    s.export_env = {{"SKYPILOT_TASK_ID", "task-1"}};
    return s;
  }

  std::string MustSubmit(backend::SlurmSshBackend& b, const backend::SubmitSpec& spec) {
    auto key = b.Submit(spec, std::chrono::seconds(30));
    EXPECT_TRUE(key.ok()) << key.status().message();
    if (!key.ok()) return "";
    submitted_.push_back(key->job_id);
    return key->job_id;
  }

  std::map<std::string, std::string> Record(const std::string& id) {
    return SubmissionRecord(tb_, "gamma", id);
  }

  std::string Output(const std::string& id) {
    RunOn(tb_, "gamma", {"scontrol", "release", id});
    EXPECT_EQ(WaitForJobEnd(tb_, "gamma", id), "COMPLETED");
    for (int i = 0; i < 50; ++i) {
      auto out = rest_->pool().Run({.argv = {"cat", "rest-test-" + id + ".out"}});
      if (out.ok() && out->success() && !out->out.empty()) {
        (void)rest_->pool().Run({.argv = {"rm", "-f", "rest-test-" + id + ".out"}});
        return out->out;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "no output for job " << id;
    return "";
  }

  std::unique_ptr<backend::SlurmSshBackend> rest_, sbatch_;
  std::vector<std::string> submitted_;
};

TEST_F(SlurmRestTestbedTest, AJobThroughSlurmrestdIsTheJobSbatchMakes) {
  auto trace = std::make_shared<trace::Trace>("test");
  std::string via_rest;
  {
    trace::Install installed(trace);
    via_rest = MustSubmit(*rest_, Spec("sky-20261201-000000-aaaaaa"));
  }
  const std::string via_sbatch = MustSubmit(*sbatch_, Spec("sky-20261201-000000-bbbbbb"));
  ASSERT_FALSE(via_rest.empty());
  ASSERT_FALSE(via_sbatch.empty());
  // Through slurmrestd: one HTTP request (and one read of the login node's
  // environment, once per backend), no sbatch.
  const std::string rendered = trace->Render();
  EXPECT_THAT(rendered, HasSubstr("rest gamma: POST /slurm/v0.0.38/job/submit"));
  EXPECT_THAT(rendered, ::testing::Not(HasSubstr("exec sbatch")));
  EXPECT_THAT(rendered, ::testing::Not(HasSubstr("through sbatch")));

  auto a = Record(via_rest), b = Record(via_sbatch);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["TresPerNode"], "gres:gpu:A100:1");
  EXPECT_EQ(a["TimeLimit"], "00:05:00");
  EXPECT_EQ(a["JobName"], "rest-test");
  EXPECT_EQ(a["NumTasks"], "2");
  EXPECT_THAT(RunOn(tb_, "gamma", {"squeue", "-h", "-j", via_rest, "-o", "%k %r"}).out,
              HasSubstr("skyslurm:sky-20261201-000000-aaaaaa JobHeldUser"));

  // The same environment in the job, from the same place.
  const std::string out_rest = Output(via_rest), out_sbatch = Output(via_sbatch);
  EXPECT_EQ(out_rest, out_sbatch);
  EXPECT_THAT(out_rest, HasSubstr("dir=/home/skyuser1 "));
  EXPECT_THAT(out_rest, HasSubstr(" foo=from-the-submitter task=task-1 "));
  EXPECT_THAT(out_rest, HasSubstr(" name=rest-test"));
  // Regression: sbatch ran with skyslurm's TZ=UTC, which the job inherited.
  EXPECT_THAT(out_rest, HasSubstr(" tz=unset"));
  // Regression: the login node's environment was read through the agent,
  // whose outputs stop at a NUL, as raw `env -0`: a job through slurmrestd
  // had no PATH or HOME in its environment (bash and dash fall back to
  // their own PATH; Python and the programs it starts did not).
  EXPECT_THAT(out_rest, HasSubstr("exported path=/usr/local/bin:/usr/bin:/bin"));
  EXPECT_THAT(out_rest, HasSubstr(" home=/home/skyuser1\n"));
}

TEST_F(SlurmRestTestbedTest, WhatSlurmrestdCannotTakeGoesThroughSbatch) {
  backend::SubmitSpec spec = Spec("sky-20261201-000000-cccccc");
  spec.job.script_args = {"one", "two"};
  auto trace = std::make_shared<trace::Trace>("test");
  std::string id;
  {
    trace::Install installed(trace);
    id = MustSubmit(*rest_, spec);
  }
  ASSERT_FALSE(id.empty());
  EXPECT_THAT(trace->Render(), HasSubstr("gamma: through sbatch: the script has arguments"));
  EXPECT_EQ(JobState(tb_, "gamma", id), "PENDING");
}

// Not slurmrestd, but the same cluster and the same checks: through the
// agent, a job only gamma can run gets its estimate and its submission in
// one command (one round trip), and is the job a plain submission makes.
TEST_F(SlurmRestTestbedTest, EstimateThenSubmitIsOneCommandAndTheSameJob) {
  backend::SubmitSpec spec = Spec("sky-20261201-000000-ababab");
  auto trace = std::make_shared<trace::Trace>("test");
  backend::EstimatedSubmission both;
  {
    trace::Install installed(trace);
    both = sbatch_->EstimateThenSubmit(spec, std::chrono::seconds(30));
  }
  ASSERT_TRUE(both.key.ok()) << both.key.status().message();
  submitted_.push_back(both.key->job_id);
  ASSERT_TRUE(both.estimate.ok()) << both.estimate.status().message();
  EXPECT_EQ(both.estimate->basis, "sbatch --test-only");
  EXPECT_EQ(both.estimate->partition, "batch");
  EXPECT_GT(both.estimate->start, std::time(nullptr) - 60);
  EXPECT_THAT(trace->Counts(), HasSubstr("1 command through an agent"));

  const std::string plain = MustSubmit(*sbatch_, Spec("sky-20261201-000000-bcbcbc"));
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(Record(both.key->job_id), Record(plain));
  EXPECT_THAT(RunOn(tb_, "gamma", {"squeue", "-h", "-j", both.key->job_id, "-o", "%k"}).out,
              HasSubstr("skyslurm:sky-20261201-000000-ababab"));
  // The estimate's TZ=UTC stays in its own subshell.
  const std::string out = Output(both.key->job_id);
  EXPECT_EQ(out, Output(plain));
  EXPECT_THAT(out, HasSubstr(" tz=unset"));
}

TEST_F(SlurmRestTestbedTest, WithoutAgentsTheScriptsNeverTravelInACommandLine) {
  // A channel per command: the user's login shell (csh, maybe) reads each
  // line, so the estimate and the submission go as two commands, each
  // script on stdin.
  auto targets = LoginTargets(tb_);
  backend::SlurmSshBackend channels("gamma", targets.at("gamma"), {.agents = false});
  backend::SubmitSpec spec = Spec("sky-20261201-000000-efefef");
  auto trace = std::make_shared<trace::Trace>("test");
  backend::EstimatedSubmission both;
  {
    trace::Install installed(trace);
    both = channels.EstimateThenSubmit(spec, std::chrono::seconds(30));
  }
  ASSERT_TRUE(both.key.ok()) << both.key.status().message();
  submitted_.push_back(both.key->job_id);
  EXPECT_TRUE(both.estimate.ok()) << both.estimate.status().message();
  const std::string rendered = trace->Render();
  // (A trace names the program, never the environment's values.)
  EXPECT_THAT(rendered, HasSubstr("ssh gamma: sbatch --test-only"));
  EXPECT_THAT(rendered, ::testing::Not(HasSubstr("TZ=")));
  EXPECT_THAT(rendered, ::testing::Not(HasSubstr("printf")));
  EXPECT_THAT(trace->Counts(), HasSubstr("2 remote commands on new channels"));
}

TEST_F(SlurmRestTestbedTest, EstimateThenSubmitOfAJobSbatchRefusesSaysSbatchsWordsTwice) {
  backend::SubmitSpec spec = Spec("sky-20261201-000000-cdcdcd");
  spec.job.args.push_back("--partition=nosuchpartition");
  spec.job.args.push_back("--job-name=ets-refused");
  auto both = sbatch_->EstimateThenSubmit(spec, std::chrono::seconds(30));
  ASSERT_FALSE(both.estimate.ok());
  EXPECT_THAT(both.estimate.status().message(),
              HasSubstr("sbatch --test-only refused the job: sbatch: error: invalid partition"));
  ASSERT_FALSE(both.key.ok());
  EXPECT_THAT(both.key.status().message(), HasSubstr("gamma: sbatch failed (exit status 1)"));
  EXPECT_EQ(RunOn(tb_, "gamma", {"squeue", "-h", "-t", "all", "-n", "ets-refused", "-o", "%i"}).out,
            "");
}

TEST_F(SlurmRestTestbedTest, ARefusalIsSbatchsOwnAndNothingIsLeftBehind) {
  backend::SubmitSpec spec = Spec("sky-20261201-000000-dddddd");
  spec.job.args.push_back("--partition=nosuchpartition");
  spec.job.args.push_back("--job-name=rest-refused");
  auto key = rest_->Submit(spec, std::chrono::seconds(30));
  ASSERT_FALSE(key.ok());
  EXPECT_THAT(key.status().message(), HasSubstr("Invalid partition name specified"));
  EXPECT_EQ(
      RunOn(tb_, "gamma", {"squeue", "-h", "-t", "all", "-n", "rest-refused", "-o", "%i"}).out, "");
}

TEST_F(SlurmRestTestbedTest, CancelGoesThroughSlurmrestdAndItsRefusalIsSaid) {
  const std::string id = MustSubmit(*rest_, Spec("sky-20261201-000000-eeeeee"));
  ASSERT_FALSE(id.empty());
  Status cancelled = rest_->Cancel(id, false, std::chrono::seconds(10));
  EXPECT_TRUE(cancelled.ok()) << cancelled.message();
  EXPECT_EQ(WaitForJobEnd(tb_, "gamma", id), "CANCELLED");
  Status missing = rest_->Cancel("99999999", false, std::chrono::seconds(10));
  EXPECT_THAT(missing.message(), HasSubstr("gamma: slurmrestd: Invalid job id specified"));
  auto pong = rest_->RestPing(std::chrono::seconds(10));
  ASSERT_TRUE(pong.ok()) << pong.status().message();
  EXPECT_EQ(*pong, "22.05.8 (API v0.0.38)");  // the newest both speak, from /openapi/v3
}

}  // namespace
}  // namespace skyslurm::testing
