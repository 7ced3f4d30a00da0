#include "broker/daemon/slurm_front/slurm_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <json/json.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace skyslurm::daemon {
namespace {

using ::testing::HasSubstr;

const IdMap kBeta = {{"77", 805306445}, {"78", 805306446}};
const Unsettled kHeld = {"77"};

Json::Value Parse(const std::string& text) {
  Json::Value v;
  Json::CharReaderBuilder b;
  std::string why;
  const std::unique_ptr<Json::CharReader> r(b.newCharReader());
  EXPECT_TRUE(r->parse(text.data(), text.data() + text.size(), &v, &why)) << why << text;
  return v;
}

// squeue --json as 22.05 prints it (the fields read here; the rest is kept).
TEST(SlurmJsonTest, SqueueDocumentsMergeWithTheGlobalIds) {
  const std::string home = R"({"meta":{"Slurm":{"release":"22.05.8"}},"errors":[],"jobs":[)"
                           R"({"job_id":5,"array_job_id":0,"job_state":"RUNNING","name":"mine"}]})";
  const std::string beta =
      R"({"meta":{"Slurm":{"release":"22.05.8"}},"errors":[],"jobs":[)"
      R"({"job_id":77,"array_job_id":0,"het_job_id":0,"job_state":"COMPLETED","name":"wrap"},)"
      R"({"job_id":80,"array_job_id":78,"array_task_id":2,"job_state":"COMPLETED"}]})";
  auto merged = MergeJobsJson({{home, nullptr, nullptr}, {beta, &kBeta, &kHeld}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Json::Value doc = Parse(*merged);
  EXPECT_EQ(doc["meta"]["Slurm"]["release"].asString(), "22.05.8");
  ASSERT_EQ(doc["jobs"].size(), 3u);
  EXPECT_EQ(doc["jobs"][0]["job_id"].asUInt64(), 5u);
  EXPECT_EQ(doc["jobs"][0]["job_state"].asString(), "RUNNING");
  EXPECT_EQ(doc["jobs"][1]["job_id"].asUInt64(), 805306445u);
  EXPECT_EQ(doc["jobs"][1]["name"].asString(), "wrap");
  // Not yet seen ended by skyslurmd: still finishing.
  EXPECT_EQ(doc["jobs"][1]["job_state"].asString(), "COMPLETING");
  // An array's task: its array's id mapped, its own state as it is.
  EXPECT_EQ(doc["jobs"][2]["array_job_id"].asUInt64(), 805306446u);
  EXPECT_EQ(doc["jobs"][2]["job_state"].asString(), "COMPLETED");
  EXPECT_TRUE(doc["errors"].isArray());
}

TEST(SlurmJsonTest, SacctDocumentsMapStepsAndHoldTheCurrentState) {
  const std::string beta =
      R"({"meta":{},"errors":[],"warnings":[],"jobs":[{"job_id":77,"array":{"job_id":0},)"
      R"("het":{"job_id":0},"state":{"current":"FAILED","reason":"None"},)"
      R"("exit_code":{"return_code":3},)"
      R"("steps":[{"step":{"job_id":77,"id":"77.batch","name":"batch"},"state":"FAILED"}]}]})";
  auto merged = MergeJobsJson({{beta, &kBeta, &kHeld}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Json::Value doc = Parse(*merged);
  const Json::Value& job = doc["jobs"][0];
  EXPECT_EQ(job["job_id"].asUInt64(), 805306445u);
  EXPECT_EQ(job["state"]["current"].asString(), "COMPLETING");
  EXPECT_EQ(job["exit_code"]["return_code"].asInt(), 3);
  EXPECT_EQ(job["steps"][0]["step"]["id"].asString(), "805306445.batch");
  EXPECT_EQ(job["steps"][0]["step"]["job_id"].asUInt64(), 805306445u);
  EXPECT_EQ(job["steps"][0]["state"].asString(), "FAILED");  // a step's own
  EXPECT_TRUE(doc["warnings"].isArray());
  // Settled: the cluster's own state; later versions' lists of states too.
  const std::string later =
      R"({"jobs":[{"job_id":77,"state":{"current":["COMPLETED"]}}],"errors":[]})";
  EXPECT_EQ(
      Parse(*MergeJobsJson({{later, &kBeta, &kHeld}}))["jobs"][0]["state"]["current"][0].asString(),
      "COMPLETING");
  const Unsettled none;
  EXPECT_EQ(
      Parse(*MergeJobsJson({{later, &kBeta, &none}}))["jobs"][0]["state"]["current"][0].asString(),
      "COMPLETED");
}

std::string Fixture(const std::string& name) {
  std::string path = SKYSLURM_SOURCE_DIR;
  path.append("/tests/data/clusters/").append(name);
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A 22.05 home asks squeue --json; epsilon (24.11) answers in data_parser
// v0.0.42's form, captured there: its records come back in 22.05's form,
// with the global ids (an array's id inside its number object too).
TEST(SlurmJsonTest, A2411DocumentIsGivenInTheCallers2205Form) {
  const std::string home = R"({"meta":{"plugin":{"type":"openapi/v0.0.38"},)"
                           R"("Slurm":{"release":"22.05.8"}},"errors":[],"jobs":[]})";
  const IdMap epsilon = {{"59", 3959423035}, {"60", 3959423036}, {"61", 3959423037}};
  const Unsettled none;
  auto merged =
      MergeJobsJson({{home, nullptr, nullptr}, {Fixture("epsilon.squeue.json"), &epsilon, &none}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Json::Value doc = Parse(*merged);
  EXPECT_EQ(doc["meta"]["Slurm"]["release"].asString(), "22.05.8");
  ASSERT_EQ(doc["jobs"].size(), 4u);
  const Json::Value& done = doc["jobs"][0];
  EXPECT_EQ(done["job_id"].asUInt64(), 3959423035u);
  EXPECT_EQ(done["job_state"].asString(), "COMPLETED");
  EXPECT_TRUE(done["start_time"].isIntegral());
  EXPECT_EQ(done["time_limit"].asInt(), 10);
  EXPECT_EQ(done["node_count"].asInt(), 1);
  EXPECT_EQ(done["exit_code"].asInt(), 0);
  EXPECT_TRUE(done["array_task_id"].isNull());  // not set: null, as 22.05 said
  const Json::Value& task = doc["jobs"][1];
  EXPECT_EQ(task["array_job_id"].asUInt64(), 3959423036u);
  EXPECT_EQ(task["array_task_id"].asInt(), 0);
  EXPECT_EQ(doc["jobs"][2]["job_state"].asString(), "PENDING");

  // sacct: states and statuses a word, limits numbers.
  merged =
      MergeJobsJson({{home, nullptr, nullptr}, {Fixture("epsilon.sacct.json"), &epsilon, &none}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Json::Value acct = Parse(*merged);
  ASSERT_EQ(acct["jobs"].size(), 3u);
  EXPECT_EQ(acct["jobs"][0]["state"]["current"].asString(), "COMPLETED");
  EXPECT_EQ(acct["jobs"][0]["exit_code"]["status"].asString(), "SUCCESS");
  EXPECT_EQ(acct["jobs"][0]["exit_code"]["return_code"].asInt(), 0);
  EXPECT_EQ(acct["jobs"][0]["time"]["limit"].asInt(), 10);
  EXPECT_EQ(acct["jobs"][1]["array"]["job_id"].asUInt64(), 3959423036u);

  // A 24.11 caller gets 24.11's form, its ids mapped all the same.
  auto later = MergeJobsJson({{Fixture("epsilon.squeue.json"), &epsilon, &none}});
  const Json::Value own = Parse(*later);
  EXPECT_TRUE(own["jobs"][0]["job_state"].isArray());
  EXPECT_EQ(own["jobs"][1]["array_job_id"]["number"].asUInt64(), 3959423036u);
}

// What a cluster hands in is never trusted to have the shapes it should:
// these once threw (jsoncpp) where a 22.05 home read a later document.
TEST(SlurmJsonTest, OddShapesInALaterDocumentAreNoCrash) {
  const std::string home = R"({"meta":{"Slurm":{"release":"22.05.8"}},"errors":[],"jobs":[]})";
  const IdMap ids = {{"5", 805306445}};
  const Unsettled none;
  for (
      const char* job :
      {R"({"job_id":5,"job_state":["X"],"time_limit":{"set":"x","infinite":1,"number":3}})",
       R"({"job_id":5,"job_state":[],"exit_code":{"return_code":4294967295,"signal":"KILL"}})",
       R"({"job_id":5,"job_state":"R","exit_code":{"return_code":{"set":true,"infinite":false,"number":-3}}})",
       R"({"job_id":{"set":true,"infinite":false,"number":-5},"steps":[1,{"state":5}]})",
       R"({"job_id":5,"array_job_id":{"set":true,"infinite":false,"number":-1},"state":7})",
       R"(17)"}) {
    const std::string later =
        std::string(R"({"meta":{"slurm":{"release":"24.11.5"}},"errors":[],"jobs":[)") + job + "]}";
    auto merged = MergeJobsJson({{home, nullptr, nullptr}, {later, &ids, &none}});
    EXPECT_TRUE(merged.ok()) << job << ": " << merged.status().message();
  }
  EXPECT_TRUE(MergeJobsJson({{R"({"meta":5,"jobs":[]})", nullptr, nullptr},
                             {R"({"meta":{"slurm":1},"jobs":[{"job_id":1}]})", &ids, &none}})
                  .ok());
}

TEST(SlurmJsonTest, ErrorsOfEveryClusterAreKeptAndNonJsonIsNamed) {
  auto merged = MergeJobsJson({{R"({"errors":[{"error":"a"}],"jobs":[]})", nullptr, nullptr},
                               {"", &kBeta, nullptr},  // a cluster that printed nothing
                               {R"({"errors":[{"error":"b"}],"jobs":[]})", &kBeta, nullptr}});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Json::Value doc = Parse(*merged);
  ASSERT_EQ(doc["errors"].size(), 2u);
  EXPECT_EQ(doc["errors"][1]["error"].asString(), "b");
  EXPECT_EQ(doc["jobs"].size(), 0u);
  auto bad = MergeJobsJson({{"{}", nullptr, nullptr}, {"squeue: error: x", &kBeta, nullptr}});
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("document 2 is not a JSON object"));
  EXPECT_EQ(*MergeJobsJson({}), "");
}

}  // namespace
}  // namespace skyslurm::daemon
