#include "broker/backend/kubernetes/job_translator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/backend/kubernetes/inventory.h"
#include "tests/broker/kube/kube_fixtures.h"

namespace skyslurm::kube {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

class KubeTranslatorTest : public ::testing::Test {
 protected:
  KubeTranslatorTest() {
    kappa_ = InventoryFromObjects({testing::Node("kappa-n1", 8, "NVIDIA-H100-80GB-HBM3"),
                                   testing::Node("kappa-n2", 8, "NVIDIA-H100-80GB-HBM3"),
                                   testing::Node("kappa-n3", 4, "NVIDIA-L4")},
                                  {}, {"kappa", "default", {}, 0})
                 .description;
    settings_.name = "kappa";
    settings_.kind = "kubernetes";
    settings_.images = {{"cuda/12.4", "nvcr.io/nvidia/pytorch:24.01-py3"},
                        {"cuda", "ubuntu:22.04"}};
  }
  translate::Translation Translate(std::vector<std::string> args, std::string script,
                                   const translate::PathRoots* home_roots = nullptr,
                                   const translate::PathRoots* kappa_roots = nullptr) {
    job::RequestInput in;
    in.args = std::move(args);
    in.args.push_back("train.sh");
    in.script_text = std::move(script);
    auto r = job::ParseRequest(in);
    EXPECT_TRUE(r.ok()) << r.status().message();
    translate::TranslateContext ctx{"alpha", &catalog_, &settings_, "", nullptr};
    ctx.home_roots = home_roots;
    ctx.target_roots = kappa_roots;
    return TranslateForKubernetes(*r, kappa_, ctx);
  }
  JobShape Shape(std::vector<std::string> args, std::string script = "#!/bin/sh\ntrue\n") {
    args.push_back("--sky-image=ubuntu:22.04");
    auto t = Translate(std::move(args), std::move(script));
    EXPECT_TRUE(t.ok()) << ::testing::PrintToString(t.reasons);
    return t.ok() ? *ShapeOf(*t.job) : JobShape{};
  }
  cluster::Description kappa_;
  catalog::AcceleratorCatalog catalog_;
  config::ClusterSettings settings_;
};

TEST_F(KubeTranslatorTest, TheMainH100JobBecomesTwoPodsWithTheirShape) {
  auto t = Translate({"--nodes=2", "--gres=gpu:h100:8", "--cpus-per-task=16", "--mem=64G",
                      "--time=01:00:00", "--job-name=train"},
                     "#!/bin/bash\nmodule load cuda/12.4\nsrun python train.py\n");
  ASSERT_TRUE(t.ok()) << (t.reasons.empty() ? "" : t.reasons.front());
  auto shape = ShapeOf(*t.job);
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->pods, 2);
  EXPECT_EQ(shape->gpus_per_pod, 8);
  EXPECT_EQ(shape->gpu_label, "nvidia.com/gpu.product");
  EXPECT_EQ(shape->gpu_type, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(shape->millicores, 16000);
  EXPECT_EQ(shape->memory_mb, 65536);
  EXPECT_EQ(shape->deadline_seconds, 3600);
  EXPECT_EQ(shape->image, "nvcr.io/nvidia/pytorch:24.01-py3");  // module cuda/12.4
  EXPECT_EQ(shape->job_name, "train");
  EXPECT_TRUE(t.job->args.empty());  // no sbatch options on Kubernetes
  EXPECT_THAT(t.job->fitting_partitions, ::testing::ElementsAre("default"));
  EXPECT_THAT(t.job->caveats, Contains(HasSubstr("srun in the script runs its command once")));
  EXPECT_THAT(t.job->changes.front().where, "train.sh:2");
}

TEST_F(KubeTranslatorTest, TheImageComesFromTheUserFirstThenTheSite) {
  auto sky = Translate({"--sky-image=ubuntu:22.04", "--gres=gpu:l4:1"},
                       "#!/bin/sh\nmodule load cuda/12.4\n");
  ASSERT_TRUE(sky.ok());
  EXPECT_EQ(ShapeOf(*sky.job)->image, "ubuntu:22.04");
  EXPECT_EQ(ShapeOf(*sky.job)->gpu_type, "NVIDIA-L4");
  auto by_name = Translate({"--gpus-per-node=1"}, "#!/bin/sh\nmodule load cuda/11.8\nhostname\n");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(ShapeOf(*by_name.job)->image, "ubuntu:22.04");
  auto none = Translate({"--gpus-per-node=1"}, "#!/bin/sh\nhostname\n");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.reasons.front(), HasSubstr("no container image: give --sky-image"));
  settings_.default_image = "ubuntu:22.04";
  EXPECT_TRUE(Translate({"--gpus-per-node=1"}, "#!/bin/sh\nhostname\n").ok());
}

// Every kappa node carries the GPU operators' taint: a job without GPUs is
// not sent where only GPU pods are welcome; an untainted node takes it.
TEST_F(KubeTranslatorTest, AJobWithoutGpusKeepsOffNodesKeptForGpuWork) {
  settings_.default_image = "ubuntu:22.04";
  auto cpu = Translate({"-c", "4"}, "#!/bin/sh\nhostname\n");
  ASSERT_FALSE(cpu.ok());
  EXPECT_THAT(cpu.reasons.front(), HasSubstr("its 3 usable node(s) are kept for GPU work"));
  Json::Value plain = testing::Node("kappa-c1", 0, "", true, "none");
  plain["spec"].removeMember("taints");
  kappa_ = InventoryFromObjects({testing::Node("kappa-n1", 8, "NVIDIA-H100-80GB-HBM3"), plain}, {},
                                {"kappa", "default", {}, 0})
               .description;
  EXPECT_TRUE(Translate({"-c", "4"}, "#!/bin/sh\nhostname\n").ok());
}

TEST_F(KubeTranslatorTest, WhatCannotMeanTheSameThereIsRefusedSayingWhy) {
  settings_.default_image = "ubuntu:22.04";
  auto check = [&](std::vector<std::string> args, std::string script, const std::string& why) {
    auto t = Translate(std::move(args), std::move(script));
    ASSERT_FALSE(t.ok()) << why;
    std::string all;
    for (const auto& r : t.reasons) all += r + "\n";
    EXPECT_THAT(all, HasSubstr(why));
  };
  check({"--dependency=afterok:42"}, "#!/bin/sh\ntrue\n", "names Slurm job ids");
  check({"--array=1-4"}, "#!/bin/sh\ntrue\n", "job arrays run on Slurm clusters only");
  check({"--nodelist=alpha-n1"}, "#!/bin/sh\ntrue\n", "names Slurm nodes");
  check({"--constraint=ib"}, "#!/bin/sh\ntrue\n", "names Slurm node features");
  check({"--gres=gpu:a100:1"}, "#!/bin/sh\ntrue\n", "no node has GPU type a100");
  check({"--nodes=3", "--gres=gpu:h100:8"}, "#!/bin/sh\ntrue\n", "no room for 3 pod(s)");
  check({"--gres=gpu:l4:8"}, "#!/bin/sh\ntrue\n",
        "no room for 1 pod(s) of 8 GPU(s) of type NVIDIA-L4");
  check({"--nodes=2"}, "#!/bin/sh\nsrun -N2 hostname\n",
        "train.sh:2: srun -N2 needs other nodes' slots");
  check({"--nodes=2"}, "#!/bin/sh\nsrun --nodelist=x hostname\n", "needs other nodes' slots");
  check({"--gpus=3", "--nodes=2"}, "#!/bin/sh\ntrue\n", "3 GPUs do not divide evenly over 2 pods");
}

// pyxis' enroot forms are images a pod can pull: REGISTRY#PATH becomes
// REGISTRY/PATH (else the pod fails InvalidImageName); a squashfs file is
// refused, naming the option.
TEST_F(KubeTranslatorTest, APyxisImageIsTheReferenceAPodPulls) {
  auto t = Translate({"--gres=gpu:1"},
                     "#!/bin/sh\n#SBATCH --container-image registry.example.org\\#org/image:1\n"
                     "true\n");
  ASSERT_TRUE(t.ok()) << ::testing::PrintToString(t.reasons);
  EXPECT_EQ(ShapeOf(*t.job)->image, "registry.example.org/org/image:1");
  EXPECT_THAT(t.job->changes,
              Contains(::testing::Field(&translate::Change::why,
                                        HasSubstr("--container-image=registry.example.org#org/"
                                                  "image:1, as a registry names it"))));
  auto file =
      Translate({"--gres=gpu:1", "--container-image=/scratch/images/pt.sqsh"}, "#!/bin/sh\ntrue\n");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.reasons, Contains(HasSubstr("command line: --container-image: "
                                               "'/scratch/images/pt.sqsh' is a squashfs file")));
}

// Pods are sized by every CPU and memory option sbatch has.
TEST_F(KubeTranslatorTest, PodsAreSizedByEveryCpuAndMemoryOption) {
  JobShape per_gpu = Shape({"--gpus-per-node=h100:2", "--cpus-per-gpu=8", "--mem-per-gpu=10G"});
  EXPECT_EQ(per_gpu.millicores, 16000);
  EXPECT_EQ(per_gpu.memory_mb, 20480);
  JobShape per_cpu =
      Shape({"--gres=gpu:1", "--ntasks-per-node=4", "--cpus-per-task=3", "--mem-per-cpu=1G"});
  EXPECT_EQ(per_cpu.millicores, 12000);
  EXPECT_EQ(per_cpu.memory_mb, 12288);
  // Whole nodes: the smallest node that takes the pod (64 CPUs, 512 GiB).
  JobShape exclusive = Shape({"--exclusive", "--gres=gpu:h100:1"});
  EXPECT_EQ(exclusive.millicores, 64000);
  EXPECT_EQ(exclusive.memory_mb, 524288);
  JobShape all_memory = Shape({"--gres=gpu:1", "--mem=0", "--cpus-per-task=2"});
  EXPECT_EQ(all_memory.millicores, 2000);
  EXPECT_EQ(all_memory.memory_mb, 524288);
  auto noted =
      Translate({"--gres=gpu:1", "--exclusive", "--sky-image=ubuntu:22.04"}, "#!/bin/sh\ntrue\n");
  ASSERT_TRUE(noted.ok());
  EXPECT_THAT(noted.job->caveats,
              Contains(HasSubstr("--exclusive: each pod asks for all of the smallest node")));
}

// --container-mounts become volumes where kappa's paths name the root the
// source lies under (a node folder, or a claim); any other source is refused.
TEST_F(KubeTranslatorTest, ContainerMountsAreVolumesOfTheRootsThePathsName) {
  const translate::PathRoots home =
      translate::ExpandRoots({{"scratch", "/scratch/%u"}, {"data", "/data"}}, "ann");
  const translate::PathRoots kappa = translate::ExpandRoots(
      {{"scratch", "pvc:scratch-claim/%u"}, {"data", "/mnt/datasets"}}, "ann");
  auto t = Translate({"--gres=gpu:1", "--sky-image=ubuntu:22.04",
                      "--container-mounts=/scratch/ann/run:/work,/data/imagenet:/imagenet:ro"},
                     "#!/bin/sh\ntrue\n", &home, &kappa);
  ASSERT_TRUE(t.ok()) << ::testing::PrintToString(t.reasons);
  const JobShape shape = *ShapeOf(*t.job);
  ASSERT_EQ(shape.mounts.size(), 2u);
  EXPECT_TRUE(shape.mounts[0].claim);
  EXPECT_EQ(shape.mounts[0].source, "scratch-claim");
  EXPECT_EQ(shape.mounts[0].sub_path, "ann/run");
  EXPECT_EQ(shape.mounts[0].mount_path, "/work");
  EXPECT_FALSE(shape.mounts[1].claim);
  EXPECT_EQ(shape.mounts[1].source, "/mnt/datasets/imagenet");
  EXPECT_EQ(shape.mounts[1].mount_path, "/imagenet");
  EXPECT_TRUE(shape.mounts[1].read_only);
  auto refused = Translate(
      {"--gres=gpu:1", "--sky-image=ubuntu:22.04", "--container-mounts=/opt/tools:/tools"},
      "#!/bin/sh\ntrue\n", &home, &kappa);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.reasons, Contains(HasSubstr("command line: --container-mounts "
                                                  "/opt/tools:/tools: /opt/tools lies under no "
                                                  "root that kappa's paths name")));
}

}  // namespace
}  // namespace skyslurm::kube
