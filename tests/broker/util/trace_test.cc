#include "broker/util/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace skyslurm::trace {
namespace {

using ::testing::HasSubstr;

TEST(TraceTest, SpansGoToTheTraceOfTheirThreadOnly) {
  { Span nowhere("not traced"); }  // no trace installed: nothing, no crash
  auto t = std::make_shared<Trace>("skyslurmd");
  {
    Install on(t);
    EXPECT_EQ(Current(), t);
    { Span s("state write", Cost::kStoreWrite); }
    { Span s("exec sbatch", Cost::kLocalProcess); }
  }
  EXPECT_EQ(Current(), nullptr);
  { Span after("after the scope"); }
  ASSERT_EQ(t->spans().size(), 2u);
  EXPECT_EQ(t->spans()[0].name, "state write");
  EXPECT_EQ(t->spans()[0].thread, 0);
}

TEST(TraceTest, ThreadsThatAdoptATraceAreNumberedApart) {
  auto t = std::make_shared<Trace>("skyslurmd");
  Install on(t);
  std::thread([trace = Current()] {
    Install adopt(trace, true);
    Span s("probe gamma");
  }).join();
  std::thread([trace = Current()] {
    Install adopt(trace, true);
    Span s("probe beta");
  }).join();
  { Span s("plan"); }
  std::set<int> threads;
  for (const auto& s : t->spans()) threads.insert(s.thread);
  EXPECT_EQ(threads, (std::set<int>{0, 1, 2}));
  EXPECT_THAT(t->Render(), HasSubstr("skyslurmd[1]  probe gamma\n"));
}

TEST(TraceTest, RendersInTimeOrderAndCountsEachKind) {
  const auto origin = std::chrono::steady_clock::now() - std::chrono::milliseconds(5);
  Trace t("skyslurmd", origin);
  t.Add({"second", 2000, 100, Cost::kAgentCommand, 0});
  t.Add({"first", 1000, 1500, Cost::kRemoteCommand, 0});
  t.Add({"write", 3000, 10, Cost::kStoreWrite, 0});
  t.Add({"write", 3100, 10, Cost::kStoreWrite, 0});
  const std::string text = t.Render();
  EXPECT_LT(text.find("first"), text.find("second"));
  EXPECT_THAT(text, HasSubstr("+     1.0 ms      1.5 ms  skyslurmd  first\n"));
  EXPECT_EQ(t.Counts(),
            "skyslurmd: 0 local processes, 1 remote command on a new channel (3 processes there), "
            "1 command through an agent, 0 slurmrestd requests, 2 state writes");
}

}  // namespace
}  // namespace skyslurm::trace
