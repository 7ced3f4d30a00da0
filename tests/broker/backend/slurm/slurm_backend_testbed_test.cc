// The Slurm backend's commands against the testbed's gamma, where Slurm's
// answer and what it did differ.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
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

// A job's output is read where it is, from an offset (the dashboard's and
// `skyslurm logs`' polls), never whole; a StdOut= path with a space in it
// is read whole, not cut at the space.
TEST_F(SlurmBackendTestbedTest, OutputIsReadFromAnOffsetAndItsPathMayHaveSpaces) {
  TempDir tmp;
  const std::string dir = tmp.File("my logs");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  const std::string id = Submit(
      tb_, "alpha", {"-t", "1", "-o", dir + "/out %j.txt", "--wrap", "printf 0123456789abc"});
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(WaitForJobEnd(tb_, "alpha", id), "COMPLETED");
  backend::SlurmLocalBackend alpha("alpha", tb_.SlurmConf("alpha"), "");
  auto part = alpha.OutputFrom(id, 5, 4, std::chrono::seconds(30));
  ASSERT_TRUE(part.ok()) << part.status().message();
  EXPECT_EQ(part->bytes, "5678");
  EXPECT_EQ(part->size, 13u);
  auto past = alpha.OutputFrom(id, 20, 4, std::chrono::seconds(30));
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(past->bytes, "");
  EXPECT_EQ(past->size, 13u);
  auto whole = alpha.Output(id, std::chrono::seconds(30));
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(*whole, "0123456789abc");
  EXPECT_EQ(
      backend::StdOutPathOf("JobId=1 StdIn=/dev/null StdOut=/a b/o 1.txt Power= TresPerNode=x"),
      "/a b/o 1.txt");
  EXPECT_EQ(backend::StdOutPathOf("JobId=1 StdOut=/x.out\n"), "/x.out");
  EXPECT_EQ(backend::StdOutPathOf("JobId=1"), "");
}

}  // namespace
}  // namespace skyslurm::testing
