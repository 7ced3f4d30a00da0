#include "broker/backend/kubernetes/inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/kube/quantity.h"
#include "tests/broker/kube/kube_fixtures.h"

namespace skyslurm::kube {
namespace {

using ::testing::ElementsAre;
using testing::Node;
using testing::Pod;

TEST(QuantityTest, CpusMemoryAndCounts) {
  EXPECT_EQ(Millicores("500m"), 500);
  EXPECT_EQ(Millicores("2"), 2000);
  EXPECT_EQ(Millicores("1.5"), 1500);
  EXPECT_EQ(Bytes("16Gi"), 17179869184);
  EXPECT_EQ(Bytes("512M"), 512000000);
  EXPECT_EQ(Bytes("1e3"), 1000);
  EXPECT_EQ(Count("8"), 8);
  EXPECT_FALSE(Millicores("lots").has_value());
  EXPECT_FALSE(Bytes("12Qi").has_value());
}

TEST(KubeInventoryTest, GpusUsedByBoundPodsAndTheTypeFromLabels) {
  Json::Value gke = Node("kappa-g1", 4, "");
  gke["metadata"]["labels"].removeMember("nvidia.com/gpu.product");
  gke["metadata"]["labels"]["cloud.google.com/gke-accelerator"] = "nvidia-l4";
  const std::vector<Json::Value> nodes = {Node("kappa-n1", 8, "NVIDIA-H100-80GB-HBM3"),
                                          Node("kappa-n2", 8, "NVIDIA-H100-80GB-HBM3", false), gke};
  const std::vector<Json::Value> pods = {Pod("a", "kappa-n1", 6, "Running"),
                                         Pod("b", "kappa-n1", 2, "Succeeded"),
                                         Pod("c", "", 8, "Pending", "2026-12-02T01:30:00Z")};
  cluster::Inventory inv = InventoryFromObjects(nodes, pods, {"kappa", "default", {}, 100});
  const auto& d = inv.description;
  ASSERT_EQ(d.nodes.size(), 3u);
  EXPECT_EQ(d.nodes[0].cpus, 64);
  EXPECT_EQ(d.nodes[0].memory_mb, 512 * 1024);
  EXPECT_EQ(d.nodes[0].gres[0].type, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(d.nodes[0].gres_used[0].count, 6);  // the finished pod holds nothing
  EXPECT_EQ(d.nodes[0].state, "mixed");
  EXPECT_THAT(d.nodes[0].features, ElementsAre("nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
                                               "gpu-taint:nvidia.com/gpu"));
  EXPECT_TRUE(TakesPod(d.nodes[0], true));
  EXPECT_FALSE(TakesPod(d.nodes[0], false));  // kept for GPU work
  EXPECT_EQ(d.nodes[1].state, "down");
  EXPECT_FALSE(d.nodes[1].usable());
  EXPECT_EQ(d.nodes[2].gres[0].type, "nvidia-l4");
  EXPECT_EQ(d.nodes[2].state, "idle");
  ASSERT_EQ(d.partitions.size(), 1u);
  EXPECT_EQ(d.partitions[0].name, "default");
  // The queue: unfinished pods; the pending one is demand ahead.
  ASSERT_EQ(inv.jobs.size(), 2u);
  EXPECT_EQ(inv.jobs[1].state, "PENDING");
  EXPECT_EQ(inv.jobs[1].gpus_per_node, 8);
  EXPECT_EQ(inv.jobs[0].nodelist, "kappa-n1");
}

TEST(KubeInventoryTest, ASiteLabelFirstAndUntoleratedTaintsDrain) {
  Json::Value n = Node("n", 8, "NVIDIA-H100-80GB-HBM3", true, "dedicated");
  n["metadata"]["labels"]["example.org/gpu"] = "H100";
  cluster::Inventory inv = InventoryFromObjects({n}, {}, {"k", "ml", {"example.org/gpu"}, 0});
  EXPECT_EQ(inv.description.nodes[0].gres[0].type, "H100");
  EXPECT_EQ(inv.description.nodes[0].state, "drain");  // dedicated=present:NoSchedule
  Json::Value cordoned = Node("m", 8, "X");
  cordoned["spec"]["unschedulable"] = true;
  EXPECT_EQ(InventoryFromObjects({cordoned}, {}, {"k", "ml", {}, 0}).description.nodes[0].state,
            "drain");
  EXPECT_TRUE(ToleratedTaint("nvidia.com/gpu", "NoSchedule"));
  EXPECT_TRUE(ToleratedTaint("anything", "PreferNoSchedule"));
  EXPECT_FALSE(ToleratedTaint("node-role.kubernetes.io/control-plane", "NoSchedule"));
}

}  // namespace
}  // namespace skyslurm::kube
