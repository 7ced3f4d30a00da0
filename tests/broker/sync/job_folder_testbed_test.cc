// A job's folder travels with it (issue 14), on the testbed whose peers have
// filesystems of their own: typed as the ready user types, from a project
// folder in their home, with the shim first on PATH.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const std::string kBuild = SKYSLURM_BINARY_DIR;
const std::string kShimBin = kBuild + "/shim/bin";
const std::string kSkyslurm = kBuild + "/shim/skyslurm";

const char kTrain[] =
    "import argparse, os\n"
    "p = argparse.ArgumentParser()\n"
    "p.add_argument('--data')\n"
    "a = p.parse_args()\n"
    "os.makedirs('out', exist_ok=True)\n"
    "words = len(open(a.data).read().split())\n"
    "submit = os.environ.get('SLURM_SUBMIT_DIR')\n"
    "open('out/model.txt', 'w').write(f'words={words} cwd={os.getcwd()} submit={submit}\\n')\n";

const char kJob[] =
    "#!/bin/bash\n"
    "#SBATCH --gres=gpu:h100:1\n"
    "#SBATCH -p gpu\n"
    "#SBATCH -t 5\n"
    "python3 train.py --data data/train.txt\n";

class JobFolderTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    home_ = tmp_.File("home");
    CopyReadyHome(tb_, home_);
    // This copy of the home is alpha's home root (the ready user's names
    // the testbed's own).
    const std::string yaml = home_ + "/.config/skyslurm/skyslurm.yaml";
    std::string text = ReadFile(yaml);
    const std::string ready_root = "home: " + tb_.Path("home") + ",";
    ASSERT_NE(text.find(ready_root), std::string::npos) << text;
    text.replace(text.find(ready_root), ready_root.size(), "home: " + home_ + ",");
    WriteFile(yaml, text);
    // A project of its own per test: beta's copy of it is removed after.
    name_ = "proj-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    proj_ = home_ + "/" + name_;
    fs::create_directories(proj_ + "/data");
    fs::create_directories(proj_ + "/build");
    WriteFile(proj_ + "/train.py", kTrain);
    WriteFile(proj_ + "/job.sh", kJob);
    WriteFile(proj_ + "/data/train.txt", "the quick brown fox\n");
    WriteFile(proj_ + "/.gitignore", "build/\n");
    WriteFile(proj_ + "/build/junk.o", std::string(50'000, 'j'));
  }
  void TearDown() override {
    for (const auto& [cluster, id] : cleanup_) {
      if (cluster == "kappa") {
        Typed({kSkyslurm, "cancel", "kappa:" + id});
      } else {
        RunOn(tb_, cluster, {"scancel", id});
      }
    }
    if (!home_.empty()) StopUserDaemon(home_);
    if (!name_.empty()) SshAsUser(tb_, "beta", "rm -rf ~/" + name_);
  }

  CommandOutput Typed(std::vector<std::string> argv,
                      std::vector<std::pair<std::string, std::string>> env = {}) {
    Command c;
    c.argv = {"/bin/sh", "-c", "exec \"$@\"", "sh"};
    c.argv.insert(c.argv.end(), argv.begin(), argv.end());
    c.env_set = {{"HOME", home_},
                 {"SLURM_CONF", tb_.SlurmConf("alpha")},
                 {"PATH", kShimBin + ":" + std::getenv("PATH")}};
    c.env_set.insert(c.env_set.end(), env.begin(), env.end());
    c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                   "XDG_CONFIG_HOME", "XDG_STATE_HOME"};
    c.cwd = proj_;
    c.timeout = std::chrono::seconds(180);
    return Exec(c);
  }
  // As typed at a terminal: standard output is one (script(1) gives it a
  // pseudo-terminal), standard error is kept apart.
  CommandOutput AtTerminal(const std::vector<std::string>& argv) {
    const std::string err = tmp_.File("terminal.err");
    CommandOutput out = Typed({"script", "-qec", ShellJoin(argv) + " 2>" + err, "/dev/null"});
    std::erase(out.out, '\r');  // the terminal's line ends
    out.err = ReadFile(err);
    return out;
  }
  std::pair<std::string, std::string> Submitted(const CommandOutput& out) {
    auto routed = RoutedTo(out);
    if (!routed.first.empty()) cleanup_.push_back(routed);
    return routed;
  }
  // The details of the job's events of `kind` (skyslurm status --json).
  std::vector<std::string> Events(const std::string& id, const std::string& kind) {
    CommandOutput out = Typed({kSkyslurm, "status", "--json", id});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    std::vector<std::string> found;
    const std::regex event("\"detail\"\\s*:\\s*\"([^\"]*)\",\\s*\"kind\"\\s*:\\s*\"" + kind + "\"");
    for (std::sregex_iterator it(out.out.begin(), out.out.end(), event), end; it != end; ++it) {
      found.push_back((*it)[1]);
    }
    return found;
  }
  // Whether `path` (relative to the home there) exists on beta.
  bool OnBeta(const std::string& path) {
    return SshAsUser(tb_, "beta", "test -e ~/" + path).exit_code == 0;
  }

  TempDir tmp_;
  std::string home_, name_, proj_;
  std::vector<std::pair<std::string, std::string>> cleanup_;
};

// Typed at a terminal: the results stay on beta until asked for.
TEST_F(JobFolderTest, AlphaFullTheProjectRunsInItsPlaceOnBetaAndSyncDownBringsTheModelBack) {
  for (const std::string& id : FillAlphaH100s(tb_)) cleanup_.emplace_back("alpha", id);
  CommandOutput out = AtTerminal({"sbatch", "--sky-any-cluster", "job.sh"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "beta");
  EXPECT_THAT(out.err, HasSubstr("~/" + name_ + " is copied to beta:/home/skyuser1/" + name_ +
                                 " (the same place under its home root) and runs there (4 of 4 "
                                 "file(s)"));
  EXPECT_EQ(WaitForJobEnd(tb_, "beta", id), "COMPLETED");
  // skyslurmd has seen it end (and brought nothing back: a person typed it).
  for (int i = 0; i < 100 && Events("beta:" + id, "ended").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_FALSE(Events("beta:" + id, "ended").empty());
  EXPECT_TRUE(Events("beta:" + id, "fetched").empty());
  // Its files were there, as they are here, less what .gitignore leaves out.
  EXPECT_EQ(ReadOnCluster(tb_, "beta", name_ + "/data/train.txt"), "the quick brown fox\n");
  EXPECT_FALSE(OnBeta(name_ + "/build"));
  // The results come back to the folder it was submitted from.
  EXPECT_FALSE(fs::exists(proj_ + "/out/model.txt"));
  CommandOutput down = Typed({kSkyslurm, "sync-down", "beta:" + id});
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_THAT(down.out, MatchesRegex("sky-[^ ]+: fetched beta:/home/skyuser1/" + name_ +
                                     " into ~/" + name_ + ": [0-9]+ of [0-9]+ file\\(s\\).*\n"));
  // It ran where its folder was put, and SLURM_SUBMIT_DIR says the same.
  const std::string there = "/home/skyuser1/" + name_;
  EXPECT_EQ(ReadFile(proj_ + "/out/model.txt"), "words=4 cwd=" + there + " submit=" + there + "\n");
  EXPECT_TRUE(fs::exists(proj_ + "/slurm-" + id + ".out"));
  // Elsewhere, when asked.
  const std::string elsewhere = tmp_.File("results");
  ASSERT_EQ(Typed({kSkyslurm, "sync-down", "beta:" + id, elsewhere}).exit_code, 0);
  EXPECT_EQ(ReadFile(elsewhere + "/out/model.txt"), ReadFile(proj_ + "/out/model.txt"));
}

TEST_F(JobFolderTest, ASecondSubmissionOfTheFolderSendsOnlyTheFileThatChanged) {
  auto [c1, first] = Submitted(Typed({"sbatch", "--sky-infra=beta", "job.sh"}));
  ASSERT_EQ(c1, "beta");
  WriteFile(proj_ + "/data/train.txt",
            "the quick brown fox jumps over the lazy dog\n");  // 44 bytes
  CommandOutput second_out = Typed({"sbatch", "--sky-infra=beta", "job.sh"});
  auto [c2, second] = Submitted(second_out);
  ASSERT_EQ(c2, "beta");
  const auto copied_first = Events("beta:" + first, "copied");
  const auto copied_second = Events("beta:" + second, "copied");
  ASSERT_EQ(copied_first.size(), 1u);
  ASSERT_EQ(copied_second.size(), 1u);
  EXPECT_THAT(copied_first[0], HasSubstr(": 4 of 4 file(s)"));
  // rsync's own count: one file, its 44 bytes (and a little protocol).
  EXPECT_THAT(copied_second[0], HasSubstr(": 1 of 4 file(s), 44 bytes ("));
  EXPECT_THAT(second_out.err, HasSubstr("(1 of 4 file(s), 44 bytes ("));
  EXPECT_EQ(WaitForJobEnd(tb_, "beta", second), "COMPLETED");
  EXPECT_THAT(ReadOnCluster(tb_, "beta", name_ + "/out/model.txt"), HasSubstr("words=9 "));
}

TEST_F(JobFolderTest, AFolderOverSyncLimitIsRefusedBeforeAnythingIsSubmitted) {
  WriteFile(proj_ + "/data/weights.bin", std::string(20'000, 'w'));
  const std::string before = RunOn(tb_, "beta", {"squeue", "-h", "-u", "skyuser1", "-o", "%i"}).out;
  CommandOutput out =
      Typed({"sbatch", "--sky-infra=beta", "job.sh"}, {{"SKYSLURM_SYNC_LIMIT", "16K"}});
  EXPECT_NE(out.exit_code, 0);
  EXPECT_EQ(out.out, "");
  EXPECT_THAT(out.err, HasSubstr("~/" + name_ + " holds "));
  EXPECT_THAT(out.err, HasSubstr(" in 5 file(s) to copy to beta, more than sync_limit (16 KiB); "
                                 "nothing was submitted"));
  EXPECT_THAT(out.err, HasSubstr("~/" + name_ + "/.skyignore"));
  EXPECT_THAT(out.err, HasSubstr("--sky-workdir=none"));
  EXPECT_EQ(RunOn(tb_, "beta", {"squeue", "-h", "-u", "skyuser1", "-o", "%i"}).out, before);
  EXPECT_FALSE(OnBeta(name_));
  // Doing what it says: the weights left out, the job goes.
  StopUserDaemon(home_);
  WriteFile(proj_ + "/.skyignore", "data/weights.bin\n");
  CommandOutput again =
      Typed({"sbatch", "--sky-infra=beta", "job.sh"}, {{"SKYSLURM_SYNC_LIMIT", "16K"}});
  EXPECT_EQ(Submitted(again).first, "beta") << again.err;
  EXPECT_TRUE(OnBeta(name_ + "/train.py"));
  EXPECT_FALSE(OnBeta(name_ + "/data/weights.bin"));
}

TEST_F(JobFolderTest, SyncBackFetchesTheMatchingFilesBeforeAWaitingSbatchReturns) {
  CommandOutput out =
      Typed({"sbatch", "--sky-infra=beta", "--sky-sync-back=out/*.txt", "--wait", "job.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  Submitted(out);
  EXPECT_THAT(ReadFile(proj_ + "/out/model.txt"), HasSubstr("words=4 cwd=/home/skyuser1/"));
  // Only what the pattern names.
  bool any_output = false;
  for (const auto& e : fs::directory_iterator(proj_)) {
    any_output = any_output || e.path().filename().string().starts_with("slurm-");
  }
  EXPECT_FALSE(any_output);
}

// A program that reads sbatch's answer (a workflow engine) and polls sacct
// finds the job's outputs in its folder the moment sacct says COMPLETED:
// what the job wrote on beta came back first. What was sent with the
// folder and since removed here (an engine's marker) stays removed.
TEST_F(JobFolderTest, AProgramsJobBringsBackWhatItWroteBeforeSacctSaysCompleted) {
  WriteFile(proj_ + "/.marker", "incomplete\n");
  CommandOutput out = Typed({"sbatch", "--sky-infra=beta", "--parsable", "job.sh"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "beta");
  const std::string global = out.out.substr(0, out.out.find('\n'));
  fs::remove(proj_ + "/.marker");
  std::string state, seen;
  // And as an engine that polls squeue sees it (Cromwell's check-alive):
  // listed until its files are here, COMPLETING (not gone) before.
  std::string listed, squeue_seen;
  bool here_when_gone = false;
  for (int i = 0; i < 900; ++i) {
    CommandOutput polled = Typed({"sacct", "-j", global, "-X", "-n", "-P", "-o", "State"});
    state = polled.out.substr(0, polled.out.find('\n'));
    if (seen.empty() || !seen.ends_with(" " + state)) seen += " " + state;
    if (state == "COMPLETED" || state == "FAILED" || state.starts_with("CANCELLED")) break;
    const std::string was = listed;
    listed = Typed({"squeue", "-h", "-j", global, "-o", "%T"}).out;
    if (listed.empty() && !was.empty()) here_when_gone = fs::exists(proj_ + "/out/model.txt");
    if (!listed.empty() && !squeue_seen.ends_with(" " + listed.substr(0, listed.find('\n')))) {
      squeue_seen += " " + listed.substr(0, listed.find('\n'));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(state, "COMPLETED") << seen;
  for (int i = 0; i < 100 && !listed.empty(); ++i) {  // sacct's last word came first
    listed = Typed({"squeue", "-h", "-j", global, "-o", "%T"}).out;
    if (listed.empty()) here_when_gone = fs::exists(proj_ + "/out/model.txt");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(here_when_gone) << "squeue said:" << squeue_seen;
  std::printf("squeue said:%s, then nothing\n", squeue_seen.c_str());
  // Here, the moment sacct said so.
  const std::string there = "/home/skyuser1/" + name_;
  EXPECT_EQ(ReadFile(proj_ + "/out/model.txt"), "words=4 cwd=" + there + " submit=" + there + "\n")
      << "sacct said:" << seen;
  EXPECT_TRUE(fs::exists(proj_ + "/slurm-" + id + ".out"));
  EXPECT_FALSE(fs::exists(proj_ + "/.marker"));
  const auto fetched = Events(global, "fetched");
  ASSERT_EQ(fetched.size(), 1u);
  EXPECT_THAT(fetched[0], HasSubstr("what it wrote from beta:" + there + " into ~/" + name_ +
                                    ": 2 of 2 file(s)"));
  std::printf("sacct said:%s\n", seen.c_str());
  // --sky-sync-back=none: nothing comes back.
  fs::remove_all(proj_ + "/out");
  CommandOutput none =
      Typed({"sbatch", "--sky-infra=beta", "--parsable", "--sky-sync-back=none", "job.sh"});
  auto [c2, second] = Submitted(none);
  ASSERT_EQ(c2, "beta");
  EXPECT_EQ(WaitForJobEnd(tb_, "beta", second), "COMPLETED");
  for (int i = 0; i < 100 && Events("beta:" + second, "ended").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_FALSE(Events("beta:" + second, "ended").empty());
  EXPECT_TRUE(Events("beta:" + second, "fetched").empty());
  EXPECT_FALSE(fs::exists(proj_ + "/out/model.txt"));
}

// Kill -9 of skyslurmd while it copies: the shim's retry meets the
// restarted daemon, which copies again (what had arrived stays) and
// submits once: one job, with every byte of the folder.
TEST_F(JobFolderTest, KillNineDuringTheCopyLeavesExactlyOneJobWithCompleteFiles) {
  std::string big(3 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  WriteFile(proj_ + "/data/big.bin", big);
  WriteFile(proj_ + "/job.sh", "#!/bin/bash\n#SBATCH -t 5\ncksum < data/big.bin > out.cksum\n");
  const std::string local_sum =
      Exec({.argv = {"sh", "-c", "cksum < data/big.bin"}, .cwd = proj_}).out;
  // 1 MiB/s: the copy takes about three seconds.
  const std::vector<std::pair<std::string, std::string>> slow = {{"SKYSLURM_SYNC_BWLIMIT", "1M"}};
  ASSERT_EQ(Typed({kSkyslurm, "queue"}, slow).exit_code, 0);  // the daemon up
  const int pid = UserDaemonPid(home_);
  ASSERT_GT(pid, 0);
  CommandOutput out;
  std::thread submit([&] {
    out = Typed({"sbatch", "--sky-infra=beta", "--parsable", "job.sh"}, slow);
  });
  bool killed = false;
  for (int i = 0; i < 3000 && !killed; ++i) {
    if (Exec({.argv = {"pgrep", "-P", std::to_string(pid), "-x", "rsync"}}).exit_code == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));  // part of it sent
      killed = ::kill(pid, SIGKILL) == 0;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  submit.join();
  ASSERT_TRUE(killed) << "the copy was never seen";
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(RoutedTo(out).first, "beta") << out.out;  // "<global id>\n": one cluster's form
  const std::string id = RoutedTo(out).second;
  cleanup_.emplace_back("beta", id);
  EXPECT_NE(UserDaemonPid(home_), pid);
  // Exactly one job carries its sky id.
  const std::string shown = RunOn(tb_, "beta", {"scontrol", "show", "job", id}).out;
  std::smatch tag;
  ASSERT_TRUE(std::regex_search(shown, tag, std::regex("skyslurm:(sky-[0-9a-f-]+)"))) << shown;
  const std::string comments =
      RunOn(tb_, "beta", {"squeue", "-h", "-u", "skyuser1", "-t", "all", "-o", "%k"}).out;
  std::size_t n = 0;
  for (std::size_t at = comments.find(tag[1].str()); at != std::string::npos;
       at = comments.find(tag[1].str(), at + 1)) {
    ++n;
  }
  EXPECT_EQ(n, 1u) << comments;
  EXPECT_EQ(WaitForJobEnd(tb_, "beta", id), "COMPLETED");
  EXPECT_EQ(ReadOnCluster(tb_, "beta", name_ + "/out.cksum"), local_sum);
}

// Killed after sbatch answered, before the answer was recorded: the
// restarted daemon adopts the job from beta's queue, and the copy it records
// still names the folder it was copied to (sync-down works). Before, an
// adopted copy had none.
TEST_F(JobFolderTest, ACopyAdoptedAfterACrashStillKnowsItsFolder) {
  const std::string mark = tmp_.File("fired");
  CommandOutput out =
      Typed({"sbatch", "--sky-infra=beta", "--parsable", "job.sh"},
            {{"SKYSLURM_FAULT_POINT", "submit.sent"}, {"SKYSLURM_FAULT_MARK", mark}});
  ASSERT_TRUE(fs::exists(mark)) << "the daemon was not killed at submit.sent";
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(RoutedTo(out).first, "beta") << out.out;  // "<global id>\n": one cluster's form
  const std::string id = RoutedTo(out).second;
  cleanup_.emplace_back("beta", id);
  EXPECT_EQ(WaitForJobEnd(tb_, "beta", id), "COMPLETED");
  CommandOutput down = Typed({kSkyslurm, "sync-down", "beta:" + id});
  EXPECT_EQ(down.exit_code, 0) << down.err;
  EXPECT_THAT(ReadFile(proj_ + "/out/model.txt"), HasSubstr("cwd=/home/skyuser1/" + name_));
}

// On Kubernetes the folder travels inside the job (its ConfigMap) and is
// unpacked into each pod before the script starts.
TEST_F(JobFolderTest, OnKappaTheProjectIsUnpackedInThePodAndRunsThere) {
  WriteFile(proj_ + "/kjob.sh", std::string(kJob) + "cat out/model.txt\n");
  CommandOutput out =
      Typed({"sbatch", "--sky-infra=kappa", "--sky-image=ubuntu:22.04", "--parsable", "kjob.sh"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(RoutedTo(out).first, "kappa") << out.out;  // "<global id>\n": one cluster's form
  const std::string id = RoutedTo(out).second;
  cleanup_.emplace_back("kappa", id);
  // The job writes its model, then shows it in its output.
  CommandOutput logs = Typed({kSkyslurm, "logs", "-f", "kappa:" + id});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "words=4 cwd=/skyslurm/work submit=/skyslurm/work\n");
  const auto copied = Events("kappa:" + id, "copied");
  ASSERT_EQ(copied.size(), 1u);
  EXPECT_THAT(copied[0], HasSubstr("~/" + name_ + " packed into the job for kappa: "));
  CommandOutput shown = Typed({kSkyslurm, "status", "kappa:" + id});
  EXPECT_THAT(shown.out, HasSubstr("COMPLETED")) << logs.out;
}

TEST_F(JobFolderTest, AFolderLargerThanAConfigMapHoldsIsRefusedForKappa) {
  std::string noise(2 << 20, '\0');
  std::uint32_t x = 2463534242u;
  for (char& c : noise) {  // xorshift: nothing gzip can shrink
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  WriteFile(proj_ + "/data/weights.bin", noise);
  CommandOutput out = Typed({"sbatch", "--sky-infra=kappa", "--sky-image=ubuntu:22.04", "job.sh"});
  EXPECT_NE(out.exit_code, 0);
  EXPECT_EQ(out.out, "");
  EXPECT_THAT(out.err, HasSubstr("more than a job on Kubernetes cluster kappa carries (900 KiB, in "
                                 "its ConfigMap); nothing was submitted"));
}

}  // namespace
}  // namespace skyslurm::testing
