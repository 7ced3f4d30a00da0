#include "broker/task/task_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "broker/catalog/accelerators.h"
#include "broker/task/task_spec.h"

namespace skyslurm::task {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::vector<SiteCluster> kSite = {
    {.name = "alpha"},
    {.name = "beta"},
    {.name = "gamma"},
    {.name = "kappa", .cloud = "k8s"},
};

job::Request Parse(job::RequestInput in) {
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.status().message());
  return r.ok() ? *r : job::Request{};
}

// What Slurm is asked for per node, as a task can say it.
struct Asked {
  std::int64_t nodes = 1;
  std::string gpus;  // "H100:8" (canonical type)
  std::int64_t cpus = 0, memory_gb = 0;
  std::optional<std::string> job_name, infra, image;
  std::vector<std::string> partitions;
  int retries = 0;
  bool operator==(const Asked&) const = default;
};

void PrintTo(const Asked& a, std::ostream* os) {
  *os << fmt::format(
      "nodes {} gpus {} cpus {} memory {}G name {} infra {} image {} partitions {} "
      "retries {}",
      a.nodes, a.gpus, a.cpus, a.memory_gb, a.job_name.value_or("-"), a.infra.value_or("-"),
      a.image.value_or("-"), fmt::join(a.partitions, ","), a.retries);
}

Asked AskedOf(const job::Request& r) {
  const catalog::AcceleratorCatalog catalog;
  Asked a;
  a.nodes = r.nodes ? r.nodes->min : 1;
  for (const auto& g : r.gpus) {
    a.gpus = fmt::format("{}:{}", catalog.Canonical(g.type).value_or(g.type), g.count);
  }
  const std::int64_t per_node =
      r.ntasks_per_node.value_or(r.ntasks ? std::max<std::int64_t>(1, *r.ntasks / a.nodes) : 1);
  a.cpus = r.cpus_per_task.value_or(0) * (r.cpus_per_task ? per_node : 0);
  a.memory_gb = r.mem_mb ? (*r.mem_mb + 1023) / 1024 : 0;
  a.job_name = r.job_name.value_or(fs::path(r.script_name).filename().string());
  a.infra = r.sky.infra;
  if (!a.infra && r.sky.clusters.size() == 1) a.infra = r.sky.clusters[0];
  a.image = r.sky.image ? r.sky.image : r.container;
  a.partitions = r.partitions;
  a.retries = r.sky.retry_on_failure;
  return a;
}

// Every test script a task can express: exported, then launched (as
// `launch --dryrun` makes its batch script), asks Slurm for the same.
TEST(TaskExportTest, ExportThenLaunchAsksForTheSame) {
  int expressed = 0, refused = 0;
  for (const std::string folder : {"/tests/data/scripts", "/tests/data/tasks/sbatch"}) {
    for (const auto& entry : fs::directory_iterator(std::string(SKYSLURM_SOURCE_DIR) + folder)) {
      SCOPED_TRACE(entry.path().string());
      job::RequestInput in;
      in.args = {entry.path().string()};
      const job::Request original = Parse(in);
      auto exported = ExportTask(original, kSite);
      if (!exported.ok()) {
        EXPECT_THAT(exported.status().message(),
                    HasSubstr("cannot be expressed as a SkyPilot task"));
        ++refused;
        continue;
      }
      ++expressed;
      auto task = ParseTask(exported->yaml, "exported.yaml");
      ASSERT_TRUE(task.ok()) << task.status().message() << exported->yaml;
      auto jobs = TaskToJobs(*task, {}, kSite, catalog::AcceleratorCatalog(),
                             entry.path().parent_path().string());
      ASSERT_TRUE(jobs.ok()) << jobs.status().message() << exported->yaml;
      ASSERT_EQ(jobs->alternatives.size(), 1u);
      job::RequestInput launched_in;
      launched_in.script_text = jobs->alternatives[0].script;
      Asked want = AskedOf(original);
      const Asked got = AskedOf(Parse(launched_in));
      // What the export said it could not carry is not compared.
      const bool partition_carried = std::ranges::none_of(
          exported->not_carried, [](const auto& n) { return n.starts_with("--partition"); });
      if (!partition_carried) want.partitions = got.partitions;
      EXPECT_EQ(got, want) << exported->yaml;
    }
  }
  EXPECT_GE(expressed, 4);
  EXPECT_GE(refused, 4);  // arrays, het jobs, GPUs of no type or per task
}

TEST(TaskExportTest, WhatATaskCannotSayIsListed) {
  job::RequestInput in;
  in.args = {std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/scripts/mpi_multinode.sh"};
  auto exported = ExportTask(Parse(in), kSite);
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_THAT(exported->yaml, HasSubstr("name: lammps-scaling\nworkdir: .\nnum_nodes: 4\n"
                                        "resources:\n  accelerators: h100:8\n  cpus: 32\n"
                                        "  memory: 200\nrun: |\n  set -euo pipefail\n"));
  const std::string all = fmt::format("{}", fmt::join(exported->not_carried, "\n"));
  EXPECT_THAT(all, HasSubstr("--time=12:00:00: no task field says it (the partition's default"));
  EXPECT_THAT(all, HasSubstr("--account=proj-a: no task field says it"));
  EXPECT_THAT(all, HasSubstr("--partition=gpu: a task names a partition with its cluster"));
  EXPECT_THAT(all, HasSubstr("a task's run runs on every node"));

  in.args = {std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/scripts/array_sweep.sh"};
  auto array = ExportTask(Parse(in), kSite);
  ASSERT_FALSE(array.ok());
  EXPECT_THAT(array.status().message(), HasSubstr("--array=0-99%10: a task runs once"));

  in.args = {std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/tasks/sbatch/container.sh"};
  auto k8s = ExportTask(Parse(in), kSite);
  ASSERT_TRUE(k8s.ok());
  EXPECT_THAT(k8s->yaml, HasSubstr("  infra: k8s/kappa\n"));
  // pyxis' image, as a task names it (the GPUs of no type refuse this one).
  in.args = {std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/scripts/pyxis_container.sh"};
  job::Request pyxis = Parse(in);
  pyxis.gpus.clear();
  auto from_pyxis = ExportTask(pyxis, kSite);
  ASSERT_TRUE(from_pyxis.ok()) << from_pyxis.status().message();
  EXPECT_THAT(from_pyxis->yaml, HasSubstr("  image_id: docker:nvcr.io/nvidia/pytorch:24.01-py3\n"));
  EXPECT_THAT(k8s->yaml, HasSubstr("  image_id: docker:nvcr.io/nvidia/pytorch:24.01-py3\n"));
}

// A cluster of a kind SkyPilot has no name for is named alone, as a task's
// infra reaches it (not as a Slurm cluster it is not).
TEST(TaskExportTest, AClusterOfAKindWithoutASkyPilotNameIsNamedAlone) {
  std::vector<SiteCluster> site = kSite;
  site.push_back({.name = "mem1", .cloud = ""});
  job::RequestInput in;
  in.script_text = "#!/bin/bash\n#SBATCH --sky-infra=mem1\nhostname\n";
  auto exported = ExportTask(Parse(in), site);
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_THAT(exported->yaml, HasSubstr("  infra: mem1\n"));
}

}  // namespace
}  // namespace skyslurm::task
