// Issue 17: squeue, sacct, scontrol and scancel (the shims) see a routed job
// under the id sbatch printed, in Slurm's own formats, through its life on
// beta; and without a routed job involved they are the real commands.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <regex>
#include <thread>

#include "broker/job/global_id.h"
#include "broker/util/strings.h"
#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

class ClientCommandsTest : public RouteTest {
 protected:
  // `command` through the shim until `done` holds for its output (or 30 s).
  CommandOutput Until(const std::vector<std::string>& command,
                      const std::function<bool(const CommandOutput&)>& done) {
    CommandOutput out;
    for (int i = 0; i < 150; ++i) {
      out = Typed(command);
      if (done(out)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return out;
  }
};

TEST_F(ClientCommandsTest, AJobOnBetaSeenAtHomeUnderItsIdThroughItsLife) {
  const std::string gate = tmp_.File("gate");
  CommandOutput out = Typed({"sbatch", "--parsable", "--sky-any-cluster", "--sky-infra=beta",
                             "--hold", "-t", "5", "-o", "/dev/null", "--wrap",
                             "while [ ! -e " + gate + " ]; do sleep 0.2; done; exit 3"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_THAT(out.out, MatchesRegex("[0-9]+\n"));  // one cluster's sbatch --parsable
  const std::string id = out.out.substr(0, out.out.size() - 1);
  const auto [cluster, native] = RoutedTo(out);
  if (!cluster.empty()) cleanup_.emplace_back(cluster, native);  // wherever it went
  ASSERT_EQ(cluster, "beta");
  EXPECT_TRUE(IsGlobalIdWord(id));

  // PENDING (held), in each command's own layout.
  CommandOutput q = Typed({"squeue", "-j", id});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_THAT(q.out,
              MatchesRegex(" +JOBID PARTITION +NAME +USER ST +TIME +NODES "
                           "NODELIST\\(REASON\\)\n +" +
                           id + " +[a-z0-9-]+ +wrap +skyuser1 PD +0:00 +1 \\(JobHeldUser\\)\n"));
  // The id sits where beta's squeue puts its own: the same line, the id swapped.
  const std::string beta_line = RunOn(tb_, "beta", {"squeue", "-h", "-j", native}).out;
  const std::string ours = Typed({"squeue", "-h", "-j", id}).out;
  EXPECT_EQ(ours.size(), beta_line.size()) << ours << beta_line;
  EXPECT_EQ(Typed({"squeue", "-h", "-j", id, "-o", "%i|%T|%r"}).out, id + "|PENDING|JobHeldUser\n");
  // -l: its date line, then the long layout (-l and -o exclude each other:
  // the shim once passed both, and squeue refused).
  CommandOutput long_form = Typed({"squeue", "-l", "-j", id});
  EXPECT_EQ(long_form.exit_code, 0) << long_form.err;
  EXPECT_THAT(long_form.out,
              MatchesRegex("[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [0-9]{4}\n +JOBID "
                           "PARTITION +NAME +USER +STATE +TIME +TIME_LIMI +NODES "
                           "NODELIST\\(REASON\\)\n +" +
                           id +
                           " +[a-z0-9-]+ +wrap +skyuser1 +PENDING +0:00 +5:00 +1 "
                           "\\(JobHeldUser\\)\n"));
  EXPECT_THAT(Typed({"squeue", "-l", "-h", "-j", id}).out,
              MatchesRegex(" +" + id + " .*PENDING.*\n"));
  // -O: each field its size, justification and suffix (JobID:.12 and its blank).
  EXPECT_EQ(Typed({"squeue", "-j", id, "-O", "JobID:.12 ,State:10,Name"}).out,
            "       JOBID STATE     NAME                \n" + std::string(12 - id.size(), ' ') +
                id + " PENDING   wrap                \n");
  EXPECT_EQ(Typed({"squeue", "-h", "-j", id}, {{"SQUEUE_FORMAT2", "ArrayJobID:0,State:3"}}).out,
            id + "PEN\n");
  const std::vector<std::string> sacct = {"sacct", "-j", id,
                                          "--format=JobID,State,ExitCode,Elapsed", "--parsable2"};
  CommandOutput a = Until(
      sacct, [](const CommandOutput& o) { return o.out.find("PENDING") != std::string::npos; });
  EXPECT_EQ(a.out, "JobID|State|ExitCode|Elapsed\n" + id + "|PENDING|0:0|00:00:00\n") << a.err;
  CommandOutput show = Typed({"scontrol", "show", "job", id});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("JobId=" + id + " JobName=wrap"));
  EXPECT_THAT(show.out, HasSubstr("JobState=PENDING Reason=JobHeldUser"));
  // Snakemake's fallback.
  EXPECT_THAT(Typed({"scontrol", "show", "jobid", "-dd", id}).out, HasSubstr("JobId=" + id + " "));
  // --json: one document, beta's job under its id, alone and in the
  // user's listing beside the home's jobs.
  const std::string as_json = "\"job_id\" ?: ?" + id + "[^0-9]";
  CommandOutput js = Typed({"squeue", "--json", "-j", id});
  EXPECT_EQ(js.exit_code, 0) << js.err;
  EXPECT_THAT(js.out, ContainsRegex(as_json)) << js.out;
  EXPECT_THAT(js.out, Not(ContainsRegex("\"job_id\" ?: ?" + native + "[^0-9]")));
  EXPECT_THAT(js.out, ContainsRegex("\"job_state\" ?: ?\"PENDING\""));
  CommandOutput listing = Typed({"squeue", "--json"});
  EXPECT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_THAT(listing.out, ContainsRegex(as_json));
  std::size_t documents = 0;
  for (auto at = listing.out.find("\"meta\""); at != std::string::npos;
       at = listing.out.find("\"meta\"", at + 1)) {
    ++documents;
  }
  EXPECT_EQ(documents, 1u) << listing.out.substr(0, 2000);
  // --yaml: that document in the YAML Slurm prints.
  CommandOutput yml = Typed({"squeue", "--yaml", "-j", id});
  EXPECT_EQ(yml.exit_code, 0) << yml.err;
  EXPECT_THAT(yml.out, StartsWith("%YAML 1.1\n--- !!map\n!!str meta: !!map\n"));
  EXPECT_THAT(yml.out, HasSubstr("\n  !!str job_id: !!int " + id + "\n"))
      << yml.out.substr(0, 3000);
  EXPECT_THAT(yml.out, Not(HasSubstr("\n  !!str job_id: !!int " + native + "\n")));
  EXPECT_THAT(yml.out, HasSubstr("\n  !!str job_state: !!str PENDING\n"));
  EXPECT_THAT(yml.out, ::testing::EndsWith("\n...\n"));
  // squeue -M all (Slurm's multi-cluster mode, through the testbed's
  // slurmdbd): beta's section shows the job under its id.
  if (Exec({.argv = {"test", "-f", tb_.Path("dbd/enabled")}}).exit_code == 0) {
    CommandOutput multi = Typed({"squeue", "-M", "all", "-o", "%i %T"});
    EXPECT_EQ(multi.exit_code, 0) << multi.err;
    const std::size_t beta_at = multi.out.find("CLUSTER: beta\n");
    ASSERT_NE(beta_at, std::string::npos) << multi.out;
    const std::string beta_section =
        multi.out.substr(beta_at, multi.out.find("CLUSTER: ", beta_at + 1) - beta_at);
    EXPECT_EQ(beta_section, "CLUSTER: beta\nJOBID STATE\n" + id + " PENDING\n\n") << multi.out;
    EXPECT_THAT(multi.out, HasSubstr("CLUSTER: alpha\nJOBID STATE\n"));
    // -h: no sections, each line begins with its cluster's name.
    CommandOutput bare = Typed({"squeue", "-M", "all", "-h", "-o", "%i %T"});
    EXPECT_THAT(bare.out, ContainsRegex("(^|\n)" + id + " PENDING\n")) << bare.out;
    EXPECT_THAT(bare.out, Not(HasSubstr("CLUSTER")));
    // Its own layout: each line begun by its cluster's name.
    CommandOutput named = Typed({"squeue", "-M", "all", "-h"});
    EXPECT_THAT(named.out, ContainsRegex("(^|\n)beta {7}" + std::string(18 - id.size(), ' ') + id +
                                         " +[a-z0-9-]+ +wrap "))
        << named.out;
    // -l: the date first, each section in the long layout.
    CommandOutput long_multi = Typed({"squeue", "-M", "beta", "-l"});
    EXPECT_EQ(long_multi.exit_code, 0) << long_multi.err;
    EXPECT_THAT(long_multi.out, ContainsRegex("^[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} "
                                              "[0-9]{4}\nCLUSTER: beta\n +JOBID PARTITION"));
    EXPECT_THAT(long_multi.out,
                ContainsRegex("\n +" + id + " +[a-z0-9-]+ +wrap +skyuser1 +PENDING "))
        << long_multi.out;
  }

  // Released from home: RUNNING there.
  CommandOutput released = Typed({"scontrol", "release", id});
  EXPECT_EQ(released.exit_code, 0) << released.err;
  CommandOutput running = Until({"squeue", "-h", "-j", id, "-o", "%T"},
                                [](const CommandOutput& o) { return o.out == "RUNNING\n"; });
  EXPECT_EQ(running.out, "RUNNING\n") << running.err;
  EXPECT_EQ(RunOn(tb_, "beta", {"squeue", "-h", "-j", native, "-o", "%T"}).out, "RUNNING\n");
  // The user's listing (no job named) has it too, beside the home's jobs.
  EXPECT_THAT(Typed({"squeue", "-h", "-o", "%i %T"}).out, HasSubstr(id + " RUNNING\n"));
  // Its steps (-s): the step ids mapped, the default layout's widths kept.
  const std::string steps = RunOn(tb_, "beta", {"squeue", "-s", "-j", native}).out;
  ASSERT_THAT(steps, HasSubstr(native + ".batch"));
  CommandOutput our_steps = Typed({"squeue", "-s", "-j", id});
  EXPECT_EQ(our_steps.out.substr(0, our_steps.out.find('\n')), steps.substr(0, steps.find('\n')));
  EXPECT_THAT(our_steps.out, ContainsRegex("\n *" + id + "\\.batch +batch "));
  EXPECT_EQ(Typed({"squeue", "-h", "-s", "-j", id, "-o", "%i|%A"}).out, id + ".batch|1\n");
  if (Exec({.argv = {"test", "-f", tb_.Path("dbd/enabled")}}).exit_code == 0) {
    CommandOutput multi_steps = Typed({"squeue", "-M", "beta", "-s"});
    EXPECT_THAT(multi_steps.out, ContainsRegex("CLUSTER: beta\n +STEPID +NAME PARTITION"));
    EXPECT_THAT(multi_steps.out, ContainsRegex("\n *" + id + "\\.batch +batch "))
        << multi_steps.out;
  }

  // FAILED with the script's exit code, as sacct keeps it (Snakemake's
  // query), once skyslurmd has seen it end (COMPLETING until then).
  std::ofstream(gate) << "go\n";
  CommandOutput ended = Until(
      {"sacct", "-P", "-n", "--format=JobIdRaw,State,ExitCode", "-j", id},
      [&](const CommandOutput& o) { return o.out.find(id + "|FAILED|") != std::string::npos; });
  EXPECT_THAT(ended.out, HasSubstr(id + "|FAILED|3:0\n")) << ended.err;
  EXPECT_THAT(ended.out, HasSubstr(id + ".batch|FAILED|3:0\n"));
  CommandOutput sacct_json = Typed({"sacct", "--json", "-j", id});
  EXPECT_EQ(sacct_json.exit_code, 0) << sacct_json.err;
  EXPECT_THAT(sacct_json.out, ContainsRegex(as_json)) << sacct_json.out.substr(0, 3000);
  // Its batch step's too ("step": {"id": "batch", "job_id": ...} in 22.05).
  std::size_t named = 0;
  for (auto at = sacct_json.out.find("\"job_id\" : " + id); at != std::string::npos;
       at = sacct_json.out.find("\"job_id\" : " + id, at + 1)) {
    ++named;
  }
  EXPECT_GE(named, 2u) << sacct_json.out.substr(0, 3000);
  EXPECT_THAT(sacct_json.out, Not(HasSubstr("\"job_id\" : " + native + ",")));
  CommandOutput sacct_yaml = Typed({"sacct", "--yaml", "-j", id});
  EXPECT_EQ(sacct_yaml.exit_code, 0) << sacct_yaml.err;
  EXPECT_THAT(sacct_yaml.out, HasSubstr("\n  !!str job_id: !!int " + id + "\n"))
      << sacct_yaml.out.substr(0, 3000);
  CommandOutput fixed = Typed({"sacct", "-j", id, "-X", "--format=JobID,State,ExitCode"});
  EXPECT_THAT(fixed.out,
              MatchesRegex("JobID +State ExitCode \n-+ -+ -+ \n" + id + " +FAILED +3:0 \n"));
  // sacct -M all (one table from the slurmdbd): beta's line under its id.
  if (Exec({.argv = {"test", "-f", tb_.Path("dbd/enabled")}}).exit_code == 0) {
    CommandOutput all = Until(
        {"sacct", "-M", "all", "-X", "-n", "-P", "-o", "JobID,State"},
        [&](const CommandOutput& o) { return o.out.find(id + "|FAILED\n") != std::string::npos; });
    EXPECT_THAT(all.out, HasSubstr(id + "|FAILED\n")) << all.err;
    CommandOutput table = Typed({"sacct", "-L", "-X", "-o", "JobID,State"});
    EXPECT_THAT(table.out, StartsWith("JobID             State \n------------ ---------- \n"));
    EXPECT_THAT(table.out, ContainsRegex("\n" + id + " +FAILED \n")) << table.out;
    // -l: sacct's long fields (-l and -o exclude each other, so they are asked by name).
    CommandOutput long_table = Typed({"sacct", "-M", "all", "-l", "-X", "-P"});
    EXPECT_EQ(long_table.exit_code, 0) << long_table.err;
    EXPECT_THAT(long_table.out, StartsWith("JobID|JobIDRaw|JobName|Partition|MaxVMSize|"));
    EXPECT_THAT(long_table.out, HasSubstr("\n" + id + "|" + id + "|wrap|")) << long_table.out;
  }
  // skyslurm takes the id too.
  EXPECT_EQ(Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "status", id}).exit_code,
            0);
}

TEST_F(ClientCommandsTest, ScancelOfARoutedIdCancelsItThereAndNothingAtHome) {
  // A job at home whose own id is the routed job's id there, were they to
  // share a number: it stays.
  const std::string home_job =
      Submit(tb_, "alpha", {"--hold", "-t", "5", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_FALSE(home_job.empty());
  cleanup_.emplace_back("alpha", home_job);
  CommandOutput out = Typed({"sbatch", "--parsable", "--sky-infra=beta", "--hold", "-t", "5", "-o",
                             "/dev/null", "--wrap", "true"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto [cluster, native] = RoutedTo(out);
  if (!cluster.empty()) cleanup_.emplace_back(cluster, native);  // wherever it went
  ASSERT_EQ(cluster, "beta");
  const std::string id = out.out.substr(0, out.out.size() - 1);
  CommandOutput cancel = Typed({"scancel", id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(JobState(tb_, "beta", native), "CANCELLED");
  EXPECT_EQ(JobState(tb_, "alpha", home_job), "PENDING");
  CommandOutput status = Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "status", id});
  EXPECT_THAT(status.out, HasSubstr("CANCELLED"));
  // Again, once it has ended: as Slurm's scancel of a job already done,
  // silent and no failure (Snakemake's Ctrl-C cancels every job it started).
  CommandOutput again = Typed({"scancel", id});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err, "");
  const std::string done = Submit(tb_, "alpha", {"-t", "5", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_FALSE(done.empty());
  cleanup_.emplace_back("alpha", done);
  WaitForJobEnd(tb_, "alpha", done);
  CommandOutput real = RunOn(tb_, "alpha", {"scancel", done});
  EXPECT_EQ(real.exit_code, 0) << real.err;  // what the shim does is what Slurm does
}

// Snakemake 7.21's --slurm executor reads sbatch's stdout and stderr as one
// and takes its last word as the job id: the notes come first, the id last.
TEST_F(ClientCommandsTest, TheLastWordOfSbatchsWholeOutputIsTheId) {
  CommandOutput out = Typed({"sh", "-c",
                             "sbatch --sky-any-cluster --sky-infra=beta --hold -t 5 -o /dev/null "
                             "--wrap true 2>&1"});
  ASSERT_EQ(out.exit_code, 0) << out.out;
  EXPECT_THAT(out.out, HasSubstr(") goes to cluster beta"));  // the note, before the line
  std::string text = out.out;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  const std::string last = text.substr(text.rfind(' ') + 1);
  const auto [cluster, native] = ClusterJobOf(last);
  EXPECT_EQ(cluster, "beta") << out.out;
  if (!cluster.empty()) cleanup_.emplace_back(cluster, native);
}

// No routed job involved: each shim is the real command, byte for byte.
TEST_F(ClientCommandsTest, WithoutRoutedJobsTheyAreTheRealCommands) {
  const std::string home_job =
      Submit(tb_, "alpha",
             {"--hold", "-t", "5", "-o", "/dev/null", "-J", "passthrough", "--wrap", "true"});
  ASSERT_FALSE(home_job.empty());
  cleanup_.emplace_back("alpha", home_job);
  // slurmdbd records a job a moment after slurmctld takes it: the two
  // sacct below must both come after (else they differ by that moment).
  for (int i = 0; i < 100; ++i) {
    if (!Trim(
             RunOn(tb_, "alpha", {"sacct", "-j", home_job, "-n", "-X", "-P", "--format=JobID"}).out)
             .empty()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::vector<std::vector<std::string>> commands = {
      {"squeue", "-j", home_job},
      {"squeue", "-h", "-o", "%i %j %T", "-n", "passthrough"},
      {"squeue", "--version"},
      {"sacct", "-j", home_job, "--format=JobID,JobName,State", "-P"},
      {"sacct", "--helpformat"},
      {"scontrol", "show", "job", home_job},
      {"scontrol", "show", "partition", "gpu"},
      {"scontrol", "show", "job", "9999999"},
      {"scancel", "9999999"},
      {"scancel", "--state=RUNNING", home_job},
      {"squeue", "-j", "67108869"},  // a global id of no cluster's (index 1): both say no job
  };
  for (const auto& argv : commands) {
    CommandOutput shim = Typed(argv);
    CommandOutput real = Typed(argv, {}, /*shim_first=*/false);
    std::string typed;
    for (const auto& a : argv) typed += a + " ";
    if (argv.back() == "67108869") {
      // The real squeue refuses an id it never gave; routed or not, no job.
      EXPECT_NE(shim.exit_code, 0) << typed;
      continue;
    }
    EXPECT_EQ(shim.out, real.out) << typed;
    EXPECT_EQ(shim.err, real.err) << typed;
    EXPECT_EQ(shim.exit_code, real.exit_code) << typed;
  }
}

}  // namespace
}  // namespace skyslurm::testing
