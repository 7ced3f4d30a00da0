// The Slurm backend's commands against the testbed's gamma, where Slurm's
// answer and what it did differ.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "broker/backend/slurm/slurm_local.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

class SlurmBackendTestbedTest : public TestbedTest {
 protected:
  void TearDown() override {
    if (!array_.empty()) RunOn(tb_, "gamma", {"scancel", array_});
  }
  std::string array_;
};

// Regression (issue 16, a CI run): once a spread array's pending tasks were
// held and cancelled one by one (a move took every one still waiting),
// `scontrol update JobId=N ArrayTaskThrottle=K` exits 1 ("Job has already
// finished" for the cancelled records) having limited the running tasks;
// taken as refused, the move waited minutes and lost its tasks.
TEST_F(SlurmBackendTestbedTest, AThrottleSetOnTheRunningTasksOfAnArrayWithCancelledOnesIsSet) {
  array_ = Submit(tb_, "gamma",
                  {"--gpus=1", "-t", "3", "-J", "skythrottle-backend", "-o", "/dev/null",
                   "--array=0-5%2", "--wrap", "sleep 120"});
  ASSERT_FALSE(array_.empty());
  auto running = [&] {
    std::istringstream rows(
        RunOn(tb_, "gamma", {"squeue", "-h", "-r", "-j", array_, "-t", "R", "-o", "%i"}).out);
    int n = 0;
    for (std::string line; std::getline(rows, line);) ++n;
    return n;
  };
  for (int i = 0; i < 150 && running() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(running(), 2);
  // As a move does it: the last ones first, then the rest still waiting.
  ASSERT_TRUE(RunOn(tb_, "gamma", {"scontrol", "hold", array_ + "_[4-5]"}).success());
  ASSERT_TRUE(RunOn(tb_, "gamma", {"scontrol", "hold", array_ + "_[2-3]"}).success());
  ASSERT_TRUE(RunOn(tb_, "gamma", {"scancel", array_ + "_[2-5]"}).success());
  // What the backend was handed: Slurm's own exit code says refused.
  CommandOutput raw =
      RunOn(tb_, "gamma", {"scontrol", "update", "JobId=" + array_, "ArrayTaskThrottle=2"});
  ASSERT_NE(raw.exit_code, 0) << "Slurm now accepts this: the backend's check is not needed";

  backend::SlurmLocalBackend gamma("gamma", tb_.SlurmConf("gamma"), "");
  EXPECT_TRUE(gamma.SetArrayThrottle(array_, 1, std::chrono::seconds(30)).ok());
  const std::string shown =
      RunOn(tb_, "gamma", {"scontrol", "-o", "show", "job", array_ + "_0"}).out;
  EXPECT_NE(shown.find(" ArrayTaskThrottle=1 "), std::string::npos) << shown;
  // Nothing live left: nothing to limit, which is done (the update exits 1).
  RunOn(tb_, "gamma", {"scancel", array_});
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_TRUE(gamma.SetArrayThrottle(array_, 3, std::chrono::seconds(30)).ok())
      << "nothing live is left to limit";
}

}  // namespace
}  // namespace skyslurm::testing
