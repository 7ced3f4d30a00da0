#include "broker/place/submission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/backend/slurm/slurm_backend.h"

namespace skyslurm::place {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;
using ::testing::Pair;

job::Request Parse(std::vector<std::string> args, const std::string& script) {
  job::RequestInput in;
  in.args = std::move(args);
  in.script_text = script;
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

translate::TranslatedJob Job(std::vector<std::string> args) {
  translate::TranslatedJob j;
  j.args = std::move(args);
  j.script = "#!/bin/sh\ntrue\n";
  return j;
}

TEST(SubmissionTest, APeerGetsItsWorkdirTheTagAndTheSubmittersExportValues) {
  ClusterHandle beta;
  beta.name = "beta";
  beta.settings.workdir = "/scratch/alice";
  const std::map<std::string, std::string> env = {{"DATA", "/home/alice/data"}, {"OTHER", "x"}};
  auto request =
      Parse({"--chdir=run1", "--export=DATA,MODE=fast", "--wait", "job.sh"}, "#!/bin/sh\ntrue\n");
  backend::SubmitSpec spec = SpecFor(request, Job({"--chdir=run1", "--wait", "-N1"}), beta,
                                     {.sky_id = "sky-1", .env = &env});
  EXPECT_EQ(spec.sky_id, "sky-1");
  // The job as translated; --wait is the submitter's, which sbatch never
  // gets there, and a managed job is not Slurm's to requeue.
  EXPECT_THAT(spec.job.args, ElementsAre("--chdir=run1", "--wait", "-N1"));
  spec.restartable = false;
  const std::vector<std::string> options = backend::SbatchSubmitOptions(spec);
  EXPECT_THAT(options, Not(Contains("--wait")));
  EXPECT_THAT(options, Contains("--no-requeue"));
  EXPECT_THAT(options, Contains("-N1"));
  EXPECT_EQ(spec.workdir, "/scratch/alice/run1");
  EXPECT_EQ(spec.default_job_name, "job.sh");
  EXPECT_EQ(spec.user_export, "DATA,MODE=fast");
  EXPECT_THAT(spec.export_values, ElementsAre(Pair("DATA", "/home/alice/data")));
  EXPECT_THAT(spec.export_env, Contains(Pair("SKYPILOT_TASK_ID", "sky-1")));
  EXPECT_THAT(spec.export_env, Contains(Pair("SKYSLURM_CLUSTER", "beta")));
  EXPECT_FALSE(spec.environment.has_value());  // a peer's job gets the login node's
  // The job's own list names skyslurm's variables too, bare: their values
  // (a task's secrets among them) are in sbatch's environment, never in
  // its arguments, as are the values of the names the job lists bare.
  EXPECT_THAT(options, Contains("--export=DATA,MODE=fast,SKYPILOT_TASK_ID,SKYSLURM_CLUSTER"));
  EXPECT_THAT(backend::SbatchSubmitEnvironment(spec),
              ElementsAre(Pair("SKYPILOT_TASK_ID", "sky-1"), Pair("SKYSLURM_CLUSTER", "beta"),
                          Pair("DATA", "/home/alice/data")));
}

// Regression (issue 16): every job went out with --export=ALL,SKYPILOT_...,
// and sbatch takes any list for SLURM_GET_USER_ENV=1: slurmd then ran the
// user's login shell (`su -`) for each job and array task before launching
// it (sixteen tasks of a 2 s sweep ended 15 to 32 s after they started on
// alpha) and the job got the login shell's variables. Without a list of
// the job's own, --export is bare ALL and skyslurm's values are in sbatch's
// environment, as a user's own `FOO=1 sbatch` gives them.
TEST(SubmissionTest, SkyslurmsValuesTravelInSbatchsEnvironmentNotInAnExportList) {
  ClusterHandle beta;
  beta.name = "beta";
  for (const std::string given : {"", "--export=ALL", "--export=all"}) {
    std::vector<std::string> args = {"job.sh"};
    if (!given.empty()) args.insert(args.begin(), given);
    auto request = Parse(args, "#!/bin/sh\ntrue\n");
    backend::SubmitSpec spec = SpecFor(request, Job({}), beta, {.sky_id = "sky-1"});
    std::vector<std::string> exports;
    for (const std::string& o : backend::SbatchSubmitOptions(spec)) {
      if (o.starts_with("--export")) exports.push_back(o);
    }
    EXPECT_EQ(exports.size(), 1u) << given;
    EXPECT_TRUE(exports.size() == 1 &&
                (exports[0] == "--export=ALL" || exports[0] == "--export=all"))
        << given << ": " << ::testing::PrintToString(exports);
    EXPECT_THAT(backend::SbatchSubmitEnvironment(spec),
                ElementsAre(Pair("SKYPILOT_TASK_ID", "sky-1"), Pair("SKYSLURM_CLUSTER", "beta")))
        << given;
  }
}

// The job's own absolute --chdir (spelled for the peer) wins over the
// cluster's workdir, and the --export it is submitted with is the translated
// one (paths in its values mapped). Regression: the workdir's --chdir came
// after the job's, and the request's --export replaced the translated one.
TEST(SubmissionTest, APeerKeepsTheJobsOwnAbsoluteChdirAndItsTranslatedExport) {
  ClusterHandle beta;
  beta.name = "beta";
  beta.settings.workdir = "/scratch/alice";
  auto request = Parse({"--chdir=/scratch/a/run", "--export=ALL,D=/scratch/a/d", "job.sh"},
                       "#!/bin/sh\ntrue\n");
  translate::TranslatedJob job =
      Job({"--chdir=/lustre/scratch/a/run", "--export=ALL,D=/lustre/scratch/a/d"});
  job.export_env = "ALL,D=/lustre/scratch/a/d";
  backend::SubmitSpec spec = SpecFor(request, job, beta, {.sky_id = "sky-1"});
  EXPECT_EQ(spec.workdir, "");
  EXPECT_EQ(spec.user_export, "ALL,D=/lustre/scratch/a/d");
  const std::vector<std::string> options = backend::SbatchSubmitOptions(spec);
  EXPECT_THAT(options, Contains("--chdir=/lustre/scratch/a/run"));
  EXPECT_THAT(options, Not(Contains("--chdir=/scratch/alice")));
  bool exported = false;
  for (const auto& o : options) {
    if (o.starts_with("--export=")) {
      EXPECT_NE(o.find("D=/lustre/scratch/a/d"), std::string::npos) << o;
      exported = true;
    }
  }
  EXPECT_TRUE(exported);
}

TEST(SubmissionTest, HomeFromTheDaemonRunsWhereTheUserTypedItWithTheirEnvironment) {
  ClusterHandle alpha;
  alpha.name = "alpha";
  alpha.home = true;
  const std::map<std::string, std::string> env = {{"PATH", "/home/alice/bin:/usr/bin"}};
  auto request = Parse({"job.sh"}, "#!/bin/sh\ntrue\n");
  backend::SubmitSpec daemon = SpecFor(request, Job({}), alpha,
                                       {.sky_id = "sky-1",
                                        .env = &env,
                                        .submit_dir = "/home/alice/run",
                                        .extra_env = {{"SKYSLURM_RESTART_COUNT", "2"}}});
  EXPECT_EQ(daemon.workdir, "/home/alice/run");
  ASSERT_TRUE(daemon.environment.has_value());
  EXPECT_EQ(daemon.environment->at("PATH"), "/home/alice/bin:/usr/bin");
  EXPECT_THAT(daemon.export_env, Contains(Pair("SKYSLURM_RESTART_COUNT", "2")));
  auto relative = Parse({"-D", "sub", "job.sh"}, "#!/bin/sh\ntrue\n");
  EXPECT_EQ(
      SpecFor(relative, Job({}), alpha, {.sky_id = "s", .env = &env, .submit_dir = "/w"}).workdir,
      "/w/sub");
  // The shim submits from the user's own folder and environment: nothing to add.
  backend::SubmitSpec shim = SpecFor(request, Job({}), alpha, {.sky_id = "sky-1", .env = &env});
  EXPECT_EQ(shim.workdir, "");
  EXPECT_FALSE(shim.environment.has_value());
}

}  // namespace
}  // namespace skyslurm::place
