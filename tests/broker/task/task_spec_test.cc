#include "broker/task/task_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace skyslurm::task {
namespace {

using ::testing::HasSubstr;

std::string Error(std::string_view yaml) {
  auto task = ParseTask(yaml, "task.yaml");
  EXPECT_FALSE(task.ok()) << yaml;
  return task.ok() ? "" : task.status().message();
}

std::string DataFile(const std::string& name) {
  std::ifstream in(std::filesystem::path(SKYSLURM_SOURCE_DIR) / "tests/data/tasks" / name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TaskSpecTest, TheTestDataTasksInSkyPilotsShapes) {
  auto finetune = ParseTask(DataFile("finetune.yaml"), "finetune.yaml");
  ASSERT_TRUE(finetune.ok()) << finetune.status().message();
  EXPECT_EQ(finetune->name, "finetune");
  EXPECT_EQ(finetune->workdir, ".");
  ASSERT_EQ(finetune->resources.size(), 1u);
  ASSERT_EQ(finetune->resources[0].accelerators.size(), 1u);
  EXPECT_EQ(finetune->resources[0].accelerators[0].Text(), "H100:1");
  EXPECT_EQ(finetune->resources[0].cpus, 2);
  EXPECT_EQ(finetune->resources[0].memory_gb, 1);
  ASSERT_EQ(finetune->envs.size(), 2u);
  EXPECT_EQ(finetune->envs[0].name, "MODEL");
  EXPECT_EQ(finetune->envs[0].value, "tiny-llama");
  EXPECT_EQ(finetune->envs[1].value, "2");  // a number, as a string
  EXPECT_THAT(finetune->setup, HasSubstr("setup: installing"));
  EXPECT_THAT(finetune->run, HasSubstr("SKYPILOT_NODE_RANK"));

  auto multinode = ParseTask(DataFile("multinode.yaml"), "multinode.yaml");
  ASSERT_TRUE(multinode.ok()) << multinode.status().message();
  EXPECT_EQ(multinode->num_nodes, 2);

  auto either = ParseTask(DataFile("alternatives.yaml"), "alternatives.yaml");
  ASSERT_TRUE(either.ok()) << either.status().message();
  ASSERT_EQ(either->resources[0].accelerators.size(), 2u);
  EXPECT_EQ(either->resources[0].accelerators[0].Text(), "H100:8");
  EXPECT_EQ(either->resources[0].accelerators[1].Text(), "A100:8");
  EXPECT_FALSE(either->resources[0].accelerators_ordered);
}

TEST(TaskSpecTest, AcceleratorsInEveryFormSkyPilotTakes) {
  auto one = [](std::string_view yaml) {
    auto t = ParseTask(yaml, "t.yaml");
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.status().message());
    std::string out;
    if (!t.ok()) return out;
    for (const auto& a : t->resources[0].accelerators) out += a.Text() + " ";
    return out + (t->resources[0].accelerators_ordered ? "ordered" : "any");
  };
  EXPECT_EQ(one("resources:\n  accelerators: H100:8\n"), "H100:8 any");
  EXPECT_EQ(one("resources:\n  accelerators: A100\n"), "A100:1 any");
  EXPECT_EQ(one("resources:\n  accelerators: {H100: 8, A100: 4}\n"), "H100:8 A100:4 any");
  EXPECT_EQ(one("resources:\n  accelerators: {H100:8, A100:8}\n"), "H100:8 A100:8 any");
  EXPECT_EQ(one("resources:\n  accelerators: [A100:8, H100:8]\n"), "A100:8 H100:8 ordered");
  auto alternatives = ParseTask(
      "resources:\n  cpus: 4+\n  any_of:\n    - accelerators: H100:8\n    - accelerators: A100:8\n"
      "      cpus: 8\n",
      "t.yaml");
  ASSERT_TRUE(alternatives.ok()) << alternatives.status().message();
  ASSERT_EQ(alternatives->resources.size(), 2u);
  EXPECT_EQ(alternatives->resources[0].cpus, 4);  // the rest of resources under each
  EXPECT_EQ(alternatives->resources[1].cpus, 8);
  EXPECT_FALSE(alternatives->resources_ordered);
}

TEST(TaskSpecTest, AMisspeltFieldNamesItsLineAndTheNearestField) {
  EXPECT_EQ(Error("name: x\nsetpu: |\n  echo\n"),
            "task.yaml:2: unknown field 'setpu' (did you mean 'setup'?)");
  EXPECT_EQ(Error("name: x\nresources:\n  acelerators: H100:8\n"),
            "task.yaml:3: unknown field 'acelerators' in resources (did you mean 'accelerators'?)");
  EXPECT_EQ(Error("num_node: 2\n"),
            "task.yaml:1: unknown field 'num_node' (did you mean 'num_nodes'?)");
  EXPECT_THAT(Error("frobnicate: 1\n"), HasSubstr("task.yaml:1: unknown field 'frobnicate'"));
}

TEST(TaskSpecTest, FieldsSkyslurmCannotHonourAreRefusedByName) {
  EXPECT_THAT(Error("run: echo\nservice:\n  readiness_probe: /\n  replicas: 2\n"),
              HasSubstr("task.yaml:2: service: not honoured by skyslurm: SkyServe"));
  EXPECT_THAT(Error("resources:\n  accelerators: H100:1\n  autostop: 10m\n"),
              HasSubstr("task.yaml:3: resources.autostop: not honoured by skyslurm"));
  EXPECT_THAT(Error("resources:\n  ports: 8080\n"), HasSubstr("resources.ports: not honoured"));
  // Sizing a cloud VM: read, said to mean nothing here.
  auto noted = ParseTask("resources:\n  disk_size: 256\n", "t.yaml");
  ASSERT_TRUE(noted.ok());
  ASSERT_EQ(noted->notes.size(), 1u);
  EXPECT_THAT(noted->notes[0], HasSubstr("t.yaml:2: resources.disk_size has no meaning"));
}

TEST(TaskSpecTest, BadAcceleratorsAndObjectStoresAreRefusedWithTheirLine) {
  EXPECT_THAT(Error("resources:\n  accelerators: H100:x\n"),
              HasSubstr("task.yaml:2: resources.accelerators: 'H100:x': the count 'x'"));
  EXPECT_THAT(Error("resources:\n  accelerators: H100:0.5\n"),
              HasSubstr("a fraction of a GPU cannot be asked of Slurm"));
  EXPECT_THAT(
      Error("file_mounts:\n  /data: s3://my-bucket/data\n"),
      HasSubstr("task.yaml:2: file_mounts./data: 's3://my-bucket/data' is an object store"));
  EXPECT_THAT(Error("file_mounts:\n  /ckpt:\n    name: my-bucket\n    mode: MOUNT\n"),
              HasSubstr("a bucket made by SkyPilot"));
  EXPECT_THAT(Error("resources:\n  image_id: ami-0123\n"),
              HasSubstr("only container images (docker:<image>)"));
  EXPECT_THAT(Error("envs:\n  1BAD: x\n"), HasSubstr("envs.1BAD: is not a variable name"));
  EXPECT_THAT(Error("num_nodes: 0\n"), HasSubstr("num_nodes: '0' is not a whole number"));
  EXPECT_THAT(Error("name: [\n"), HasSubstr("not valid YAML"));
  EXPECT_THAT(Error("- a\n- b\n"), HasSubstr("a task is a mapping"));
}

}  // namespace
}  // namespace skyslurm::task
