#include "broker/kube/facts.h"

#include <gtest/gtest.h>

namespace skyslurm::kube {
namespace {

// A pod as a real API server writes it: managedFields, nulls, a number where
// a quantity is usually a string, two containers (one with requests, one
// with limits only), an init container that does not count.
constexpr const char* kPod = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {"name": "train-0-abcde", "namespace": "ml", "resourceVersion": "4711",
               "creationTimestamp": "2026-12-02T01:30:00Z", "deletionTimestamp": null,
               "labels": {"job-name": "train", "skyslurm.io/user": "ann",
                          "batch.kubernetes.io/job-name": "train"},
               "managedFields": [{"manager": "kube-controller-manager",
                                  "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]},
  "spec": {"nodeName": "gpu-7", "activeDeadlineSeconds": 3600,
           "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
           "initContainers": [{"name": "init", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
           "containers": [
             {"name": "main", "image": "pytorch", "command": ["sh", "-c", "echo \"}]\""],
              "resources": {"requests": {"cpu": "1500m", "memory": "4Gi", "nvidia.com/gpu": 2},
                            "limits": {"cpu": "8", "memory": "8Gi", "nvidia.com/gpu": 2}}},
             {"name": "side", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}]},
  "status": {"phase": "Running", "startTime": "2026-12-02T01:31:00Z", "podIP": "10.0.0.7",
             "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null}]}
})";

TEST(KubeFactsTest, APodsFactsFromItsJson) {
  auto p = ReadPodFacts(kPod);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "train-0-abcde");
  EXPECT_EQ(p->namespace_name, "ml");
  EXPECT_EQ(KeyOf(*p), "ml/train-0-abcde");
  EXPECT_EQ(VersionOf(*p), "4711");
  EXPECT_EQ(p->node, "gpu-7");
  EXPECT_EQ(p->phase, "Running");
  EXPECT_EQ(p->job_name, "train");
  EXPECT_EQ(p->user, "ann");
  EXPECT_EQ(LabelOf(p->node_selector, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(p->demand.gpus, 2);  // the init container's are not held while the pod runs
  EXPECT_EQ(p->demand.millicores, 1500 + 500);
  EXPECT_EQ(p->demand.bytes, (4LL << 30) + (1LL << 30));
  EXPECT_EQ(p->created, 1796175000);  // 2026-12-02T01:30:00Z
  EXPECT_EQ(p->started, 1796175060);
  EXPECT_EQ(p->deadline_seconds, 3600);
  EXPECT_TRUE(p->HoldsItsNode());
}

TEST(KubeFactsTest, AnUnboundOrFinishedPodHoldsNothing) {
  auto pending = ReadPodFacts(R"({"metadata":{"name":"p","namespace":"d"},"spec":{},
                                  "status":{"phase":"Pending"}})");
  ASSERT_TRUE(pending.ok());
  EXPECT_FALSE(pending->HoldsItsNode());
  EXPECT_FALSE(pending->deadline_seconds.has_value());
  auto done = ReadPodFacts(R"({"spec":{"nodeName":"n"},"status":{"phase":"Succeeded"}})");
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->Finished());
  EXPECT_FALSE(done->HoldsItsNode());
}

TEST(KubeFactsTest, ANodesFactsFromItsJson) {
  auto n = ReadNodeFacts(R"({
    "metadata": {"name": "gpu-7", "resourceVersion": "9",
                 "labels": {"nvidia.com/gpu.product": "NVIDIA-L4", "kubernetes.io/os": "linux"}},
    "spec": {"unschedulable": true, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                                               {"key": "x", "value": "y", "effect": "NoExecute"}]},
    "status": {"allocatable": {"cpu": "63500m", "memory": "256Gi", "nvidia.com/gpu": "4",
                               "pods": "110"},
               "conditions": [{"type": "MemoryPressure", "status": "False"},
                              {"type": "Ready", "status": "True"}]}})");
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(KeyOf(*n), "/gpu-7");
  EXPECT_EQ(LabelOf(n->labels, "nvidia.com/gpu.product"), "NVIDIA-L4");
  EXPECT_TRUE(n->unschedulable);
  ASSERT_EQ(n->taints.size(), 2u);
  EXPECT_EQ(n->taints[1].key, "x");
  EXPECT_EQ(n->taints[1].effect, "NoExecute");
  EXPECT_EQ(n->millicores, 63500);
  EXPECT_EQ(n->bytes, 256LL << 30);
  EXPECT_EQ(n->gpus, 4);
  EXPECT_TRUE(n->ready);
  auto not_ready =
      ReadNodeFacts(R"({"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})");
  ASSERT_TRUE(not_ready.ok());
  EXPECT_FALSE(not_ready->ready);
}

TEST(KubeFactsTest, BrokenJsonIsAnErrorThatSaysWhat) {
  auto p = ReadPodFacts(R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{]}})");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("a pod: not valid JSON at byte"), std::string::npos)
      << p.status().message();
  auto n = ReadNodeFacts(R"({"metadata":{"name":"n"}} trailing)");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("a node"), std::string::npos);
  // A field of the wrong kind where a scalar is read.
  EXPECT_FALSE(ReadPodFacts(R"({"spec":{"nodeName":{"a":1}}})").ok());
  EXPECT_FALSE(ReadPodFacts(R"({"spec":{"activeDeadlineSeconds":1.5}})").ok());
}

}  // namespace
}  // namespace skyslurm::kube
