#include "broker/sync/rsync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "broker/sync/remote_folder.h"

namespace skyslurm::sync {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const RsyncRemote kBeta{"beta", "/home/ana/.slurm/config", "yes"};

// An `ssh` in `bin` that runs its command here (ssh [options] host
// command), as a login node would; with `listing`, the changed-files
// listing (find -newermt) answers that instead (a hostile node's).
void WriteLocalSsh(const std::string& bin, const std::string& listing = "") {
  std::string script =
      "#!/bin/sh\n"
      "while [ $# -gt 0 ]; do\n"
      "  case \"$1\" in -F | -o) shift 2 ;; -*) shift ;; *) break ;; esac\n"
      "done\n"
      "shift\n";
  if (!listing.empty()) {
    script.append("case \"$*\" in *newermt*) printf '")
        .append(listing)
        .append("'; exit 0 ;; esac\n");
  }
  script.append("exec sh -c \"$*\"\n");
  std::ofstream(bin + "/ssh") << script;
  std::filesystem::permissions(bin + "/ssh", std::filesystem::perms::owner_all);
}

TEST(RsyncTest, APushHonoursTheIgnoreFilesMakesTheFolderAndUsesTheUsersSshSettings) {
  const auto argv = PushArgv(kBeta, "/home/ana/proj", "/users/ana 2/proj", false);
  EXPECT_EQ(argv.front(), "rsync");
  EXPECT_THAT(argv, Contains("--filter=:- .gitignore"));
  EXPECT_THAT(argv, Contains("--filter=:- .skyignore"));
  EXPECT_THAT(argv, Contains("ssh -F /home/ana/.slurm/config -o BatchMode=yes -o LogLevel=ERROR "
                             "-o StrictHostKeyChecking=yes"));
  EXPECT_THAT(argv, Contains("--rsync-path=" + MakePrivateFolderCommand("/users/ana 2/proj") +
                             " && rsync"));
  // Never --delete: the job's earlier results there stay.
  EXPECT_THAT(argv, ::testing::Not(Contains("--delete")));
  EXPECT_EQ(argv[argv.size() - 2], "/home/ana/proj/");
  EXPECT_EQ(argv.back(), "beta:/users/ana 2/proj/");
  EXPECT_THAT(PushArgv(kBeta, "/p", "/q", true), Contains("--info=progress2,skip1"));
  EXPECT_THAT(argv, Contains("--update"));  // a file newer there stays
  RsyncRemote slow = kBeta;
  slow.bwlimit = 10 << 20;  // sync_bwlimit: 10M
  EXPECT_THAT(PushArgv(slow, "/p", "/q", false), Contains("--bwlimit=10240"));
  RsyncRemote shared = kBeta;
  shared.control_dir = "/run/user/1000/skyslurm-ssh";
  EXPECT_THAT(SshCommand(shared), HasSubstr(" -o ControlMaster=auto -o ControlPersist=60 -o "
                                            "ControlPath=/run/user/1000/skyslurm-ssh/%C"));
}

TEST(RsyncTest, APullTakesOnlyThePatternsAndKeepsNewerFilesHere) {
  const auto argv = PullArgv(kBeta, "/users/ana/proj", "/home/ana/proj", {"out/*.txt"}, false);
  EXPECT_THAT(argv, Contains("--update"));
  EXPECT_THAT(argv, Contains("--include=out/*.txt"));
  EXPECT_THAT(argv, Contains("--exclude=*"));
  EXPECT_EQ(argv[argv.size() - 2], "beta:/users/ana/proj/");
  EXPECT_EQ(argv.back(), "/home/ana/proj/");
  EXPECT_THAT(PullArgv(kBeta, "a", "b", {}, false), ::testing::Not(Contains("--exclude=*")));
}

// The shared connections' folder is the user's and private, or not used.
TEST(RsyncTest, TheControlFolderIsPrivateOrNone) {
  namespace fs = std::filesystem;
  const std::string runtime = ::testing::TempDir() + "rsync-runtime-" + std::to_string(::getpid());
  fs::remove_all(runtime);
  fs::create_directories(runtime);
  const char* before = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  const std::string dir = SshControlDir();
  if (runtime.size() + 13 <= 48) {
    EXPECT_EQ(dir, runtime + "/skyslurm-ssh");
    EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
    fs::permissions(dir, fs::perms::group_read | fs::perms::group_exec, fs::perm_options::add);
    EXPECT_EQ(SshControlDir(), "");  // others may enter: not used
  } else {
    EXPECT_EQ(dir, "");  // too long a path for ssh's socket
  }
  if (before != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
  fs::remove_all(runtime);
}

TEST(RsyncTest, StatisticsAreReadWithOrWithoutThousandsSeparators) {
  const char kOut[] =
      "\nNumber of files: 7 (reg: 4, dir: 3)\n"
      "Number of created files: 7 (reg: 4, dir: 3)\n"
      "Number of deleted files: 0\n"
      "Number of regular files transferred: 1\n"
      "Total file size: 1,234,567 bytes\n"
      "Total transferred file size: 5016 bytes\n"
      "Literal data: 0 bytes\n"
      "Total bytes sent: 5,205\n"
      "Total bytes received: 39\n";
  auto s = ParseRsyncStats(kOut);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->files, 4u);
  EXPECT_EQ(s->files_transferred, 1u);
  EXPECT_EQ(s->total_size, 1234567u);
  EXPECT_EQ(s->transferred_size, 5016u);
  EXPECT_EQ(s->bytes_sent, 5205u);
  EXPECT_EQ(s->bytes_received, 39u);
  EXPECT_EQ(DescribeStats(*s), "1 of 4 file(s), 4.9 KiB (5.1 KiB sent)");
  EXPECT_FALSE(ParseRsyncStats("rsync: connection unexpectedly closed").ok());
}

TEST(RsyncTest, ProgressIsTheLastShareTold) {
  EXPECT_EQ(LastProgressPercent("      32768   1%   31.25MB/s    0:00:00  \r    1572864  45%    "
                                "1.50MB/s    0:00:01 (xfr#1, to-chk=3/5)\r"),
            45);
  EXPECT_EQ(LastProgressPercent("Number of files: 7 (reg: 4, dir: 3)\n"), -1);
  EXPECT_EQ(LastProgressPercent("        360 100%    0.00kB/s    0:00:00 (xfr#4, to-chk=0/6)"),
            100);
}

// The real rsync over a real folder: what .gitignore and .skyignore exclude
// is not counted, in the folder where they are and below it.
TEST(RsyncTest, MeasuringCountsWhatACopyWouldSend) {
  namespace fs = std::filesystem;
  const std::string d = ::testing::TempDir() + "rsync-measure-" + std::to_string(::getpid());
  fs::remove_all(d);
  fs::create_directories(d + "/data");
  fs::create_directories(d + "/build");
  std::ofstream(d + "/train.py") << "print(1)\n";                  // 9
  std::ofstream(d + "/data/train.txt") << std::string(1000, 'x');  // 1000
  std::ofstream(d + "/data/run.log") << std::string(5000, 'l');    // skyignored
  std::ofstream(d + "/build/big.bin") << std::string(9000, 'b');   // gitignored
  std::ofstream(d + "/.gitignore") << "build/\n";                  // 7
  std::ofstream(d + "/data/.skyignore") << "*.log\n";              // 6
  LocalCommandRunner runner;
  auto s = Measure(runner, d, std::chrono::seconds(30));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->files, 4u);
  EXPECT_EQ(s->total_size, 9u + 1000u + 7u + 6u);
  EXPECT_FALSE(fs::exists("/nonexistent/skyslurm-measure"));
  auto missing = Measure(runner, d + "/nope", std::chrono::seconds(30));
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("rsync failed"));
  fs::remove_all(d);
}

// rsync's answer when files vanish while it reads the folder.
class VanishedRunner : public CommandRunner {
 public:
  explicit VanishedRunner(int exit_code) : exit_code_(exit_code) {}
  Result<CommandOutput> Run(const Command&) override {
    CommandOutput out;
    out.exit_code = exit_code_;
    out.out =
        "Number of files: 7 (reg: 4, dir: 3)\nNumber of regular files transferred: 4\n"
        "Total file size: 1,022 bytes\nTotal transferred file size: 1,022 bytes\n"
        "Total bytes sent: 1,300\nTotal bytes received: 90\n";
    out.err =
        "file has vanished: \"/tmp/w/.snakemake/tmp.10h1cjb5\"\n"
        "rsync warning: some files vanished before they could be transferred (code 24)\n";
    return out;
  }

 private:
  int exit_code_;
};

// Regression (issue 17, a CI run): Snakemake's temporary folder vanished
// while a routed job's folder was measured, and the submission failed.
TEST(RsyncTest, FilesThatVanishWhileTheFolderIsReadAreNotAFailure) {
  VanishedRunner vanished(24);
  auto s = Measure(vanished, "/tmp/w", std::chrono::seconds(30));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->files, 4u);
  auto pushed = Push(vanished, kBeta, "/tmp/w", "/home/ana/w", std::chrono::seconds(30), {});
  EXPECT_TRUE(pushed.ok()) << pushed.status().message();
  // Any other partial transfer still is one (23: some files could not be read).
  VanishedRunner unreadable(23);
  EXPECT_FALSE(Measure(unreadable, "/tmp/w", std::chrono::seconds(30)).ok());
}

TEST(RsyncTest, WhatChangedIsListedOverSshAndFetchedByName) {
  const auto list = ChangedFilesArgv(kBeta, "/users/ana 2/proj", 1'700'000'000'000'000'123);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], "sh");
  // The fraction to the nanosecond, zero-padded.
  EXPECT_THAT(list[2], HasSubstr("-newermt @1700000000.000000123"));
  EXPECT_THAT(list[2], HasSubstr("ssh -F /home/ana/.slurm/config"));
  EXPECT_THAT(list[2], HasSubstr("/users/ana 2/proj"));
  EXPECT_THAT(ChangedFilesArgv(kBeta, "p", 1, ".skyslurm-probe-1-2")[2],
              HasSubstr("if [ -e .skyslurm-probe-1-2 ]; then printf '\\''/same\\0"));
  const auto pull = PullListedArgv(kBeta, "/users/ana/proj", "/home/ana/proj");
  EXPECT_THAT(pull, Contains("--files-from=-"));
  EXPECT_THAT(pull, Contains("--from0"));
  EXPECT_THAT(pull, Contains("--update"));
  EXPECT_EQ(pull[pull.size() - 2], "beta:/users/ana/proj/");
  EXPECT_EQ(pull.back(), "/home/ana/proj/");
  EXPECT_THAT(SplitNulList(std::string("a\0out/b c\0\0", 10)), ElementsAre("a", "out/b c"));
  EXPECT_TRUE(SplitNulList("").empty());
}

// The real listing and fetch, with an `ssh` that runs its command here:
// what the job wrote comes back, what was sent and then removed here
// (a workflow engine's marker) does not.
TEST(RsyncTest, PullChangedFetchesWhatTheJobWroteAndNothingElse) {
  namespace fs = std::filesystem;
  const std::string d = ::testing::TempDir() + "rsync-changed-" + std::to_string(::getpid());
  fs::remove_all(d);
  fs::create_directories(d + "/bin");
  fs::create_directories(d + "/there/out");
  fs::create_directories(d + "/here");
  WriteLocalSsh(d + "/bin");
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  };
  // Sent with the folder (older than the send).
  write(d + "/there/data.txt", "data\n");
  write(d + "/there/marker", "");
  write(d + "/here/data.txt", "data\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::int64_t sent = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // The job's.
  write(d + "/there/out/model.txt", "model\n");
  write(d + "/there/data.txt", "data, cleaned\n");
  // The folder there is private (as a job's folder is made); the one here
  // is open to others (a shared /tmp a peer's jobs write into): it stays so
  // (regression: a pull took the private mode, and a later job on a
  // cluster sharing the folder could not open its output file there).
  fs::permissions(d + "/there", fs::perms::owner_all);
  fs::permissions(d + "/there/out", fs::perms::owner_all);
  fs::create_directories(d + "/here/out");
  fs::permissions(d + "/here", fs::perms::all);
  fs::permissions(d + "/here/out", fs::perms::all);
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (d + "/bin:" + path).c_str(), 1);
  LocalCommandRunner runner;
  auto got = PullChanged(runner, RsyncRemote{"beta", "/dev/null", "no"}, d + "/there", d + "/here",
                         sent, std::chrono::seconds(30));
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->files_transferred, 2u);
  std::ifstream model(d + "/here/out/model.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(model), {}), "model\n");
  std::ifstream data(d + "/here/data.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(data), {}), "data, cleaned\n");
  EXPECT_FALSE(fs::exists(d + "/here/marker"));
  EXPECT_EQ(fs::status(d + "/here").permissions(), fs::perms::all);
  EXPECT_EQ(fs::status(d + "/here/out").permissions(), fs::perms::all);
  // Nothing new: nothing but the listing runs.
  ::setenv("PATH", (d + "/bin:" + path).c_str(), 1);
  auto none = PullChanged(runner, RsyncRemote{"beta", "/dev/null", "no"}, d + "/there", d + "/here",
                          sent + 3'600'000'000'000, std::chrono::seconds(30));
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->files, 0u);
  // The folder there is this one (a filesystem both mount): nothing is
  // copied onto itself, and the probe is gone.
  write(d + "/here/late.txt", "being written by another job\n");
  bool same = false;
  ::setenv("PATH", (d + "/bin:" + path).c_str(), 1);
  auto itself = PullChanged(runner, RsyncRemote{"beta", "/dev/null", "no"}, d + "/here",
                            d + "/here", sent, std::chrono::seconds(30), &same);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(itself.ok()) << itself.status().message();
  EXPECT_TRUE(same);
  EXPECT_EQ(itself->files_transferred, 0u);
  for (const auto& e : fs::directory_iterator(d + "/here")) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".skyslurm-probe-")) << e.path();
  }
  fs::remove_all(d);
}

// A hostile or broken login node: its listing names an absolute path and
// ".." entries, and its folder holds links out of it. Nothing is written
// outside the job's folder here, and the links are not made.
TEST(RsyncTest, AHostileListingWritesNothingOutsideTheFolder) {
  namespace fs = std::filesystem;
  EXPECT_THAT(
      NamesInside({"out/a", "/etc/passwd", "../../.bashrc", "a/../../b", "..", "ok..txt", ""}),
      ElementsAre("out/a", "ok..txt"));
  const std::string d = ::testing::TempDir() + "rsync-hostile-" + std::to_string(::getpid());
  fs::remove_all(d);
  fs::create_directories(d + "/bin");
  fs::create_directories(d + "/there/out");
  fs::create_directories(d + "/home/job");
  // The "cluster": its listing is whatever it likes; rsync runs here.
  WriteLocalSsh(d + "/bin",
                "out/ok.txt\\0../evil.txt\\0" + d + "/there/abs.txt\\0link\\0abs-link\\0");
  std::ofstream(d + "/there/out/ok.txt") << "ok\n";
  std::ofstream(d + "/evil.txt") << "the cluster's\n";
  std::ofstream(d + "/there/abs.txt") << "abs\n";
  fs::create_symlink("../../.bashrc", d + "/there/link");
  fs::create_symlink("/etc/hostname", d + "/there/abs-link");
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (d + "/bin:" + path).c_str(), 1);
  LocalCommandRunner runner;
  auto got = PullChanged(runner, RsyncRemote{"beta", "/dev/null", "no"}, d + "/there",
                         d + "/home/job", 0, std::chrono::seconds(30));
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(fs::exists(d + "/home/job/out/ok.txt"));
  EXPECT_FALSE(fs::exists(d + "/home/evil.txt"));
  EXPECT_FALSE(fs::exists(d + "/home/job/abs.txt"));
  EXPECT_FALSE(fs::is_symlink(d + "/home/job/link"));
  EXPECT_FALSE(fs::is_symlink(d + "/home/job/abs-link"));
  fs::remove_all(d);
}

// A push never overwrites a file that is newer on the cluster (in mapped
// mode, the user's own project folder there), and names each one.
TEST(RsyncTest, APushLeavesFilesNewerThereAloneAndNamesThem) {
  namespace fs = std::filesystem;
  const std::string d = ::testing::TempDir() + "rsync-newer-" + std::to_string(::getpid());
  fs::remove_all(d);
  fs::create_directories(d + "/bin");
  fs::create_directories(d + "/here");
  fs::create_directories(d + "/there");
  WriteLocalSsh(d + "/bin");
  std::ofstream(d + "/here/train.py") << "old\n";
  std::ofstream(d + "/here/data.txt") << "data\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::ofstream(d + "/there/train.py") << "edited on the cluster\n";
  const std::string path = std::getenv("PATH");
  ::setenv("PATH", (d + "/bin:" + path).c_str(), 1);
  LocalCommandRunner runner;
  auto pushed = Push(runner, RsyncRemote{"beta", "/dev/null", "no"}, d + "/here", d + "/there",
                     std::chrono::seconds(30), {}, /*private_folder=*/true);
  ::setenv("PATH", path.c_str(), 1);
  ASSERT_TRUE(pushed.ok()) << pushed.status().message();
  std::ifstream kept(d + "/there/train.py");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "edited on the cluster\n");
  EXPECT_TRUE(fs::exists(d + "/there/data.txt"));
  EXPECT_THAT(pushed->newer_there, ElementsAre("train.py"));
  EXPECT_THAT(DescribeStats(*pushed), HasSubstr("; 1 newer there left alone: train.py"));
  // A job's own folder stays private whatever the mode here (0755).
  EXPECT_EQ(fs::status(d + "/there").permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(d + "/there/data.txt").permissions() &
                (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
  // A name after a progress line's '\r' is the name alone.
  auto stats = ParseRsyncStats(
      "     1,234  45%  1.23MB/s  0:00:01 (xfr#1, to-chk=0/4)\rconf.yaml is newer\n"
      "Number of regular files transferred: 1\n");
  ASSERT_TRUE(stats.ok());
  EXPECT_THAT(stats->newer_there, ElementsAre("conf.yaml"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace skyslurm::sync
