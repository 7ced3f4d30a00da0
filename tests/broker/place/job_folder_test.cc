#include "broker/place/job_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::place {
namespace {

job::Request Parse(std::vector<std::string> args) {
  job::RequestInput in;
  in.args = std::move(args);
  in.args.push_back("job.sh");
  in.script_text = "#!/bin/sh\ntrue\n";
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

sync::WorkdirPlan Copied(const std::string& dest) {
  sync::WorkdirPlan p;
  p.mode = sync::WorkdirMode::kMapped;
  p.copy = true;
  p.source = "/home/ana/proj";
  p.dest = dest;
  return p;
}

TEST(JobFolderTest, AJobRunsInItsCopiedFolderAndSbatchRunsThereToo) {
  backend::SubmitSpec spec;
  spec.workdir = "/cluster/default";
  ApplyJobFolder(Copied("/users/ana/proj"), Parse({}), &spec);
  EXPECT_EQ(spec.submit_dir, "/users/ana/proj");
  EXPECT_EQ(spec.workdir, "/users/ana/proj");
  // A relative --chdir is below it; the job's own absolute one wins.
  spec = {};
  ApplyJobFolder(Copied("/users/ana/proj"), Parse({"--chdir=run1"}), &spec);
  EXPECT_EQ(spec.workdir, "/users/ana/proj/run1");
  spec = {};
  ApplyJobFolder(Copied("/users/ana/proj"), Parse({"--chdir=/lustre/x"}), &spec);
  EXPECT_EQ(spec.workdir, "");
  EXPECT_EQ(spec.submit_dir, "/users/ana/proj");
}

// Regression: a folder under the home there (relative) was also given as a
// relative --chdir, which sbatch, run in it, took against it a second time.
TEST(JobFolderTest, ARelativeFolderIsWhereSbatchRunsNotASecondChdir) {
  backend::SubmitSpec spec;
  ApplyJobFolder(Copied("skyslurm-jobs/sky-1"), Parse({}), &spec);
  EXPECT_EQ(spec.submit_dir, "skyslurm-jobs/sky-1");
  EXPECT_EQ(spec.workdir, "");
  ApplyJobFolder(Copied("skyslurm-jobs/sky-1"), Parse({"-D", "run1"}), &spec);
  EXPECT_EQ(spec.workdir, "run1");
}

TEST(JobFolderTest, InAPodTheFolderIsTheContainersWorkingDirectory) {
  sync::WorkdirPlan p;
  p.mode = sync::WorkdirMode::kPacked;
  p.pack = true;
  p.dest = sync::kPodFolder;
  backend::SubmitSpec spec;
  ApplyJobFolder(p, Parse({}), &spec);
  EXPECT_EQ(spec.workdir, "/skyslurm/work");
  EXPECT_EQ(spec.submit_dir, "");
  // Nothing copied (--sky-workdir=none, a cluster files cannot reach): the
  // cluster's own working directory stays.
  spec = {};
  spec.workdir = "/cluster/default";
  sync::WorkdirPlan off;
  off.mode = sync::WorkdirMode::kOff;
  ApplyJobFolder(off, Parse({}), &spec);
  EXPECT_EQ(spec.workdir, "/cluster/default");
  EXPECT_EQ(spec.submit_dir, "");
}

TEST(JobFolderTest, TheJobsFolderIsSkyWorkdirOrWhereItWasSubmitted) {
  EXPECT_EQ(JobFolder(Parse({}), "/home/ana/proj", "/home/ana"), "/home/ana/proj");
  EXPECT_EQ(JobFolder(Parse({"--sky-workdir=sub/"}), "/home/ana/proj", "/home/ana"),
            "/home/ana/proj/sub");
  EXPECT_EQ(JobFolder(Parse({"--sky-workdir=~/other"}), "/home/ana/proj", "/home/ana"),
            "/home/ana/other");
  EXPECT_EQ(JobFolder(Parse({"--sky-workdir=none"}), "/home/ana/proj", "/home/ana"), "");
}

}  // namespace
}  // namespace skyslurm::place
