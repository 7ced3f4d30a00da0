// Regression (issue 11): a probe thread that outlived its deadline held a raw
// pointer to a backend that `skyslurm explain` destroyed when it exited. The
// thread now holds a share of the backend (ClusterHandle::backend_owner).
// Under ASan+UBSan a use after free here aborts the test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "broker/backend/slurm/slurm_translator.h"
#include "broker/backend/backend.h"
#include "broker/place/planner.h"

namespace skyslurm::place {
namespace {

std::atomic<int> g_alive{0};

// A cluster that answers late, and reads its own members when it does.
class SlowBackend final : public backend::Backend {
 public:
  explicit SlowBackend(std::chrono::milliseconds delay = std::chrono::milliseconds(900),
                       bool holds_a_view = false)
      : delay_(delay), holds_a_view_(holds_a_view) {
    ++g_alive;
  }
  ~SlowBackend() override { --g_alive; }
  const std::string& name() const override { return name_; }
  backend::Capabilities capabilities() const override { return {"slurm", {}}; }
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return translate::TranslateForSlurm(request, target, context);
  }
  Result<cluster::Inventory> Probe(std::chrono::milliseconds) override {
    std::this_thread::sleep_for(delay_);  // by default past ProbeAll's grace of 500 ms
    cluster::Inventory inv;
    inv.description.name = name_;  // touches the object after the caller gave up
    return inv;
  }
  std::optional<Result<cluster::Inventory>> ProbeAtOnce() override {
    if (!holds_a_view_) return std::nullopt;
    cluster::Inventory inv;
    inv.description.name = "held";
    return inv;
  }
  Result<backend::StartEstimate> EstimateStart(const translate::TranslatedJob&,
                                               std::chrono::milliseconds) override {
    return UnavailableError("not asked");
  }
  Result<backend::JobKey> Submit(const backend::SubmitSpec&, std::chrono::milliseconds) override {
    return UnavailableError("not asked");
  }
  Result<std::vector<backend::JobInfo>> Queue(std::chrono::milliseconds) override {
    return std::vector<backend::JobInfo>{};
  }
  Status Cancel(const std::string&, bool, std::chrono::milliseconds) override { return OkStatus(); }
  Result<std::string> Output(const std::string&, std::chrono::milliseconds) override {
    return std::string();
  }

 private:
  std::chrono::milliseconds delay_;
  bool holds_a_view_;
  std::string name_ = std::string(64, 'b');  // on the heap
};

TEST(ProbeLifetimeTest, ALateProbeKeepsItsBackendAlive) {
  {
    std::vector<ClusterHandle> handles(1);
    auto backend = std::make_shared<SlowBackend>();
    handles[0].name = "beta";
    handles[0].backend = backend.get();
    handles[0].backend_owner = backend;
    backend.reset();
    auto results = ProbeAll(handles, std::chrono::milliseconds(20));
    EXPECT_FALSE(results[0].inventory.has_value());
    EXPECT_NE(results[0].unreachable.find("no answer within"), std::string::npos);
    // The handles (the caller's workspace) go away while the probe runs.
  }
  EXPECT_EQ(g_alive.load(), 1);  // kept by the late thread
  for (int i = 0; i < 100 && g_alive.load() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(g_alive.load(), 0);  // released when it finished
}

// Regression (issue 12's CI): a probe that answered in time released its share
// of the backend only after it had woken the caller. When that share was the
// last one, the thread tore the backend down (closing its SSH channels) while
// `skyslurm explain`, already done, ran exit(): OpenSSL's cleanup and
// libssh's channel close raced, and explain died of SIGSEGV after printing its
// answer (1 run in 20 on a loaded 2-core machine). Now the share is released
// before the caller is woken, so it is never the thread that destroys it.
TEST(ProbeLifetimeTest, AProbeThatAnsweredHoldsNoShareOnceTheCallerIsWoken) {
  for (int round = 0; round < 300; ++round) {
    std::vector<ClusterHandle> handles(2);
    std::weak_ptr<SlowBackend> watch[2];
    for (std::size_t i = 0; i < 2; ++i) {
      auto backend = std::make_shared<SlowBackend>(std::chrono::milliseconds(0));
      watch[i] = backend;
      handles[i].name = i == 0 ? "alpha" : "beta";
      handles[i].backend = backend.get();
      handles[i].backend_owner = backend;
    }
    auto results = ProbeAll(handles, std::chrono::milliseconds(2000));
    ASSERT_TRUE(results[0].inventory.has_value());
    ASSERT_TRUE(results[1].inventory.has_value());
    // The caller's handles hold the only shares left.
    ASSERT_EQ(watch[0].use_count(), 1) << "round " << round;
    ASSERT_EQ(watch[1].use_count(), 1) << "round " << round;
    handles.clear();
    ASSERT_EQ(g_alive.load(), 0) << "round " << round;
  }
}

// A view the backend holds is the answer, taken on the caller's thread: no
// thread is started for it (a burst asks every cluster per decision), and
// a probe that would take 900 ms is never made.
TEST(ProbeLifetimeTest, AViewHeldInMemoryIsTakenWithoutAThreadOrAProbe) {
  std::vector<ClusterHandle> handles(1);
  auto backend = std::make_shared<SlowBackend>(std::chrono::milliseconds(900), true);
  handles[0].name = "beta";
  handles[0].backend = backend.get();
  handles[0].backend_owner = backend;
  const std::size_t before = TasksStillRunning();
  auto results = ProbeAll(handles, std::chrono::milliseconds(20));
  ASSERT_TRUE(results[0].inventory.has_value()) << results[0].unreachable;
  EXPECT_EQ(results[0].inventory->description.name, "held");
  EXPECT_LE(TasksStillRunning(), before) << "a thread was started";
}

}  // namespace
}  // namespace skyslurm::place
