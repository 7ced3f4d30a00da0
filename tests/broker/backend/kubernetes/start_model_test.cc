#include "broker/backend/kubernetes/start_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/backend/kubernetes/inventory.h"
#include "tests/broker/kube/kube_fixtures.h"

namespace skyslurm::kube {
namespace {

using ::testing::HasSubstr;
using testing::Node;
using testing::Pod;

constexpr std::time_t kNow = 1796173200;  // 2026-12-02T01:00:00Z

JobShape H100(std::int64_t pods, std::int64_t gpus = 8) {
  JobShape s;
  s.image = "ubuntu:22.04";
  s.pods = pods;
  s.gpus_per_pod = gpus;
  s.gpu_type = "NVIDIA-H100-80GB-HBM3";
  s.millicores = 1000;
  return s;
}

cluster::Inventory Kappa(std::vector<Json::Value> pods) {
  return InventoryFromObjects(
      {Node("kappa-n1", 8, "NVIDIA-H100-80GB-HBM3"), Node("kappa-n2", 8, "NVIDIA-H100-80GB-HBM3"),
       Node("kappa-n3", 4, "NVIDIA-L4")},
      pods, {"kappa", "default", {}, kNow});
}

TEST(KubeStartModelTest, NowWhenFreeNodesHoldEveryPod) {
  auto s = ModelStart(H100(2), Kappa({}), kNow);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start, kNow);
  EXPECT_EQ(s->basis, "free nodes now");
  EXPECT_THAT(s->nodes, ::testing::ElementsAre("kappa-n1", "kappa-n2"));
}

TEST(KubeStartModelTest, LaterByRunningPodsDeadlinesAndAfterPendingPodsAhead) {
  // n1 busy for 10 more min (deadline), n2 busy with no deadline: assumed 1 h.
  auto s = ModelStart(H100(1),
                      Kappa({Pod("a", "kappa-n1", 8, "Running", "2026-12-02T00:50:00Z",
                                 R"("activeDeadlineSeconds":1200,)"),
                             Pod("b", "kappa-n2", 8, "Running")}),
                      kNow);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start, kNow + 1200);  // started 01:00:00 per status.startTime
  EXPECT_EQ(s->basis, "running pods' deadlines");
  // A pending pod ahead takes n1 when it frees: this job waits for n2.
  auto after = ModelStart(H100(1),
                          Kappa({Pod("a", "kappa-n1", 8, "Running", "2026-12-02T00:50:00Z",
                                     R"("activeDeadlineSeconds":1200,)"),
                                 Pod("b", "kappa-n2", 8, "Running"),
                                 Pod("c", "", 8, "Pending", "2026-12-02T00:59:00Z")}),
                          kNow);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->start, kNow + 3600);
  EXPECT_THAT(after->basis, HasSubstr("those without one assumed to end within 60 min"));
  EXPECT_THAT(after->basis, HasSubstr("after 1 pending pod(s) ahead"));
}

TEST(KubeStartModelTest, NoStartInViewWhenItNeverFits) {
  EXPECT_FALSE(ModelStart(H100(3), Kappa({}), kNow));
  EXPECT_FALSE(ModelStart(H100(1, 9), Kappa({}), kNow));
  // A pending pod that can never fit is no one's obstacle.
  auto s = ModelStart(H100(1), Kappa({Pod("huge", "", 9, "Pending")}), kNow);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start, kNow);
}

}  // namespace
}  // namespace skyslurm::kube
