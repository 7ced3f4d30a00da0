// What the Slurm backend reads from Slurm's own output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "broker/backend/backend.h"
#include "broker/backend/slurm/slurm_backend.h"
#include "broker/backend/slurm/squeue.h"
#include "broker/cluster/queue.h"

namespace skyslurm::backend {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

TEST(TestOnlyTest, ReadsSlurmsAnswer) {
  auto e = ParseTestOnly(
      "sbatch: Job 64 to start at 2026-11-30T04:39:25 using 1 processors on nodes gamma-n1 in "
      "partition batch\n");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->start, 1796013565);  // 2026-11-30T04:39:25Z
  EXPECT_EQ(e->nodes, "gamma-n1");
  EXPECT_EQ(e->partition, "batch");
  EXPECT_THAT(ParseTestOnly("sbatch: error: Batch job submission failed: Invalid account")
                  .status()
                  .message(),
              HasSubstr("gave no start time"));
}

TEST(SkyIdTest, FormatAndComment) {
  const std::string id = NewSkyId(1796013565);
  EXPECT_THAT(id, MatchesRegex("sky-20261130-043925-[0-9a-f]{12}"));
  EXPECT_NE(NewSkyId(1796013565), id);  // random part
  // A burst within one second draws no id twice (skyslurmd takes a known id
  // as a retry of its job: with 24 random bits the load test once saw two
  // of 1,000 submissions become one job).
  std::set<std::string> drawn;
  for (int i = 0; i < 20'000; ++i) drawn.insert(NewSkyId(1796013565));
  EXPECT_EQ(drawn.size(), 20'000u);  // 24 bits: a repeat all but surely
  EXPECT_EQ(SkyTag(id), "skyslurm:" + id);
  EXPECT_EQ(SkyIdInComment("my note skyslurm:" + id), id);
  EXPECT_EQ(SkyIdInComment("skyslurm:" + id), id);
  EXPECT_EQ(SkyIdInComment("nothing here"), std::nullopt);
}

TEST(QueueTest, RealSqueueJson) {
  const std::string json = R"({"meta":{},"errors":[],"jobs":[
    {"job_id":62,"job_state":"RUNNING","partition":"batch","tres_per_node":"gres:gpu:A100:8",
     "tres_per_job":"","node_count":3,"start_time":1796013145,"end_time":1796013445,"time_limit":5,
     "comment":"","user_name":"root","state_reason":"None","nodes":"gamma-n[1-3]","name":"wrap",
     "submit_time":1796013144},
    {"job_id":63,"job_state":"PENDING","partition":"batch","tres_per_node":"","tres_per_job":"gres:gpu:4",
     "node_count":1,"start_time":1796013445,"end_time":1796013865,"time_limit":7,
     "comment":"skyslurm:sky-x","user_name":"skyuser1","state_reason":"Resources","nodes":"","name":"t"}]})";
  auto jobs = ParseSqueueJson(json);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].gpu_type, "A100");
  EXPECT_EQ((*jobs)[0].TotalGpus(), 24);
  EXPECT_EQ((*jobs)[1].gpu_type, "");
  EXPECT_EQ((*jobs)[1].TotalGpus(), 4);
  EXPECT_EQ((*jobs)[1].reason, "Resources");
  EXPECT_EQ((*jobs)[1].comment, "skyslurm:sky-x");
  EXPECT_THAT(ParseSqueueJson(R"({"jobs":[{"job_id":1}]})").status().message(),
              HasSubstr("job 1: field 'job_state'"));
}

TEST(QueueTest, GpusInTres) {
  EXPECT_EQ(GpusInTres("gres:gpu:A100:8"), std::make_pair(std::string("A100"), 8L));
  EXPECT_EQ(GpusInTres("gres/gpu:h100=2"), std::make_pair(std::string("h100"), 2L));
  EXPECT_EQ(GpusInTres("gres:gpu:4"), std::make_pair(std::string(""), 4L));
  EXPECT_EQ(GpusInTres("cpu=4,gres/gpu=2"), std::make_pair(std::string(""), 2L));
  EXPECT_EQ(GpusInTres("gres:nvme:1"), std::nullopt);
  EXPECT_EQ(GpusInTres(""), std::nullopt);
}

}  // namespace
}  // namespace skyslurm::backend
