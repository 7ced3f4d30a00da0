#include "broker/task/task_script.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "broker/job/request.h"

namespace skyslurm::task {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<SiteCluster> kSite = {
    {.name = "alpha"},
    {.name = "beta"},
    {.name = "gamma"},
    {.name = "delta", .elastic = true, .spot_partitions = {"spot"}},
    {.name = "kappa", .cloud = "k8s", .context = "kappa-ctx"},
};

const std::string kDataDir = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/tasks";

Result<TaskJobs> Jobs(std::string_view yaml, const TaskOverrides& overrides = {},
                      const std::string& dir = kDataDir) {
  auto task = ParseTask(yaml, "task.yaml");
  if (!task.ok()) return task.status();
  return TaskToJobs(*task, overrides, kSite, catalog::AcceleratorCatalog(), dir);
}

job::Request Parsed(const std::string& script) {
  job::RequestInput in;
  in.script_text = script;
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.status().message()) << script;
  return r.ok() ? *r : job::Request{};
}

TEST(TaskScriptTest, ASingleNodeTaskIsABatchScriptSbatchReads) {
  auto jobs = Jobs(
      "name: ft\nworkdir: .\nresources:\n  accelerators: H100:8\n  cpus: 16+\n  memory: 64\n"
      "envs:\n  MODEL: llama 3\nsetup: pip install x\nrun: |\n  python train.py\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->alternatives.size(), 1u);
  EXPECT_EQ(jobs->workdir, std::filesystem::weakly_canonical(kDataDir).string());
  const std::string& s = jobs->alternatives[0].script;
  EXPECT_THAT(s,
              HasSubstr("#SBATCH --job-name=ft\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=H100:8\n#SBATCH --cpus-per-task=16\n"
                        "#SBATCH --mem=64G\n#SBATCH --sky-any-cluster\n#SBATCH --sky-managed\n"));
  EXPECT_THAT(s, HasSubstr("export MODEL='llama 3'\n"));
  EXPECT_THAT(s, HasSubstr("<<'SKYSLURM_SETUP_END'\npip install x\nSKYSLURM_SETUP_END\n"));
  EXPECT_THAT(s, HasSubstr("sky_on_every_node setup || exit $?\nsky_on_every_node run\n"));
  EXPECT_THAT(s, Not(HasSubstr("--sky-workdir=none")));
  const job::Request r = Parsed(s);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].type, "H100");
  EXPECT_EQ(r.gpus[0].count, 8);
  EXPECT_EQ(r.cpus_per_task, 16);
  EXPECT_EQ(r.mem_mb, 64 * 1024);
  EXPECT_TRUE(r.sky.any_cluster);
  EXPECT_TRUE(r.sky.managed);
}

TEST(TaskScriptTest, InfraNamesClustersByKind) {
  auto script = [](std::string_view infra) {
    auto jobs = Jobs("resources:\n  infra: " + std::string(infra) + "\nrun: true\n");
    EXPECT_TRUE(jobs.ok()) << (jobs.ok() ? "" : jobs.status().message());
    return jobs.ok() ? jobs->alternatives[0].script : "";
  };
  EXPECT_THAT(script("slurm/beta/debug"),
              HasSubstr("#SBATCH --partition=debug\n#SBATCH --sky-infra=beta\n"));
  EXPECT_THAT(script("slurm"), HasSubstr("--sky-any-cluster=alpha,beta,gamma,delta\n"));
  EXPECT_THAT(script("k8s"), HasSubstr("--sky-infra=kappa\n"));
  EXPECT_THAT(script("k8s/kappa-ctx"), HasSubstr("--sky-infra=kappa\n"));
  EXPECT_THAT(script("aws"), HasSubstr("--sky-infra=delta\n"));  // the elastic cluster
  auto bad = Jobs("resources:\n  infra: slurm/betta\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("task.yaml:2: resources.infra: slurm/betta: no Slurm cluster named betta "
                        "here (clusters: alpha, beta, gamma, delta, kappa); did you mean beta?"));
  EXPECT_FALSE(Jobs("resources:\n  infra: slurm/kappa\n").ok());  // Kubernetes, not Slurm
  auto spot = Jobs("resources:\n  use_spot: true\n");
  ASSERT_TRUE(spot.ok());
  EXPECT_THAT(spot->alternatives[0].script,
              HasSubstr("--partition=spot\n#SBATCH --sky-infra=delta\n"));
}

TEST(TaskScriptTest, EachAcceleratorAlternativeIsAJobOfItsOwn) {
  auto jobs = Jobs("resources:\n  accelerators: {H100:8, A100:8}\nrun: true\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->alternatives.size(), 2u);
  EXPECT_FALSE(jobs->ordered);
  EXPECT_EQ(jobs->alternatives[0].label, "H100:8");
  EXPECT_THAT(jobs->alternatives[1].script, HasSubstr("--gpus-per-node=A100:8\n"));
  auto ordered = Jobs("resources:\n  accelerators: [A100:8, H100:8]\n");
  ASSERT_TRUE(ordered.ok());
  EXPECT_TRUE(ordered->ordered);
  // --gpus replaces them.
  TaskOverrides o;
  o.gpus = "A100:2";
  auto given = Jobs("resources:\n  accelerators: {H100:8, A100:8}\n", o);
  ASSERT_TRUE(given.ok());
  ASSERT_EQ(given->alternatives.size(), 1u);
  EXPECT_EQ(given->alternatives[0].label, "A100:2");
  auto unknown = Jobs("resources:\n  accelerators: H1000:8\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "task.yaml:2: resources.accelerators: 'H1000' is not a GPU skyslurm knows (did you "
            "mean 'H100'?)");
}

TEST(TaskScriptTest, EnvsTakeTheCommandLinesValuesAndSecretsStayOutOfTheScript) {
  TaskOverrides o;
  o.env = {{"MODEL", "big"}, {"EXTRA", "1"}};
  o.secrets = {{"HF_TOKEN", "hf_secret_value"}};
  auto jobs = Jobs("envs:\n  MODEL: small\n  EPOCHS: 3\nsecrets:\n  HF_TOKEN:\nrun: true\n", o);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const std::string& s = jobs->alternatives[0].script;
  EXPECT_THAT(s, HasSubstr("export MODEL=big\nexport EPOCHS=3\nexport EXTRA=1\n"));
  EXPECT_THAT(s, Not(HasSubstr("hf_secret_value")));
  EXPECT_THAT(s, Not(HasSubstr("HF_TOKEN")));
  ASSERT_EQ(jobs->alternatives[0].secrets.size(), 1u);
  EXPECT_EQ(jobs->alternatives[0].secrets[0].second, "hf_secret_value");
  // A secret (or env) declared without a value must be given.
  auto missing = Jobs("secrets:\n  HF_TOKEN:\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "task.yaml:2: secrets.HF_TOKEN has no value: give it with --secret HF_TOKEN=...");
}

TEST(TaskScriptTest, WorkdirAndMounts) {
  // No workdir: nothing copied, the run starts in the home folder.
  auto none = Jobs("run: true\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->workdir, "");
  EXPECT_THAT(none->alternatives[0].script, HasSubstr("#SBATCH --sky-workdir=none\n"));
  EXPECT_THAT(none->alternatives[0].script, HasSubstr("cd \"$HOME\" || exit 1\n"));
  // A mount from the workdir is linked to its copy; a cluster's path as it is.
  auto mounts = Jobs("workdir: .\nfile_mounts:\n  /tmp/skyslurm-data: data\n  ~/ds: /datasets/x\n");
  ASSERT_TRUE(mounts.ok()) << mounts.status().message();
  EXPECT_THAT(mounts->alternatives[0].script,
              HasSubstr("<<SKYSLURM_MOUNTS_END\n/tmp/skyslurm-data $PWD/data\n~/ds /datasets/x\n"));
  auto outside = Jobs("workdir: data\nfile_mounts:\n  /m: ../sbatch\n");
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(outside.status().message(), HasSubstr("task.yaml:3: file_mounts./m: '../sbatch' is "
                                                    "outside the workdir"));
  auto missing = Jobs("workdir: no-such-folder\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("workdir: "));
}

TEST(TaskScriptTest, AHeredocDelimiterInTheTaskIsAvoided) {
  auto jobs = Jobs("run: |\n  cat <<'SKYSLURM_RUN_END'\n  hi\n  SKYSLURM_RUN_END\n");
  ASSERT_TRUE(jobs.ok());
  EXPECT_THAT(jobs->alternatives[0].script, HasSubstr("<<'SKYSLURM_RUN_END_2'\n"));
}

// image_id: Kubernetes' image, and pyxis' on a Slurm cluster that has it.
TEST(TaskScriptTest, AnImageIsAskedOfKubernetesAndOfPyxis) {
  auto jobs = Jobs("resources:\n  image_id: docker:nvcr.io/nvidia/pytorch:24.01-py3\nrun: true\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_THAT(jobs->alternatives[0].script,
              HasSubstr("#SBATCH --sky-image=nvcr.io/nvidia/pytorch:24.01-py3\n"
                        "#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01-py3\n"));
}

}  // namespace
}  // namespace skyslurm::task
