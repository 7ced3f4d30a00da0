// access: rest on the home cluster, against the testbed's alpha: slurmrestd
// started here as the user (a child of this test, switched to skyuser1)
// takes a job exactly as sbatch started here would (the same record in
// slurmctld, the same environment in the job) and cancels it; run as root,
// where slurmrestd refuses to run, every job goes through sbatch and says
// why.
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "broker/backend/slurm/slurm_local.h"
#include "broker/util/trace.h"
#include "tests/support/testbed.h"
#include "tests/support/translated_script.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class SlurmLocalRestTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    fs::permissions(tmp_.path(), fs::perms::all);  // the user's jobs write here
  }
  void TearDown() override {
    for (const std::string& id : submitted_) RunOn(tb_, "alpha", {"scancel", id});
    // Also what a child that failed midway submitted without saying so.
    RunOn(tb_, "alpha", {"scancel", "--name=local-rest-test"});
  }

  backend::SubmitSpec Spec(std::string sky_id) {
    backend::SubmitSpec s;
    s.sky_id = std::move(sky_id);
    s.first_attempt = true;
    s.submit_dir = tmp_.path();
    testing::SetScript(s.job, "#!/bin/bash\n#SBATCH -t 5 -o " + tmp_.path() +
                                  "/local-rest-%j.out\n#SBATCH --hold\n"
                                  "echo \"dir=$SLURM_SUBMIT_DIR host=$SLURM_SUBMIT_HOST foo=$FOO "
                                  "task=$SKYPILOT_TASK_ID umask=$SLURM_UMASK cwd=$PWD "
                                  "name=$SLURM_JOB_NAME tz=${TZ-unset} conf=$SLURM_CONF "
                                  "user=$USER\"\n");
    s.job.args = {"--job-name=local-rest-test", "--partition=cpu", "--mem=100M", "--ntasks=2"};
    s.user_export = "ALL,FOO";
    s.export_values = {{"FOO", "from-the-submitter"}};
    s.export_env = {{"SKYPILOT_TASK_ID", "task-1"}};
    s.environment = std::map<std::string, std::string>{
        {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"USER", "skyuser1"}, {"HOME", "/home/skyuser1"}};
    return s;
  }

  // `body` run in a child switched to skyuser1 (as skyslurmd runs as its
  // user); what it writes to its end of a pipe comes back.
  std::string AsUser(const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0) return "";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      const passwd* pw = ::getpwnam("skyuser1");
      if (pw == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(pw->pw_gid) != 0 ||
          ::setuid(pw->pw_uid) != 0) {
        ::_exit(2);
      }
      const std::string said = body();
      (void)!::write(fds[1], said.data(), said.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string said;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
      said.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed: " << status;
    return said;
  }

  std::map<std::string, std::string> Record(const std::string& id) {
    return SubmissionRecord(tb_, "alpha", id);
  }

  std::string Output(const std::string& id) {
    RunOn(tb_, "alpha", {"scontrol", "release", id});
    EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "COMPLETED");
    return ReadFileWhenReady(tmp_.File("local-rest-" + id + ".out"));
  }

  TempDir tmp_;
  std::vector<std::string> submitted_;
};

TEST_F(SlurmLocalRestTest, AJobThroughSlurmrestdStartedAsTheUserIsTheJobSbatchMakes) {
  const std::string conf = tb_.SlurmConf("alpha");
  // Lines: the job through slurmrestd, the same through sbatch, one more
  // through slurmrestd after the one kept idle was killed; the answers of
  // its cancel, of a cancel of no job and of check; the first one's trace.
  const std::string said = AsUser([&] {
    backend::SlurmLocalBackend rest("alpha", conf, ""), sbatch("alpha", conf, "");
    rest.UseRest(true);
    auto trace = std::make_shared<trace::Trace>("test");
    Result<backend::JobKey> a = InternalError("not run");
    {
      trace::Install installed(trace);
      a = rest.Submit(Spec("sky-20261205-000000-aaaaaa"), std::chrono::seconds(30));
    }
    auto b = sbatch.Submit(Spec("sky-20261205-000000-bbbbbb"), std::chrono::seconds(30));
    // The slurmrestd kept idle dies: the next request goes to a new one.
    (void)std::system(("pkill -KILL -x slurmrestd -P " + std::to_string(::getpid())).c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto c = rest.Submit(Spec("sky-20261205-000000-cccccc"), std::chrono::seconds(30));
    const Status cancelled =
        c.ok() ? rest.Cancel(c->job_id, false, std::chrono::seconds(10)) : c.status();
    const Status missing = rest.Cancel("99999999", false, std::chrono::seconds(10));
    const backend::CheckAnswer check = rest.Check(std::chrono::seconds(10));
    std::string out;
    out += (a.ok() ? a->job_id : "error: " + a.status().message()) + "\n";
    out += (b.ok() ? b->job_id : "error: " + b.status().message()) + "\n";
    out += (c.ok() ? c->job_id : "error: " + c.status().message()) + "\n";
    out += "cancel: " + (cancelled.ok() ? std::string("ok") : cancelled.message()) + "\n";
    out += "missing: " + missing.message() + "\n";
    out += "check: " + check.verdict + " " + check.access_note + " " + check.detail + "\n";
    std::string rendered = trace->Render();
    std::replace(rendered.begin(), rendered.end(), '\n', '|');
    out += "trace: " + rendered + "\n";
    return out;
  });
  std::istringstream lines(said);
  std::string via_rest, via_sbatch, cancelled_id, cancel, missing, check, trace;
  std::getline(lines, via_rest);
  std::getline(lines, via_sbatch);
  std::getline(lines, cancelled_id);
  std::getline(lines, cancel);
  std::getline(lines, missing);
  std::getline(lines, check);
  std::getline(lines, trace);
  for (const std::string* id : {&via_rest, &via_sbatch, &cancelled_id}) {
    ASSERT_THAT(*id, ::testing::MatchesRegex("[0-9]+")) << said;
    submitted_.push_back(*id);
  }
  // One HTTP request, no sbatch.
  EXPECT_THAT(trace, HasSubstr("slurmrestd (local): POST /slurm/v0.0.38/job/submit"));
  EXPECT_THAT(trace, Not(HasSubstr("sbatch")));

  auto a = Record(via_rest), b = Record(via_sbatch);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["UserId"], "skyuser1(1001)");
  EXPECT_EQ(a["JobName"], "local-rest-test");
  EXPECT_EQ(a["NumTasks"], "2");
  EXPECT_EQ(a["WorkDir"], tmp_.path());
  EXPECT_THAT(RunOn(tb_, "alpha", {"squeue", "-h", "-j", via_rest, "-o", "%k %r"}).out,
              HasSubstr("skyslurm:sky-20261205-000000-aaaaaa JobHeldUser"));
  // The same environment in the job, from the same place.
  const std::string out_rest = Output(via_rest), out_sbatch = Output(via_sbatch);
  EXPECT_EQ(out_rest, out_sbatch);
  EXPECT_THAT(out_rest, HasSubstr("dir=" + tmp_.path() + " "));
  EXPECT_THAT(out_rest, HasSubstr(" foo=from-the-submitter task=task-1 "));
  EXPECT_THAT(out_rest, HasSubstr(" tz=unset conf=" + tb_.SlurmConf("alpha") + " user=skyuser1"));

  EXPECT_EQ(cancel, "cancel: ok");
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", cancelled_id), "CANCELLED");
  EXPECT_THAT(missing, HasSubstr("alpha: slurmrestd: Invalid job id specified"));
  EXPECT_THAT(check, ::testing::StartsWith("check: ok rest+ slurm-wlm 22.05.8; slurmrestd 22.05.8 "
                                           "(API v0.0.38); "));
}

// As root slurmrestd will not run: the job goes through sbatch, once, and
// says why; a cancel goes to scancel; check names the fault.
TEST_F(SlurmLocalRestTest, AsRootEveryJobGoesThroughSbatchAndSaysWhy) {
  backend::SlurmLocalBackend rest("alpha", tb_.SlurmConf("alpha"), "");
  rest.UseRest(true);
  auto trace = std::make_shared<trace::Trace>("test");
  Result<backend::JobKey> key = InternalError("not run");
  {
    trace::Install installed(trace);
    key = rest.Submit(Spec("sky-20261205-000000-dddddd"), std::chrono::seconds(30));
  }
  ASSERT_TRUE(key.ok()) << key.status().message();
  submitted_.push_back(key->job_id);
  EXPECT_THAT(trace->Render(),
              HasSubstr("alpha: through sbatch: " + backend::LocalRest::FindProgram("") +
                        " cannot run here: slurmrestd: fatal: slurmrestd should not be run as "
                        "the root user."));
  EXPECT_EQ(JobState(tb_, "alpha", key->job_id), "PENDING");
  EXPECT_TRUE(rest.Cancel(key->job_id, false, std::chrono::seconds(10)).ok());
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", key->job_id), "CANCELLED");
  const backend::CheckAnswer check = rest.Check(std::chrono::seconds(10));
  EXPECT_EQ(check.verdict, "no slurmrestd");
  EXPECT_THAT(check.detail, HasSubstr("should not be run as the root user"));
}

}  // namespace
}  // namespace skyslurm::testing
