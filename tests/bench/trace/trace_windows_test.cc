// The simulator over windows of a real trace (issue 18's CI proof of the
// simulator at scale; the full comparison is bench/trace_replay
// --each-window): under every policy, what a Slurm cluster could not do
// never happens: a job starts before its submission, runs other than its
// runtime (its limit at most), on a cluster without its GPU type, or a
// cluster holds more GPUs than it has; skyslurm moves no job more than
// max_moves times. The traces are read where they lie
// ($SKYSLURM_TRACES, else ../shared/traces beside the project).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "bench/trace/policy_sim.h"
#include "bench/trace/replay_report.h"
#include "bench/trace/trace_file.h"
#include "bench/trace/trace_load.h"
#include "tests/bench/trace/philly_trace.h"

namespace skyslurm::trace {
namespace {

const std::vector<ModelCluster> kTestbed = {
    {"alpha", 2, 8, "H100"}, {"beta", 2, 4, "H100"}, {"gamma", 3, 8, "A100"}};

void CheckRun(const Load& load, const SimResult& r, Policy policy, const SimOptions& options) {
  SCOPED_TRACE(std::string(PolicyName(policy)));
  ASSERT_EQ(r.jobs.size(), load.jobs.size());
  std::map<std::string, std::vector<std::pair<double, int>>> deltas;
  int started = 0;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobOutcome& o = r.jobs[i];
    const ReplayJob& j = load.jobs[i];
    if (o.start == kNever) continue;
    ++started;
    EXPECT_GE(o.start, o.submit) << j.id;
    const double limit = policy == Policy::kOracle ? j.runtime_s : j.time_limit_min * 60.0;
    if (o.end != kNever) {
      EXPECT_NEAR(o.end - o.start, std::min(j.runtime_s, limit), 1e-6) << j.id;
    }
    const auto c = std::find_if(kTestbed.begin(), kTestbed.end(),
                                [&](const ModelCluster& m) { return m.name == o.cluster; });
    ASSERT_NE(c, kTestbed.end()) << o.cluster;
    if (!j.gpu_type.empty()) {
      EXPECT_EQ(j.gpu_type, c->gpu_type) << j.id;
    }
    EXPECT_LE(j.nodes, c->nodes);
    EXPECT_LE(o.moves, policy == Policy::kSkyslurm ? options.daemon.max_moves : 1 << 30);
    deltas[o.cluster].emplace_back(o.start, j.gpus());
    deltas[o.cluster].emplace_back(o.end, -j.gpus());
  }
  EXPECT_EQ(started + r.unplaced, static_cast<int>(load.jobs.size()));  // no horizon: all start
  for (auto& [cluster, d] : deltas) {
    std::sort(d.begin(), d.end());  // an end before a start at one instant
    const auto c = std::find_if(kTestbed.begin(), kTestbed.end(),
                                [&](const ModelCluster& m) { return m.name == cluster; });
    int busy = 0;
    for (const auto& [t, g] : d) {
      busy += g;
      EXPECT_LE(busy, c->nodes * c->gpus_per_node) << cluster << " at " << t;
    }
  }
}

TEST(TraceWindowsTest, EveryPolicyKeepsToWhatASlurmClusterCanDoOverRealWindows) {
  const std::string file = PhillyTrace().string();
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no trace at " << file;
  auto jobs = ReadTrace(file);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const SimOptions options = ScaledOptions(1);
  int windows = 0;
  for (const double start_h : {1012.0, 1254.0, 1288.0, 1380.0}) {
    SCOPED_TRACE(start_h);
    const auto slice = TraceWindow(*jobs, start_h, 2);
    ASSERT_GE(slice.size(), 80u);
    const Load load = ShapeLoad(slice, kTestbed, {.window_s = 7200, .load = 0.9, .seed = 1});
    EXPECT_NEAR(load.replay_load, 0.9, 1e-6);
    for (const Policy p : {Policy::kHome, Policy::kSlurmM, Policy::kFailover, Policy::kRoundRobin,
                           Policy::kSkyslurm, Policy::kOracle, Policy::kFederation}) {
      CheckRun(load, SimulatePolicy(p, load, kTestbed, options), p, options);
    }
    ++windows;
  }
  EXPECT_EQ(windows, 4);
}

}  // namespace
}  // namespace skyslurm::trace
