#include "spank/plugin_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spank/remote_env.h"

namespace skyslurm::spank {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(PluginArgsTest, DefaultsAndEveryKey) {
  PluginArgs a;
  EXPECT_THAT(ParsePluginArgs({}, &a), IsEmpty());
  EXPECT_EQ(a.shim_dir, SKYSLURM_DEFAULT_SHIM_DIR);
  EXPECT_THAT(a.shim_dir, ::testing::EndsWith("/libexec/skyslurm/bin"));
  EXPECT_TRUE(a.reexec);
  EXPECT_TRUE(a.env);
  EXPECT_THAT(ParsePluginArgs({"shim=/opt/sky/libexec/skyslurm/bin", "reexec=no", "env=no"}, &a),
              IsEmpty());
  EXPECT_EQ(a.shim_dir, "/opt/sky/libexec/skyslurm/bin");
  EXPECT_FALSE(a.reexec);
  EXPECT_FALSE(a.env);
}

TEST(PluginArgsTest, StrictAboutWhatItDoesNotKnow) {
  PluginArgs a;
  EXPECT_THAT(ParsePluginArgs({"bogus=1"}, &a),
              HasSubstr("unknown plugstack.conf argument 'bogus=1' (known: shim=DIR"));
  EXPECT_THAT(ParsePluginArgs({"shim=relative/dir"}, &a), HasSubstr("absolute path"));
  EXPECT_THAT(ParsePluginArgs({"env=maybe"}, &a), HasSubstr("env takes yes or no"));
  EXPECT_THAT(ParsePluginArgs({"reexec"}, &a), HasSubstr("reexec takes yes or no"));
}

// The addresses skyslurm sent with a routed job; a name it did not send
// (or a job it did not route) stays a name.
TEST(RemoteEnvTest, AddressesComeFromTheJobsMapElseTheNames) {
  EXPECT_EQ(AddressesFor({"beta-n1", "beta-n2", "beta-n3"},
                         "beta-n2=10.0.0.2;beta-n1=10.0.0.1;bad;=x;beta-n3="),
            (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "beta-n3"}));
  EXPECT_EQ(AddressesFor({"a", "b"}, ""), (std::vector<std::string>{"a", "b"}));
}

TEST(RemoteEnvTest, SkypilotVariables) {
  StepFacts f;
  f.node_addresses = {"10.0.0.1", "10.0.0.2"};
  f.num_nodes = 2;
  f.node_rank = 1;
  f.gpus_per_node = 4;
  f.cluster = "beta";
  f.partition = "h100-cluster";
  f.job_id = "42";
  auto env = SkypilotEnv(f, false);
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["SKYPILOT_NODE_IPS"], "10.0.0.1\n10.0.0.2");
  EXPECT_EQ(m["SKYPILOT_NUM_NODES"], "2");
  EXPECT_EQ(m["SKYPILOT_NODE_RANK"], "1");
  EXPECT_EQ(m["SKYPILOT_NUM_GPUS_PER_NODE"], "4");
  EXPECT_EQ(m["SKYPILOT_TASK_ID"], "sky-beta_42");
  EXPECT_EQ(m["SKYPILOT_CLUSTER_INFO"],
            "{\"cloud\": \"slurm\", \"cluster\": \"beta\", \"region\": \"beta\", \"zone\": "
            "\"h100-cluster\"}");
  // A routed job brings its own task id.
  f.task_id = "sky-20261204-194459-853421";
  auto routed = SkypilotEnv(f, true);
  for (const auto& [k, v] : routed) EXPECT_NE(k, "SKYPILOT_TASK_ID");
  // A routed array's task: the job's id with the task's index.
  f.array_task_id = "7";
  m = {};
  for (const auto& [k, v] : SkypilotEnv(f, true)) m[k] = v;
  EXPECT_EQ(m["SKYPILOT_TASK_ID"], "sky-20261204-194459-853421_7");
  // Once only (a step of the task brings it with the index), and never to
  // an id the user chose.
  for (const std::string id : {"sky-20261204-194459-853421_7", "my-run", "sky-run.7"}) {
    f.task_id = id;
    for (const auto& [k, v] : SkypilotEnv(f, true)) EXPECT_NE(k, "SKYPILOT_TASK_ID") << id;
  }
}

TEST(RemoteEnvTest, JsonIsEscaped) {
  EXPECT_EQ(ClusterInfoJson("a\"b", "c\\d"),
            "{\"cloud\": \"slurm\", \"cluster\": \"a\\\"b\", \"region\": \"a\\\"b\", \"zone\": "
            "\"c\\\\d\"}");
}

TEST(RemoteEnvTest, GpuCounts) {
  EXPECT_EQ(GpusFrom("4", nullptr), 4);
  EXPECT_EQ(GpusFrom(nullptr, "0,1,3"), 3);
  EXPECT_EQ(GpusFrom("", "0-3"), 4);
  EXPECT_EQ(GpusFrom(nullptr, "0-1,4,6-7"), 5);
  EXPECT_EQ(GpusFrom(nullptr, nullptr), 0);
  EXPECT_EQ(GpusFrom(nullptr, "x"), 0);
}

}  // namespace
}  // namespace skyslurm::spank
