#include "broker/job/request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kData = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/scripts/";

Result<Request> Sbatch(std::vector<std::string> args, std::map<std::string, std::string> env = {},
                       std::optional<std::string> text = std::nullopt) {
  RequestInput in;
  in.tool = Tool::kSbatch;
  in.args = std::move(args);
  in.env = std::move(env);
  in.script_text = std::move(text);
  in.spank_options = {{"container-image", Arg::kRequired}, {"container-mounts", Arg::kRequired}};
  return ParseRequest(in);
}

const char kScript[] =
    "#!/bin/bash\n"
    "#SBATCH --partition=gpu\n"
    "#SBATCH --time=30\n"
    "#SBATCH -N 2\n"
    "#SBATCH --gres=gpu:h100:4\n"
    "srun hostname\n";

TEST(RequestTest, PrecedenceCommandLineOverEnvironmentOverScript) {
  auto r = Sbatch({"--time=60", "job.sh"},
                  {{"SBATCH_TIMELIMIT", "45"}, {"SBATCH_PARTITION", "cpu"}}, kScript);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->time_limit->minutes, 60);
  EXPECT_THAT(r->partitions, ElementsAre("cpu"));
  EXPECT_EQ(r->nodes, (NodeCount{2, 2}));
  EXPECT_EQ(r->Effective(Opt::kTime)->origin.kind, Origin::Kind::kCommandLine);
  EXPECT_EQ(r->Effective(Opt::kPartition)->origin.variable, "SBATCH_PARTITION");
  EXPECT_EQ(r->Effective(Opt::kNodes)->origin.line, 4);
}

// The name squeue shows, as sbatch gives it (the dashboard lists ended
// jobs by it).
TEST(RequestTest, TheJobsNameIsTheOneSlurmGivesIt) {
  EXPECT_EQ(SlurmJobName(*Sbatch({"-J", "train", "dir/job.sh"}, {}, kScript)), "train");
  EXPECT_EQ(SlurmJobName(*Sbatch({"dir/job.sh"}, {}, kScript)), "job.sh");
  EXPECT_EQ(SlurmJobName(*Sbatch({"--wrap", "hostname"})), "wrap");
  EXPECT_EQ(SlurmJobName(*Sbatch({}, {}, kScript)), "sbatch");
}

TEST(RequestTest, LaterOccurrenceOfTheSameSourceWins) {
  auto r =
      Sbatch({"-t", "10", "--time", "20", "job.sh"}, {}, "#!/bin/sh\n#SBATCH -p a\n#SBATCH -p b\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->time_limit->minutes, 20);
  EXPECT_THAT(r->partitions, ElementsAre("b"));
}

TEST(RequestTest, ScriptArgumentsAreNotOptions) {
  auto r = Sbatch({"job.sh", "--time=1", "-N", "9"}, {}, kScript);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->time_limit->minutes, 30);
  EXPECT_THAT(r->script_args, ElementsAre("--time=1", "-N", "9"));
}

TEST(RequestTest, GpuRequestsInEveryForm) {
  auto r = Sbatch({"--gpus=a100:2", "--gpus-per-task=1", "job.sh"}, {}, kScript);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->gpus.size(), 3u);
  EXPECT_EQ(r->gpus[0].scope, GpuAsk::Scope::kPerNode);
  EXPECT_EQ(r->gpus[0].type, "h100");
  EXPECT_EQ(r->gpus[0].count, 4);
  EXPECT_EQ(r->gpus[0].origin.line, 5);
  EXPECT_EQ(r->gpus[1].scope, GpuAsk::Scope::kPerJob);
  EXPECT_EQ(r->gpus[1].type, "a100");
  EXPECT_EQ(r->gpus[2].scope, GpuAsk::Scope::kPerTask);
  EXPECT_EQ(r->gpus[2].type, "");
}

TEST(RequestTest, ALaterGresReplacesTheEarlierOne) {
  auto r = Sbatch({"--gres=gpu:2,nvme:1", "job.sh"}, {}, kScript);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->gpus.size(), 1u);
  EXPECT_EQ(r->gpus[0].type, "");
  EXPECT_EQ(r->gpus[0].count, 2);
  ASSERT_EQ(r->other_gres.size(), 1u);
  EXPECT_EQ(r->other_gres[0].name, "nvme");
}

TEST(RequestTest, BadValuesNameTheSourceAndTheOption) {
  auto gres = Sbatch({"job.sh"}, {}, "#!/bin/sh\n\n#SBATCH --gres=gpu:h100:x\n");
  ASSERT_FALSE(gres.ok());
  EXPECT_THAT(gres.status().message(),
              HasSubstr("job.sh:3: --gres: invalid GRES 'gpu:h100:x' ('x' is not a count"));
  auto time = Sbatch({"-t", "forever", "job.sh"}, {}, kScript);
  EXPECT_THAT(time.status().message(),
              HasSubstr("command line: --time: invalid time limit 'forever'"));
  auto env = Sbatch({"job.sh"}, {{"SBATCH_MEM_PER_NODE", "lots"}}, kScript);
  EXPECT_THAT(env.status().message(), HasSubstr("SBATCH_MEM_PER_NODE: --mem: invalid memory size"));
  auto missing = Sbatch({"job.sh"}, {}, "#!/bin/sh\n#SBATCH --partition\n");
  EXPECT_EQ(missing.status().message(), "job.sh:2: option '--partition' requires an argument");
  auto operand = Sbatch({"job.sh"}, {}, "#!/bin/sh\n#SBATCH -N 2 gpu\n");
  EXPECT_EQ(operand.status().message(), "job.sh:2: invalid directive: 'gpu' is not an option");
  auto array = Sbatch({"job.sh"}, {}, "#!/bin/sh\n#SBATCH --array=0-9,12-3%4\n");
  EXPECT_THAT(array.status().message(),
              HasSubstr("job.sh:2: --array: '12-3': the range ends before it starts"));
  auto sky = Sbatch({"--sky-retry-on-failure=lots", "job.sh"}, {}, kScript);
  EXPECT_THAT(sky.status().message(),
              HasSubstr("command line: invalid --sky-retry-on-failure value 'lots'"));
}

// sbatch takes an empty --array for no array: a later one undoes an earlier.
TEST(RequestTest, AnEmptyArrayIsNoArray) {
  auto r = Sbatch({"--array=", "job.sh"}, {}, "#!/bin/sh\n#SBATCH --array=0-3\ntrue\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->array);
  EXPECT_FALSE(r->array_indices);
}

TEST(RequestTest, ScriptProblemsAreErrors) {
  EXPECT_THAT(Sbatch({"/nonexistent/job.sh"}).status().message(),
              HasSubstr("/nonexistent/job.sh: cannot open the batch script"));
  EXPECT_THAT(Sbatch({"job.sh"}, {}, "echo no shebang\n").status().message(),
              HasSubstr("job.sh:1: this does not look like a batch script"));
  EXPECT_THAT(Sbatch({}).status().message(), HasSubstr("no batch script"));
  EXPECT_THAT(Sbatch({"--wrap=true", "arg"}).status().message(),
              HasSubstr("script arguments are not permitted with --wrap"));
}

TEST(RequestTest, WrapBuildsSbatchsScript) {
  auto r = Sbatch({"--wrap", "nvidia-smi", "-G", "1"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->script_name, "(wrap)");
  EXPECT_EQ(r->script, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nnvidia-smi\n");
  EXPECT_EQ(r->gpus[0].count, 1);
}

TEST(RequestTest, StdinScript) {
  auto r = Sbatch({"-N", "1"}, {}, std::string(kScript));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->script_name, "(stdin)");
  EXPECT_EQ(r->nodes->min, 1);  // the command line beats the script's -N 2
}

TEST(RequestTest, SkyOptionsFromEveryPlace) {
  auto r = Sbatch({"job.sh"}, {}, "#!/bin/sh\n#SBATCH --sky-any-cluster=beta,gamma\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->sky.any_cluster);
  EXPECT_THAT(r->sky.clusters, ElementsAre("beta", "gamma"));
  auto bare = Sbatch({"--sky-any-cluster", "--sky-managed", "--sky-retry-on-failure=2", "job.sh"},
                     {}, kScript);
  ASSERT_TRUE(bare.ok());
  EXPECT_THAT(bare->sky.clusters, IsEmpty());
  EXPECT_TRUE(bare->sky.managed);
  EXPECT_EQ(bare->sky.retry_on_failure, 2);
  auto env = Sbatch({"job.sh"}, {{"SKYSLURM_ANY_CLUSTER", "1"}}, kScript);
  EXPECT_TRUE(env->sky.any_cluster);
  EXPECT_TRUE(env->sky.wanted());
  auto off = Sbatch({"job.sh"}, {{"SKYSLURM_ANY_CLUSTER", "0"}}, kScript);
  EXPECT_FALSE(off->sky.wanted());
}

TEST(RequestTest, UnknownOptionsAreKeptWithTheirWords) {
  auto r = Sbatch({"--site-option=42", "job.sh"}, {}, "#!/bin/sh\n#SBATCH --other-site-flag\n");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->settings.size(), 2u);
  EXPECT_EQ(r->settings[0].occurrence.spec, nullptr);
  EXPECT_THAT(r->settings[1].occurrence.words, ElementsAre("--site-option=42"));
  EXPECT_EQ(r->warnings.size(), 2u);
}

TEST(RequestTest, SallocAndSrunTakeACommand) {
  RequestInput in;
  in.tool = Tool::kSalloc;
  in.args = {"-N", "2", "--gpus=8", "srun", "hostname"};
  auto r = ParseRequest(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_THAT(r->script_args, ElementsAre("srun", "hostname"));
  EXPECT_EQ(r->gpus[0].count, 8);
  in.tool = Tool::kSrun;
  in.args = {"--wait=30", "-N1", "true"};
  auto s = ParseRequest(in);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->wait);  // srun's --wait is a timeout, not sbatch's -W
  in.env = {{"SLURM_NTASKS", "4"}};
  EXPECT_EQ(*ParseRequest(in)->ntasks, 4);
}

// --- the corpus of realistic scripts ---

TEST(CorpusTest, MultiNodeMpi) {
  auto r = Sbatch({kData + "mpi_multinode.sh"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->nodes, (NodeCount{4, 4}));
  EXPECT_EQ(*r->ntasks_per_node, 8);
  EXPECT_EQ(*r->cpus_per_task, 4);
  EXPECT_EQ(*r->mem_mb, 200 * 1024);
  EXPECT_EQ(r->time_limit->minutes, 12 * 60);
  EXPECT_EQ(*r->account, "proj-a");
  EXPECT_EQ(*r->qos, "normal");
  EXPECT_EQ(*r->output, "logs/%x-%j.out");
  ASSERT_EQ(r->gpus.size(), 1u);
  EXPECT_EQ(r->gpus[0].type, "h100");
  EXPECT_EQ(r->gpus[0].count, 8);
  ASSERT_EQ(r->modules.size(), 3u);
  EXPECT_EQ(r->modules[2].word, "cuda/12.1");
  EXPECT_EQ(r->modules[2].line, 19);
  EXPECT_EQ(r->directives.body_start_line, 16);
}

TEST(CorpusTest, Array) {
  auto r = Sbatch({kData + "array_sweep.sh"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->array, "0-99%10");
  ASSERT_TRUE(r->array_indices);
  EXPECT_EQ(r->array_indices->indices.size(), 100u);
  EXPECT_EQ(r->array_indices->throttle, 10);
  EXPECT_EQ(*r->cpus_per_task, 8);
  EXPECT_EQ(r->gpus[0].scope, GpuAsk::Scope::kPerJob);
  EXPECT_EQ(r->gpus[0].type, "a100");
  ASSERT_EQ(r->modules.size(), 2u);
  EXPECT_EQ(r->modules[0].verb, "ml");
}

TEST(CorpusTest, HeterogeneousJob) {
  auto r = Sbatch({kData + "hetjob.sh"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->hetjob);
  ASSERT_EQ(r->ComponentCount(), 2u);
  EXPECT_EQ(r->nodes->min, 1);
  EXPECT_EQ(r->gpu_demand.per_node, 4);
  const Request& second = r->Component(1);
  EXPECT_EQ(second.nodes->min, 2);
  EXPECT_THAT(second.partitions, ElementsAre("cpu"));
  EXPECT_EQ(second.gpu_demand.per_node, 0);  // --gres starts afresh
}

// sbatch reads a heterogeneous job component by component: what sizes or
// places one (nodes, tasks, GRES, partition) starts afresh in the next, the
// rest (time, account, job name, --mem) carries on until set again; the
// environment applies to every component, the command line's ':' groups
// each to its own.
TEST(RequestTest, EachHeterogeneousComponentIsReadAsSbatchReadsIt) {
  auto r = Sbatch({"--account=phys", "job.sh"}, {{"SBATCH_QOS", "high"}},
                  "#!/bin/sh\n"
                  "#SBATCH -J het -t 30 --mem=8G -N 2 --gres=gpu:h100:4 -p gpu\n"
                  "#SBATCH hetjob -n 3\n"
                  "#SBATCH --cpus-per-task=4\n"
                  "#SBATCH packjob\n"
                  "#SBATCH -t 10 --gpus-per-node=a100:1 --mem-per-cpu=1G\n"
                  "srun true\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->ComponentCount(), 3u);
  EXPECT_EQ(r->nodes->min, 2);
  EXPECT_EQ(*r->account, "phys");
  const Request& one = r->Component(1);
  EXPECT_FALSE(one.nodes.has_value());
  EXPECT_EQ(*one.ntasks, 3);
  EXPECT_EQ(*one.cpus_per_task, 4);
  EXPECT_TRUE(one.gpus.empty());
  EXPECT_TRUE(one.partitions.empty());
  EXPECT_EQ(one.time_limit->minutes, 30);
  EXPECT_EQ(*one.mem_mb, 8192);
  EXPECT_EQ(*one.job_name, "het");
  EXPECT_EQ(*one.qos, "high");
  EXPECT_EQ(*one.account, "phys");  // the command line's first group, carried on
  const Setting* time = one.Effective(Opt::kTime);
  ASSERT_NE(time, nullptr);
  EXPECT_TRUE(time->inherited);
  EXPECT_EQ(time->origin.line, 2);
  const Request& two = r->Component(2);
  EXPECT_EQ(two.time_limit->minutes, 10);
  EXPECT_FALSE(two.ntasks.has_value());
  EXPECT_FALSE(two.cpus_per_task.has_value());
  EXPECT_EQ(two.gpu_demand.per_node, 1);
  EXPECT_EQ(two.gpus[0].type, "a100");
  EXPECT_EQ(*two.mem_per_cpu_mb, 1024);

  auto cli = Sbatch({"-N1", "--gres=gpu:2", ":", "-N3", "-p", "cpu", "job.sh"}, {},
                    "#!/bin/sh\nsrun true\n");
  ASSERT_TRUE(cli.ok()) << cli.status().message();
  ASSERT_EQ(cli->ComponentCount(), 2u);
  EXPECT_EQ(cli->nodes->min, 1);
  EXPECT_EQ(cli->gpu_demand.per_node, 2);
  EXPECT_EQ(cli->Component(1).nodes->min, 3);
  EXPECT_THAT(cli->Component(1).partitions, ElementsAre("cpu"));
  EXPECT_TRUE(cli->Component(1).gpus.empty());
  EXPECT_TRUE(cli->het_on_command_line);
  // Without ':', sbatch reads the command line again for every component.
  auto again =
      Sbatch({"-p", "debug", "job.sh"}, {}, "#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\nsrun true\n");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again->het_on_command_line);
  EXPECT_THAT(again->Component(1).partitions, ElementsAre("debug"));
  EXPECT_TRUE(again->Component(1).Effective(Opt::kPartition)->inherited);
}

TEST(CorpusTest, PyxisContainer) {
  auto r = Sbatch({kData + "pyxis_container.sh"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_THAT(r->other_container_options, ElementsAre("container-image", "container-mounts"));
  const Setting* image = r->EffectiveByName("container-image");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(*image->occurrence.value, "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(r->gpus[0].scope, GpuAsk::Scope::kPerNode);
  EXPECT_EQ(r->gpus[0].option, Opt::kGpusPerNode);
  EXPECT_THAT(r->sky.clusters, ElementsAre("beta", "gamma"));
}

TEST(CorpusTest, ModuleHeavy) {
  auto r = Sbatch({kData + "modules_heavy.sh"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_THAT(r->features, ElementsAre("h100", "ib"));
  EXPECT_EQ(*r->mem_per_gpu_mb, 40 * 1024);
  EXPECT_EQ(r->time_limit->minutes, 1440);
  std::vector<std::string> words;
  for (const auto& m : r->modules) words.push_back(m.word);
  EXPECT_THAT(words, ElementsAre("cuda/12.1", "cudnn/8.9-cuda12", "nccl/2.18.3", "python/3.11.5",
                                 "cuda/12.4", "$EXTRA"));
  EXPECT_TRUE(r->modules.back().dynamic);
}

TEST(CorpusTest, DependencyWaitHoldExport) {
  auto r = Sbatch({kData + "dependency_wait.sh"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->dependency, "afterok:4242:4243");
  EXPECT_TRUE(r->wait);
  EXPECT_TRUE(r->hold);
  EXPECT_EQ(*r->export_env, "PATH,CUDA_HOME,MY_SETTING=1");
}

}  // namespace
}  // namespace skyslurm::job
