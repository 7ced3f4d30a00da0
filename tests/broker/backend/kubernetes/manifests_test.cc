#include "broker/backend/kubernetes/manifests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/util/base64.h"
#include "broker/util/command.h"

namespace skyslurm::kube {
namespace {

using ::testing::HasSubstr;

ManifestInput Input() {
  ManifestInput in;
  in.shape.image = "ubuntu:22.04";
  in.shape.pods = 2;
  in.shape.gpus_per_pod = 8;
  in.shape.gpu_label = "nvidia.com/gpu.product";
  in.shape.gpu_type = "NVIDIA-H100-80GB-HBM3";
  in.shape.millicores = 16000;
  in.shape.memory_mb = 65536;
  in.shape.deadline_seconds = 3600;
  in.shape.job_name = "train";
  in.script = "#!/bin/bash\necho hi\n";
  in.script_args = {"--epochs", "3"};
  in.sky_id = "sky-20261202-010000-abcdef";
  in.native_id = "7";
  in.cluster = "kappa";
  in.namespace_name = "default";
  in.env = {{"SKYPILOT_TASK_ID", in.sky_id}};
  return in;
}

TEST(ManifestsTest, AnIndexedJobWithItsServiceAndScript) {
  ManifestInput in = Input();
  in.restartable = false;
  const Manifests m = BuildManifests(in);
  EXPECT_EQ(m.job["metadata"]["name"].asString(), "skyslurm-7");
  EXPECT_EQ(m.job["metadata"]["labels"][kSkyIdLabel].asString(), in.sky_id);
  const Json::Value& spec = m.job["spec"];
  EXPECT_EQ(spec["completionMode"].asString(), "Indexed");
  EXPECT_EQ(spec["completions"].asInt(), 2);
  EXPECT_EQ(spec["parallelism"].asInt(), 2);
  EXPECT_EQ(spec["backoffLimit"].asInt(), 0);
  EXPECT_FALSE(spec.isMember("podFailurePolicy"));  // not restartable
  EXPECT_EQ(spec["activeDeadlineSeconds"].asInt(), 3600);
  const Json::Value& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].asString(), "Never");
  EXPECT_EQ(pod["subdomain"].asString(), "skyslurm-7");
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.product"].asString(), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(pod["tolerations"][0]["key"].asString(), "nvidia.com/gpu");
  const Json::Value& c = pod["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"].asString(), "8");
  EXPECT_EQ(c["resources"]["requests"]["cpu"].asString(), "16000m");
  EXPECT_EQ(c["resources"]["requests"]["memory"].asString(), "65536Mi");
  EXPECT_EQ(c["args"][1].asString(), "3");
  EXPECT_EQ(m.service["spec"]["clusterIP"].asString(), "None");
  EXPECT_EQ(m.service["spec"]["selector"][kJobIdLabel].asString(), "7");
  EXPECT_EQ(m.config_map["data"]["script"].asString(), in.script);
  EXPECT_EQ(spec["template"]["metadata"]["labels"][kJobIdLabel].asString(), "7");
  // Restartable: a disruption does not count against the job.
  const Manifests r = BuildManifests(Input());
  EXPECT_EQ(r.job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["type"].asString(),
            "DisruptionTarget");
}

// The job's environment values (a task's secrets among them) are in a
// Secret the Job owns, each variable a secretKeyRef: none is a plain value
// in the pod's spec, which anyone who may read pods reads.
TEST(ManifestsTest, ContainerMountsAreTheirVolumes) {
  ManifestInput in = Input();
  in.shape.mounts = {{true, "scratch-claim", "ann/run", "/work", false},
                     {false, "/mnt/datasets/imagenet", "", "/imagenet", true}};
  const Json::Value pod = BuildManifests(in).job["spec"]["template"]["spec"];
  const Json::Value& mounts = pod["containers"][0]["volumeMounts"];
  const Json::Value& volumes = pod["volumes"];
  ASSERT_EQ(volumes.size(), 3u);  // the two and skyslurm's own
  EXPECT_EQ(volumes[0]["name"].asString(), "mount-0");
  EXPECT_EQ(volumes[0]["persistentVolumeClaim"]["claimName"].asString(), "scratch-claim");
  EXPECT_EQ(volumes[1]["hostPath"]["path"].asString(), "/mnt/datasets/imagenet");
  EXPECT_EQ(volumes[1]["hostPath"]["type"].asString(), "Directory");
  bool work = false, imagenet = false;
  for (const auto& m : mounts) {
    if (m["name"] == "mount-0") {
      work = m["mountPath"] == "/work" && m["subPath"] == "ann/run" && !m.isMember("readOnly");
    }
    if (m["name"] == "mount-1") imagenet = m["mountPath"] == "/imagenet" && m["readOnly"] == true;
  }
  EXPECT_TRUE(work) << mounts;
  EXPECT_TRUE(imagenet) << mounts;
}

TEST(ManifestsTest, TheJobsValuesAreInASecretNeverInThePodSpec) {
  ManifestInput in = Input();
  in.env = {{"SKYPILOT_TASK_ID", "sky-1"}, {"HF_TOKEN", "hf_k8s_secret"}};
  const Manifests m = BuildManifests(in);
  EXPECT_EQ(m.secret["kind"].asString(), "Secret");
  EXPECT_EQ(m.secret["metadata"]["name"].asString(), "skyslurm-7");
  EXPECT_EQ(m.secret["data"]["e0"].asString(), Base64Encode("hf_k8s_secret"));
  const std::string pod = Json::FastWriter().write(m.job);
  EXPECT_EQ(pod.find("hf_k8s_secret"), std::string::npos) << pod;
  bool referenced = false;
  for (const auto& e : m.job["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (e["name"].asString() != "HF_TOKEN") continue;
    referenced = e["valueFrom"]["secretKeyRef"]["name"].asString() == "skyslurm-7" &&
                 e["valueFrom"]["secretKeyRef"]["key"].asString() == "e0" && !e.isMember("value");
  }
  EXPECT_TRUE(referenced);
  // skyslurm's own values are plain; a job with no others makes no Secret.
  in.env = {{"SKYPILOT_TASK_ID", "sky-1"}};
  EXPECT_TRUE(BuildManifests(in).secret.isNull());
}

// Issue 14: the job's folder travels in the ConfigMap (binaryData, base64)
// and is unpacked into an emptyDir the container runs in.
TEST(ManifestsTest, TheJobsFolderTravelsInItsConfigMapAndIsUnpackedInAnEmptyDir) {
  EXPECT_FALSE(BuildManifests(Input()).config_map.isMember("binaryData"));
  ManifestInput in = Input();
  in.folder_archive = std::string("\x1f\x8b\x08\x00", 4);
  in.workdir = kFolderPath;
  const Manifests m = BuildManifests(in);
  EXPECT_EQ(m.config_map["binaryData"]["folder.tar.gz"].asString(), "H4sIAA==");
  const Json::Value& pod = m.job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["volumes"][1]["name"].asString(), "skyslurm-work");
  EXPECT_TRUE(pod["volumes"][1]["emptyDir"].isObject());
  const Json::Value& c = pod["containers"][0];
  EXPECT_EQ(c["workingDir"].asString(), "/skyslurm/work");
  EXPECT_EQ(c["volumeMounts"][1]["mountPath"].asString(), "/skyslurm/work");
  EXPECT_NE(EntryPointScript().find("tar -xzf \"$dir/folder.tar.gz\" -C /skyslurm/work"),
            std::string::npos);
}

// The pod's srun runs its command here, once, whatever sizing options come
// first (the entry point runs in the fake kubelet's pods: integration tests).
TEST(ManifestsTest, ThePodsSrunRunsTheCommandOnce) {
  LocalCommandRunner runner;
  auto run = [&](std::vector<std::string> args) {
    Command c{.argv = {"sh", "-c", PodSrunScript(), "srun"}};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    auto out = runner.Run(c);
    EXPECT_TRUE(out.ok());
    return *out;
  };
  EXPECT_EQ(run({"-N1", "--ntasks", "1", "-l", "--gpus=8", "echo", "stepped", "-n"}).out,
            "stepped -n\n");
  EXPECT_EQ(run({"-n", "4", "--", "echo", "-N"}).out, "-N\n");
  auto none = run({"--ntasks=2"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("No command given"));
  EXPECT_THAT(EntryPointScript(), HasSubstr("exec \"$dir/script\" \"$@\""));
}

}  // namespace
}  // namespace skyslurm::kube
