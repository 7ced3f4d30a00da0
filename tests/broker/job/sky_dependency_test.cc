#include "broker/job/sky_dependency.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace skyslurm::job {
namespace {

using ::testing::HasSubstr;

constexpr const char* kA = "sky-20261205-101500-a1b2c3";
constexpr const char* kB = "sky-20261205-101501-d4e5f6";

// The conditions read, one per sky job, and the rest for sbatch; or the error.
std::string Read(const std::string& text) {
  auto d = ReadSkyDependency(text);
  if (!d.ok()) return "error: " + d.status().message();
  std::string out;
  for (const auto& c : d->conditions) {
    out += c.type + ":" + c.sky_id + (c.minutes ? "+" + std::to_string(c.minutes) : "") + " ";
  }
  return out + (d->any ? "any " : "") + "rest=" + d->rest;
}

TEST(SkyDependencyTest, ReadsSkyJobsBesideSlurmsOwn) {
  const std::string a = kA, b = kB;
  EXPECT_EQ(Read("afterok:" + a), "afterok:" + a + " rest=");
  EXPECT_EQ(Read("afterok:123:" + a + ",afterany:" + b),
            "afterok:" + a + " afterany:" + b + " rest=afterok:123");
  EXPECT_EQ(Read(a), "afterany:" + a + " rest=");  // a bare id: afterany
  EXPECT_EQ(Read("after:" + a + "+5:77+2,singleton"),
            "after:" + a + "+5 rest=after:77+2,singleton");
  EXPECT_EQ(Read("afterok:" + a + "?afternotok:" + b),
            "afterok:" + a + " afternotok:" + b + " any rest=");
  // Slurm's own alone: untouched, as written.
  EXPECT_EQ(Read("afterok:12?afterany:13"), "any rest=afterok:12?afterany:13");
  EXPECT_EQ(Read("singleton"), "rest=singleton");
}

TEST(SkyDependencyTest, RefusesWhatCannotBeWaitedForNamingTheItem) {
  const std::string a = kA;
  EXPECT_THAT(Read("aftercorr:" + a), HasSubstr("aftercorr cannot name a sky job"));
  EXPECT_THAT(Read("afterok:" + a + "_7"), HasSubstr("name the whole array"));
  EXPECT_THAT(Read("afterok:" + a + "+5"), HasSubstr("only after takes +minutes"));
  EXPECT_THAT(Read("after:" + a + "+soon"), HasSubstr("'+soon' is not a number of minutes"));
  EXPECT_THAT(Read("afterok:" + a + ",afterok:1?afterok:2"), HasSubstr("cannot be mixed"));
  EXPECT_THAT(Read("afterok:" + a + "?afterok:12"), HasSubstr("join them with ','"));
}

Request Parse(std::vector<std::string> args, const std::string& script) {
  RequestInput in;
  in.args = std::move(args);
  in.script_text = script;
  auto r = ParseRequest(in);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

TEST(SkyDependencyTest, TakenOutOfARequestItLeavesWhatSbatchGets) {
  const std::string a = kA;
  Request r = Parse({"job.sh"}, "#!/bin/sh\n#SBATCH --dependency=afterok:" + a + ":42\ntrue\n");
  auto taken = TakeSkyDependency(r);
  ASSERT_TRUE(taken.ok());
  ASSERT_EQ(taken->conditions.size(), 1u);
  EXPECT_TRUE(r.dependency_resolved);
  EXPECT_EQ(r.dependency, "afterok:42");
  // Slurm's own ids alone: the request as it was.
  Request own = Parse({"--dependency=afterok:42", "job.sh"}, "#!/bin/sh\ntrue\n");
  ASSERT_TRUE(TakeSkyDependency(own).ok());
  EXPECT_FALSE(own.dependency_resolved);
  EXPECT_EQ(own.dependency, "afterok:42");
  // The error names the line.
  Request bad = Parse({"job.sh"}, "#!/bin/sh\n#SBATCH -N1\n#SBATCH -d aftercorr:" + a + "\ntrue\n");
  auto refused = TakeSkyDependency(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              ::testing::StartsWith("job.sh:3: --dependency item 'aftercorr:" + a + "'"));
}

struct World {
  std::map<std::string, DependeeState> jobs;
  std::string Weigh(const std::string& text, std::time_t now = 1000) const {
    auto d = ReadSkyDependency(text);
    if (!d.ok()) return "error: " + d.status().message();
    const DependencyVerdict v = WeighSkyDependency(
        *d,
        [&](const std::string& id) {
          auto it = jobs.find(id);
          return it == jobs.end() ? DependeeState{} : it->second;
        },
        now);
    const char* status = v.status == DependencyStatus::kSatisfied ? "satisfied"
                         : v.status == DependencyStatus::kWaiting ? "waiting"
                                                                  : "never";
    return fmt::format("{} [{}] {}", status, v.sbatch_dependency, v.reason);
  }
};

DependeeState Live(const std::string& state, std::time_t started = 0) {
  return {true, state, false, started};
}
DependeeState Ended(const std::string& state, std::time_t started = 100) {
  return {true, state, true, started};
}

TEST(SkyDependencyTest, EachTypeAsSlurmWeighsIt) {
  const std::string a = kA;
  World w;
  w.jobs[a] = Live("SPREAD");
  EXPECT_EQ(w.Weigh("afterok:" + a), "waiting [] Dependency: waits for afterok:" + a + " (SPREAD)");
  EXPECT_THAT(w.Weigh("after:" + a), HasSubstr("waiting"));
  w.jobs[a] = Live("RUNNING", 900);
  EXPECT_THAT(w.Weigh("after:" + a), HasSubstr("satisfied"));
  EXPECT_THAT(w.Weigh("after:" + a + "+2", 1000), HasSubstr("waiting"));  // 100 s of 120
  EXPECT_THAT(w.Weigh("after:" + a + "+2", 1020), HasSubstr("satisfied"));
  EXPECT_THAT(w.Weigh("afterany:" + a), HasSubstr("waiting"));
  w.jobs[a] = Ended("COMPLETED");
  EXPECT_THAT(w.Weigh("afterok:" + a), HasSubstr("satisfied"));
  EXPECT_THAT(w.Weigh("afterany:" + a), HasSubstr("satisfied"));
  EXPECT_EQ(w.Weigh("afternotok:" + a),
            "never [] DependencyNeverSatisfied: afternotok:" + a + " ended COMPLETED");
  w.jobs[a] = Ended("FAILED");
  EXPECT_EQ(w.Weigh("afterok:" + a),
            "never [] DependencyNeverSatisfied: afterok:" + a + " ended FAILED");
  EXPECT_THAT(w.Weigh("afternotok:" + a), HasSubstr("satisfied"));
  // Cancelled before it started: after is satisfied, as in Slurm.
  w.jobs[a] = Ended("CANCELLED", 0);
  EXPECT_THAT(w.Weigh("after:" + a), HasSubstr("satisfied"));
  EXPECT_THAT(w.Weigh("afterok:sky-20261205-000000-000000"),
              HasSubstr("DependencyNeverSatisfied: afterok:sky-20261205-000000-000000: skyslurm "
                        "knows no such job"));
}

TEST(SkyDependencyTest, AllOfOrAnyOfAndWhatSbatchGets) {
  const std::string a = kA, b = kB;
  World w;
  w.jobs[a] = Ended("COMPLETED");
  w.jobs[b] = Live("PENDING");
  EXPECT_EQ(w.Weigh("afterok:" + a + ",afterok:" + b),
            "waiting [] Dependency: waits for afterok:" + b + " (PENDING)");
  EXPECT_EQ(w.Weigh("afterok:" + a + "?afterok:" + b), "satisfied [] Dependency satisfied");
  // Satisfied, Slurm's own ids stay for sbatch (and keep the job home).
  EXPECT_EQ(w.Weigh("afterok:" + a + ":42,singleton"),
            "satisfied [afterok:42,singleton] Dependency satisfied");
  w.jobs[b] = Ended("TIMEOUT");
  EXPECT_THAT(w.Weigh("afterok:" + a + ",afterok:" + b), HasSubstr("never"));
  // Any of: never only when every one is.
  w.jobs[a] = Ended("FAILED");
  EXPECT_EQ(w.Weigh("afterok:" + a + "?afterok:" + b),
            "never [] DependencyNeverSatisfied: afterok:" + a + " ended FAILED, afterok:" + b +
                " ended TIMEOUT");
}

}  // namespace
}  // namespace skyslurm::job
