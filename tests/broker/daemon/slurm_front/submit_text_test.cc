#include "broker/daemon/slurm_front/submit_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/job/sky_id.h"

namespace skyslurm::daemon {
namespace {

using ::testing::HasSubstr;

job::Request Parse(std::vector<std::string> args) {
  job::RequestInput in;
  in.args = std::move(args);
  in.args.push_back("job.sh");
  in.script_text = "#!/bin/sh\ntrue\n";
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

SubmitAnswer OnBeta() {
  SubmitAnswer a;
  a.job.sky_id = "sky-20261201-120000-abcdef";
  a.job.cluster = "beta";
  a.job.native_id = "464";
  a.job.global_id = (std::uint64_t{12} << 26) + 464;  // 805306832
  a.job.state = "PENDING";
  a.summary = "beta/h100: the earliest start (now)";
  a.notes = {"job.sh:3: module python: left as written"};
  return a;
}

TEST(SubmitTextTest, SaysWhatSlurmsMultiClusterSbatchSaysAndTheNotes) {
  const SubmitText t = RenderSubmitted("sbatch", Parse({"--sky-any-cluster"}), OnBeta());
  // One cluster's sbatch's line, with the id every shim knows the job by.
  EXPECT_EQ(t.out, "Submitted batch job 805306832\n");
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_THAT(t.err,
              HasSubstr("sbatch: skyslurm: warning: job.sh:3: module python: left as written\n"));
  EXPECT_THAT(t.err, HasSubstr("sbatch: skyslurm: job.sh goes to cluster beta (beta/h100: the "
                               "earliest start (now)); it runs in your home directory there"));
  // A job whose folder was copied says where, and what was sent.
  SubmitAnswer copied = OnBeta();
  copied.folder =
      "~/proj is copied to beta:/home/skyuser1/proj (the same place under its home root) and "
      "runs there (1 of 3 file(s), 12 bytes (300 bytes sent))";
  EXPECT_THAT(RenderSubmitted("sbatch", Parse({}), copied).err,
              HasSubstr("(beta/h100: the earliest start (now)); ~/proj is copied to "
                        "beta:/home/skyuser1/proj (the same place under its home root) and runs "
                        "there (1 of 3 file(s), 12 bytes (300 bytes sent))\n"));
}

TEST(SubmitTextTest, ParsableQuietHomeAndManaged) {
  EXPECT_EQ(RenderSubmitted("sbatch", Parse({"--parsable"}), OnBeta()).out, "805306832\n");
  const SubmitText quiet = RenderSubmitted("sbatch", Parse({"-Q", "--sky-managed"}), OnBeta());
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
  SubmitAnswer home = OnBeta();
  home.home = true;
  home.notes.clear();
  EXPECT_EQ(RenderSubmitted("sbatch", Parse({}), home).err, "");
  EXPECT_THAT(RenderSubmitted("sbatch", Parse({"--sky-managed"}), OnBeta()).err,
              HasSubstr("managed as sky-20261201-120000-abcdef"));
}

// Snakemake 7.21 takes the last word of sbatch's output as the job id: the
// default form's last word is the id, never the cluster's name.
TEST(SubmitTextTest, TheMultiClusterFormIsASetting) {
  using config::SubmitOutput;
  const SubmitText line =
      RenderSubmitted("sbatch", Parse({}), OnBeta(), SubmitOutput::kMultiCluster);
  EXPECT_EQ(line.out, "Submitted batch job 805306832 on cluster beta\n");
  EXPECT_EQ(
      RenderSubmitted("sbatch", Parse({"--parsable"}), OnBeta(), SubmitOutput::kMultiCluster).out,
      "805306832;beta\n");
  // A job whose id there does not fit below 2^26 has no global id: its own
  // id, with its cluster, whatever the setting.
  SubmitAnswer big = OnBeta();
  big.job.global_id = 0;
  big.job.native_id = "70000000";
  EXPECT_EQ(RenderSubmitted("sbatch", Parse({}), big).out,
            "Submitted batch job 70000000 on cluster beta\n");
  EXPECT_EQ(RenderSubmitted("sbatch", Parse({"--parsable"}), big).out, "70000000;beta\n");
  EXPECT_EQ(config::ParseSubmitOutput("multi-cluster").value_or(SubmitOutput::kSingleCluster),
            SubmitOutput::kMultiCluster);
  EXPECT_FALSE(config::ParseSubmitOutput("multi").ok());
}

TEST(SubmitTextTest, RefusedOrNotYetOnACluster) {
  SubmitAnswer refused = OnBeta();
  refused.job.native_id.clear();
  refused.job.state = "REFUSED";
  refused.job.reason = "no cluster can run it";
  const SubmitText t = RenderSubmitted("sbatch", Parse({}), refused);
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_EQ(t.out, "");
  EXPECT_EQ(t.err, "sbatch: error: skyslurm: no cluster can run it\n");
  SubmitAnswer kept = refused;
  kept.job.state = "SUBMITTING";
  kept.job.reason = "beta stopped answering";
  const SubmitText k = RenderSubmitted("sbatch", Parse({}), kept);
  EXPECT_EQ(k.exit_code, 0);
  EXPECT_EQ(k.out, "");  // never a "Submitted" line without a job
  EXPECT_THAT(k.err, HasSubstr("is accepted (beta stopped answering)"));
  // Held back for its dependency: --parsable answers the sky id a later
  // job's --dependency takes.
  SubmitAnswer held = kept;
  held.job.state = "PENDING";
  held.job.reason = "Dependency: waits for afterok:sky-20261201-110000-000001 (RUNNING)";
  const SubmitText h = RenderSubmitted("sbatch", Parse({"--parsable"}), held);
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_EQ(h.out, "sky-20261201-120000-abcdef\n");
  EXPECT_THAT(h.err, HasSubstr("is accepted (Dependency: waits for afterok:"));
}

TEST(SkyIdTest, NewIdsHaveTheShapeAndDiffer) {
  const std::string a = NewSkyId(1796140800), b = NewSkyId(1796140800);
  EXPECT_THAT(a, ::testing::MatchesRegex("sky-20261201-160000-[0-9a-f]{12}"));
  EXPECT_TRUE(LooksLikeSkyId(a));
  EXPECT_NE(a, b);  // 1 in 16 M to fail
  EXPECT_FALSE(LooksLikeSkyId("sky-../../etc"));
  EXPECT_FALSE(LooksLikeSkyId("job-1"));
}

}  // namespace
}  // namespace skyslurm::daemon
