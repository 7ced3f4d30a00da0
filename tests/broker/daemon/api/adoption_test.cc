// The JSON a user's jobs travel to the site in: every field there and back,
// and errors that name the field.
#include "broker/daemon/api/adoption.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

TEST(AdoptionTest, EveryFieldRoundTrips) {
  AdoptedJob a;
  a.job = {.sky_id = "sky-20261208-010203-abcdef",
           .owner = "mallory",
           .state = "PENDING",
           .reason = "Priority",
           .cluster = "alpha",
           .native_id = "42",
           .input_json = R"({"tool":"sbatch"})",
           .managed = true,
           .retry_on_failure = 2,
           .restarts = 1,
           .moves = 3,
           .created = 100,
           .updated = 200,
           .submitted = 150,
           .expected_start = 300,
           .model_start = 310,
           .started = 0,
           .ended = 0,
           .exit_code = 0,
           .parent = "",
           .indices = "0-3",
           .global_id = 805306445,
           .name = "train"};
  a.copies = {{.sky_id = "x",
               .cluster = "alpha",
               .native_id = "42",
               .partition = "gpu",
               .args = "--gres=gpu:1",
               .script = "#!/bin/sh\n",
               .state = "PENDING",
               .submitted = 150,
               .workdir = "/w",
               .source = "/s",
               .sent_ns = 7}};
  a.events = {{.seq = 9,
               .sky_id = "x",
               .time = 150,
               .kind = "submitted",
               .cluster = "alpha",
               .native_id = "42",
               .detail = "why"}};
  a.intents = {{.id = 4,
                .sky_id = "x",
                .action = "submit",
                .cluster = "alpha",
                .native_id = "",
                .created = 149}};
  auto back = AdoptedJobFromJson(AdoptedJobJson(a));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->job.sky_id, a.job.sky_id);
  EXPECT_EQ(back->job.owner, "");  // never taken from the request
  EXPECT_EQ(back->job.input_json, a.job.input_json);
  EXPECT_EQ(back->job.global_id, 805306445u);
  EXPECT_EQ(back->job.model_start, 310);
  EXPECT_EQ(back->job.indices, "0-3");
  EXPECT_TRUE(back->job.managed);
  ASSERT_EQ(back->copies.size(), 1u);
  EXPECT_EQ(back->copies[0].sky_id, a.job.sky_id);
  EXPECT_EQ(back->copies[0].sent_ns, 7);
  EXPECT_EQ(back->copies[0].script, "#!/bin/sh\n");
  ASSERT_EQ(back->events.size(), 1u);
  EXPECT_EQ(back->events[0].detail, "why");
  EXPECT_EQ(back->events[0].sky_id, a.job.sky_id);
  ASSERT_EQ(back->intents.size(), 1u);
  EXPECT_EQ(back->intents[0].action, "submit");
  EXPECT_EQ(back->intents[0].created, 149);
}

TEST(AdoptionTest, ErrorsNameTheField) {
  Json::Value v = AdoptedJobJson({});
  v["job"]["moves"] = "three";
  EXPECT_THAT(AdoptedJobFromJson(v).status().message(), ::testing::HasSubstr("'moves'"));
  v = AdoptedJobJson({});
  v["copies"] = Json::Value(Json::objectValue);
  EXPECT_THAT(AdoptedJobFromJson(v).status().message(), ::testing::HasSubstr("'copies'"));
  EXPECT_FALSE(AdoptedJobFromJson(Json::Value("x")).ok());
}

}  // namespace
}  // namespace skyslurm::daemon
