#include "broker/sync/workdir_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::sync {
namespace {

using ::testing::HasSubstr;

// alpha (home) -> beta, as the testbed's ready user names their roots.
WorkdirInput ToBeta(const std::string& source) {
  WorkdirInput in;
  in.sky_id = "sky-20261202-120000-abcdef";
  in.source = source;
  in.target = "beta";
  in.local_home = "/home/ana";
  in.home_roots = translate::ExpandRoots({{"home", "/home/%u"}, {"scratch", "/scratch/%u"}}, "ana");
  in.target_roots =
      translate::ExpandRoots({{"home", "/users/%u"}, {"scratch", "/lustre/scratch/%u"}}, "ana2");
  return in;
}

TEST(WorkdirPlanTest, AFolderUnderARootIsCopiedToTheSamePlaceUnderTheTargetsRoot) {
  const WorkdirPlan p = PlanWorkdir(ToBeta("/home/ana/proj"));
  EXPECT_EQ(p.mode, WorkdirMode::kMapped);
  EXPECT_TRUE(p.copy);
  EXPECT_EQ(p.source, "/home/ana/proj");
  EXPECT_EQ(p.dest, "/users/ana2/proj");
  EXPECT_EQ(p.reason,
            "~/proj is copied to beta:/users/ana2/proj (the same place under its home root) and "
            "runs there");
  EXPECT_EQ(PlanWorkdir(ToBeta("/scratch/ana/run/1")).dest, "/lustre/scratch/ana2/run/1");
}

TEST(WorkdirPlanTest, AFolderUnderNoRootGetsAFolderOfItsOwnUnderTheTargetsScratch) {
  const WorkdirPlan p = PlanWorkdir(ToBeta("/data/shared/ana"));
  EXPECT_EQ(p.mode, WorkdirMode::kPerJob);
  EXPECT_TRUE(p.copy);
  EXPECT_EQ(p.dest, "/lustre/scratch/ana2/skyslurm-jobs/sky-20261202-120000-abcdef");
  EXPECT_THAT(p.reason, HasSubstr("a folder of its own (it lies under no root beta has)"));
  // No scratch there: the cluster's workdir, else the home there (relative).
  WorkdirInput in = ToBeta("/data/x");
  in.target_roots = {};
  in.target_workdir = "/work/ana";
  EXPECT_EQ(PlanWorkdir(in).dest, "/work/ana/skyslurm-jobs/sky-20261202-120000-abcdef");
  in.target_workdir.clear();
  EXPECT_EQ(PlanWorkdir(in).dest, "skyslurm-jobs/sky-20261202-120000-abcdef");
}

TEST(WorkdirPlanTest, AHomeOrARootItselfIsNeverCopiedWhole) {
  for (const char* whole : {"/home/ana", "/home", "/", "/scratch/ana"}) {
    SCOPED_TRACE(whole);
    const WorkdirPlan p = PlanWorkdir(ToBeta(whole));
    EXPECT_EQ(p.mode, WorkdirMode::kWhole);
    EXPECT_FALSE(p.copy);
    EXPECT_THAT(p.reason, HasSubstr("nothing is copied"));
    EXPECT_THAT(p.reason, HasSubstr("--sky-workdir=DIR"));
  }
  EXPECT_EQ(PlanWorkdir(ToBeta("/home/ana")).dest, "/users/ana2");
}

TEST(WorkdirPlanTest, HomeSharedOffKubernetesAndUnreachableCopyNothing) {
  WorkdirInput in = ToBeta("/home/ana/proj");
  in.target_is_home = true;
  EXPECT_EQ(PlanWorkdir(in).mode, WorkdirMode::kHome);
  EXPECT_TRUE(PlanWorkdir(in).reason.empty());

  in = ToBeta("/home/ana/proj");
  in.shared_fs = true;
  WorkdirPlan p = PlanWorkdir(in);
  EXPECT_EQ(p.mode, WorkdirMode::kShared);
  EXPECT_FALSE(p.copy);
  EXPECT_EQ(p.dest, "/home/ana/proj");
  EXPECT_THAT(p.reason, HasSubstr("shared_fs"));

  in = ToBeta("/home/ana/proj");
  in.disabled = true;
  in.target_workdir = "/work/ana";
  p = PlanWorkdir(in);
  EXPECT_EQ(p.mode, WorkdirMode::kOff);
  EXPECT_EQ(p.dest, "/work/ana");
  EXPECT_THAT(p.reason, HasSubstr("--sky-workdir=none"));


  in = ToBeta("/home/ana/proj");
  in.no_copy_route = "it is not reached over SSH";
  EXPECT_EQ(PlanWorkdir(in).mode, WorkdirMode::kUnsupported);
  EXPECT_THAT(PlanWorkdir(in).reason, HasSubstr("not reached over SSH"));
}

TEST(WorkdirPlanTest, OnKubernetesTheFolderIsPackedIntoTheJobAndUnpackedInEachPod) {
  WorkdirInput in = ToBeta("/home/ana/proj");
  in.target = "kappa";
  in.packed_in_job = true;  // Kubernetes' way
  in.default_workdir = "its image's working directory";
  in.target_roots = {};
  WorkdirPlan p = PlanWorkdir(in);
  EXPECT_EQ(p.mode, WorkdirMode::kPacked);
  EXPECT_TRUE(p.pack);
  EXPECT_FALSE(p.copy);
  EXPECT_EQ(p.dest, "/skyslurm/work");
  EXPECT_EQ(p.reason,
            "~/proj travels in the job's ConfigMap, is unpacked into /skyslurm/work in each pod "
            "before the script starts, and runs there");
  in.source = "/home/ana";
  EXPECT_EQ(PlanWorkdir(in).mode, WorkdirMode::kWhole);
  EXPECT_FALSE(PlanWorkdir(in).pack);
  in.disabled = true;
  EXPECT_EQ(PlanWorkdir(in).mode, WorkdirMode::kOff);
  EXPECT_THAT(PlanWorkdir(in).reason, HasSubstr("its image's working directory"));
}

TEST(WorkdirPlanTest, TildeSpellsTheHome) {
  EXPECT_EQ(Tilde("/home/ana/proj", "/home/ana"), "~/proj");
  EXPECT_EQ(Tilde("/home/ana", "/home/ana"), "~");
  EXPECT_EQ(Tilde("/home/anabel/x", "/home/ana"), "/home/anabel/x");
}

}  // namespace
}  // namespace skyslurm::sync
