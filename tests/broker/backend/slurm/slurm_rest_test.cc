// What a submission becomes for slurmrestd (v0.0.38), and what its answers
// mean. The answers are slurmrestd 22.05.8's, captured on the testbed.
#include "broker/backend/slurm/slurm_rest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <json/json.h>

#include <memory>

#include "broker/util/base64.h"
#include "tests/support/translated_script.h"

namespace skyslurm::backend {
namespace {

using ::testing::HasSubstr;

LoginFacts Login() {
  LoginFacts l;
  l.hostname = "login1";
  l.home = "/home/u";
  l.umask = "0022";
  l.environment = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}, {"FOO", "login"}};
  return l;
}

SubmitSpec Spec() {
  SubmitSpec s;
  s.sky_id = "sky-20261201-120000-abcdef";
  testing::SetScript(
      s.job,
      "#!/bin/bash\n#SBATCH --gres=gpu:A100:2\n#SBATCH -t 5 -o out-%j.txt\n#SBATCH --hold\n"
      "echo hi\n#SBATCH --ignored-after-the-body=1\n");
  s.job.args = {"-J", "train", "--time=7"};
  return s;
}

Json::Value Parsed(const std::string& body) {
  Json::Value root;
  Json::CharReaderBuilder b;
  std::unique_ptr<Json::CharReader> r(b.newCharReader());
  std::string errors;
  EXPECT_TRUE(r->parse(body.data(), body.data() + body.size(), &root, &errors)) << errors;
  return root;
}

TEST(SlurmRestTest, DirectivesThenTheCommandLineBecomeKeysInSbatchsWords) {
  auto body = RestSubmitBody(Spec(), Login());
  ASSERT_TRUE(body.ok()) << body.status().message();
  Json::Value root = Parsed(*body);
  EXPECT_EQ(root["script"].asString(), Spec().job.script);
  const Json::Value& job = root["job"];
  EXPECT_EQ(job["gres"].asString(), "gpu:A100:2");
  EXPECT_EQ(job["time_limit"].asString(), "7");  // the command line wins, as in sbatch
  EXPECT_EQ(job["standard_output"].asString(), "out-%j.txt");
  EXPECT_TRUE(job["hold"].asBool());
  EXPECT_EQ(job["name"].asString(), "train");
  EXPECT_EQ(job["comment"].asString(), "skyslurm:sky-20261201-120000-abcdef");
  EXPECT_EQ(job["current_working_directory"].asString(), "/home/u");
  EXPECT_FALSE(job.isMember("parsable"));
  const Json::Value& env = job["environment"];
  EXPECT_EQ(env["PATH"].asString(), "/usr/bin:/bin");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"].asString(), "/home/u");
  EXPECT_EQ(env["SLURM_SUBMIT_HOST"].asString(), "login1");
  EXPECT_EQ(env["SLURM_UMASK"].asString(), "0022");
}

TEST(SlurmRestTest, ExportValuesAndTheWorkdirTravel) {
  SubmitSpec s = Spec();
  s.workdir = "/scratch/u";
  s.user_export = "ALL,FOO";
  s.export_env = {{"SKYPILOT_TASK_ID", "t1"}};
  s.export_values = {{"FOO", "submitter"}};
  s.user_comment = "mine";
  auto body = RestSubmitBody(s, Login());
  ASSERT_TRUE(body.ok()) << body.status().message();
  const Json::Value job = Parsed(*body)["job"];
  EXPECT_EQ(job["current_working_directory"].asString(), "/scratch/u");
  EXPECT_EQ(job["comment"].asString(), "mine skyslurm:sky-20261201-120000-abcdef");
  EXPECT_EQ(job["environment"]["FOO"].asString(), "submitter");
  EXPECT_EQ(job["environment"]["SKYPILOT_TASK_ID"].asString(), "t1");
}

// A job whose folder was copied there is submitted from it, as sbatch run
// in it would be: SLURM_SUBMIT_DIR and its working directory name it
// (a relative folder is under the home there).
TEST(SlurmRestTest, AJobsCopiedFolderIsItsSubmitFolder) {
  SubmitSpec s = Spec();
  s.submit_dir = "skyslurm-jobs/sky-1";
  auto body = RestSubmitBody(s, Login());
  ASSERT_TRUE(body.ok()) << body.status().message();
  Json::Value job = Parsed(*body)["job"];
  EXPECT_EQ(job["current_working_directory"].asString(), "/home/u/skyslurm-jobs/sky-1");
  EXPECT_EQ(job["environment"]["SLURM_SUBMIT_DIR"].asString(), "/home/u/skyslurm-jobs/sky-1");
  s.submit_dir = "/gpfs/scratch/u/proj";
  s.workdir = "/gpfs/scratch/u/proj/run";
  job = Parsed(*RestSubmitBody(s, Login()))["job"];
  EXPECT_EQ(job["current_working_directory"].asString(), "/gpfs/scratch/u/proj/run");
  EXPECT_EQ(job["environment"]["SLURM_SUBMIT_DIR"].asString(), "/gpfs/scratch/u/proj");
}

TEST(SlurmRestTest, WhatSlurmrestdCannotTakeGoesThroughSbatchAndSaysWhy) {
  struct Case {
    std::string why;
    SubmitSpec spec;
  };
  std::vector<Case> cases;
  {
    SubmitSpec s = Spec();
    s.job.script_args = {"--epochs", "3"};
    cases.push_back({"the script has arguments", s});
  }
  {
    SubmitSpec s = Spec();
    s.user_export = "NONE";
    cases.push_back({"--export=NONE", s});
  }
  {
    SubmitSpec s = Spec();
    s.job.args.push_back("--container-image=nvcr.io#nvidia/pytorch");
    cases.push_back({"--container-image is a SPANK plugin's option", s});
  }
  {
    SubmitSpec s = Spec();
    s.job.args.push_back("--switches=1");
    cases.push_back({"--switches has no slurmrestd key", s});
  }
  {
    SubmitSpec s = Spec();
    testing::SetScript(s.job, "#!/bin/bash\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -n2\nhostname\n");
    cases.push_back({"a heterogeneous job", s});
  }
  for (const Case& c : cases) {
    auto body = RestSubmitBody(c.spec, Login());
    ASSERT_FALSE(body.ok()) << c.why;
    EXPECT_EQ(body.status().code(), StatusCode::kFailedPrecondition) << c.why;
    EXPECT_THAT(body.status().message(), HasSubstr(c.why));
  }
  LoginFacts login = Login();
  login.environment["SBATCH_PARTITION"] = "debug";
  auto body = RestSubmitBody(Spec(), login);
  ASSERT_FALSE(body.ok());
  EXPECT_THAT(body.status().message(), HasSubstr("SBATCH_PARTITION is set on the login node"));
}

TEST(SlurmRestTest, TheJobIdComesWithErrorsThatAreNotFailures) {
  ssh::HttpAnswer held{200, R"({"meta":{},"errors":[{"error_code":2042,
      "error":"Job is in held state, pending scheduler release"}],"job_id":2952,"step_id":"BATCH",
      "job_submit_user_msg":""})"};
  auto id = RestSubmittedJobId(held);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(*id, "2952");

  ssh::HttpAnswer refused{500, R"({"meta":{},"errors":[{"error_code":2072,
      "error":"Invalid generic resource (gres) specification"}]})"};
  id = RestSubmittedJobId(refused);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().message(),
            "slurmrestd refused the job: Invalid generic resource (gres) specification (2072)");
  EXPECT_FALSE(RestSubmittedJobId({502, "<html>proxy</html>"}).ok());
}

TEST(SlurmRestTest, AnAnswerIsOkOnlyWithoutErrors) {
  EXPECT_TRUE(RestAnswerOk({200, R"({"meta":{},"errors":[]})"}).ok());
  Status s = RestAnswerOk({500, R"({"errors":[{"error_code":2017,"error":"Invalid job id specified",
      "description":"unable to kill JobId=99"}]})"});
  EXPECT_EQ(s.message(), "slurmrestd: Invalid job id specified: unable to kill JobId=99 (2017)");
}

TEST(SlurmRestTest, ThePingNamesSlurmsRelease) {
  auto release = RestRelease({200, R"({"meta":{"plugin":{"type":"openapi/v0.0.38"},
      "Slurm":{"version":{"major":22,"micro":8,"minor":5},"release":"22.05.8"}},"errors":[],
      "pings":[{"hostname":"vm","ping":"UP","status":0,"mode":"primary"}]})"});
  ASSERT_TRUE(release.ok()) << release.status().message();
  EXPECT_EQ(*release, "22.05.8");
  EXPECT_FALSE(RestRelease({200, R"({"meta":{},"errors":[]})"}).ok());
  EXPECT_FALSE(RestRelease({500, R"({"errors":[{"error":"down","error_code":1}]})"}).ok());
}

// What a slurmrestd offers, from its /openapi/v3 (paths as 22.05 and 24.11
// list them, escaped slashes and all), and the newest version skyslurm
// speaks of those: 22.05's v0.0.38; none of 24.11's v0.0.40 to v0.0.42.
TEST(SlurmRestTest, TheApiIsTheNewestBothSpeak) {
  auto old = OfferedRestVersions(
      R"({"paths":{"\/slurm\/v0.0.36\/ping":{},"\/slurm\/v0.0.38\/job\/submit":{},)"
      R"("\/slurm\/v0.0.37\/ping":{},"\/slurmdb\/v0.0.38\/jobs":{},"\/openapi\/v3":{}}})");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(*old, (std::vector<std::string>{"v0.0.36", "v0.0.37", "v0.0.38"}));
  EXPECT_EQ(*ChooseRestApi(*old), "/slurm/v0.0.38");
  auto later = OfferedRestVersions(
      R"({"paths":{"/slurm/v0.0.42/job/submit":{},"/slurm/v0.0.40/ping/":{},"/slurm/v0.0.41/jobs/":{}}})");
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(*later, (std::vector<std::string>{"v0.0.40", "v0.0.41", "v0.0.42"}));
  EXPECT_EQ(ChooseRestApi(*later).status().message(),
            "slurmrestd offers OpenAPI v0.0.40, v0.0.41, v0.0.42, none that skyslurm speaks "
            "(v0.0.38): access: rest cannot submit here");
  EXPECT_EQ(ChooseRestApi(*later).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(OfferedRestVersions("not json").ok());
  EXPECT_FALSE(OfferedRestVersions(R"({"paths":[]})").ok());
  // 24.11's ping names its release under meta.slurm.
  EXPECT_EQ(*RestRelease({200, R"({"meta":{"slurm":{"release":"24.11.5"}},"errors":[]})"}),
            "24.11.5");
}

// The environment comes base64-encoded: an agent's output stops at its
// first NUL, and raw `env -0` gave every job through slurmrestd the login
// node's first variable alone (no PATH, no HOME: Snakemake's jobs on gamma
// failed in Python, "'list' object has no attribute 'split'").
TEST(SlurmRestTest, LoginFactsAreReadFromOneCommand) {
  std::string out = "login1\n0027\n/home/u\n";
  out += Base64Encode(std::string("PATH=/bin") + '\0' + "MULTI=a\nb" + '\0' + "EMPTY=" + '\0');
  auto facts = ParseLoginFacts(out);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->hostname, "login1");
  EXPECT_EQ(facts->umask, "0027");
  EXPECT_EQ(facts->home, "/home/u");
  EXPECT_EQ(facts->environment.at("MULTI"), "a\nb");
  EXPECT_EQ(facts->environment.at("EMPTY"), "");
  EXPECT_EQ(facts->environment.at("PATH"), "/bin");
  EXPECT_EQ(facts->environment.size(), 3u);
  EXPECT_FALSE(ParseLoginFacts("login1\n").ok());
  // What the agent returned of raw env -0: refused, not read as one variable.
  EXPECT_FALSE(ParseLoginFacts(std::string("login1\n0027\n/home/u\nPATH=/bin")).ok());
}

}  // namespace
}  // namespace skyslurm::backend
