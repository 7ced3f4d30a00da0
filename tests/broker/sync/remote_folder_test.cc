// The job's folder is made by this machine's real sh as another user
// (setpriv: uid 4242, no such account needed) in folders owned and opened
// as a login node's might be.
#include "broker/sync/remote_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "broker/util/command.h"

namespace skyslurm::sync {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr uid_t kUser = 4242, kOther = 4243;

class RemoteFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as other users";
    char pattern[] = "/tmp/skyslurm-folder-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    tmp_ = pattern;
    fs::permissions(tmp_, fs::perms(0755));
  }
  void TearDown() override {
    if (!tmp_.empty()) fs::remove_all(tmp_);
  }
  std::string File(const std::string& name) const { return tmp_ + "/" + name; }
  // A folder owned by `owner` with `mode`.
  std::string Folder(const std::string& name, uid_t owner, mode_t mode) {
    const std::string path = File(name);
    fs::create_directories(path);
    EXPECT_EQ(::chown(path.c_str(), owner, owner), 0);
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  // The command as the login node's shell runs it, as kUser.
  CommandOutput Make(const std::string& dest, const std::string& cwd = "/") {
    LocalCommandRunner local;
    auto ran = local.Run({.argv = {"setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
                                   "sh", "-c", MakePrivateFolderCommand(dest)},
                          .cwd = cwd});
    EXPECT_TRUE(ran.ok()) << ran.status().message();
    return ran.ok() ? *ran : CommandOutput{};
  }
  static mode_t Mode(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }
  std::string tmp_;
};

TEST_F(RemoteFolderTest, AFolderAnotherUserMadeIsRefusedAndNothingIsMade) {
  // /scratch/$USER, made by someone else first, open to all.
  const std::string theirs = Folder("scratch/$USER", kOther, 0777);
  Folder("scratch", 0, 01777);
  CommandOutput out = Make(theirs + "/skyslurm-jobs/sky-1");
  EXPECT_EQ(out.exit_code, kFolderRefused);
  EXPECT_THAT(out.err, HasSubstr(theirs + " belongs to uid 4243, not to you (uid 4242)"));
  EXPECT_FALSE(fs::exists(theirs + "/skyslurm-jobs"));
}

TEST_F(RemoteFolderTest, AFolderEveryoneCanWriteIsRefusedUnlessSticky) {
  const std::string open = Folder("open", 0, 0777);
  CommandOutput out = Make(open + "/u/skyslurm-jobs/sky-2");
  EXPECT_EQ(out.exit_code, kFolderRefused);
  EXPECT_THAT(out.err, HasSubstr(open + " is writable by every user (mode 777) and not sticky"));
  EXPECT_FALSE(fs::exists(open + "/u"));
  // A sticky scratch root (1777): the user's folders are made there, 0700.
  const std::string scratch = Folder("sticky", 0, 01777);
  out = Make(scratch + "/u/skyslurm-jobs/sky-2");
  EXPECT_EQ(out.exit_code, 0) << out.err;
  for (const std::string& made :
       {scratch + "/u", scratch + "/u/skyslurm-jobs", scratch + "/u/skyslurm-jobs/sky-2"}) {
    EXPECT_EQ(Mode(made), 0700u) << made;
  }
  // Made again: its own folders pass.
  EXPECT_EQ(Make(scratch + "/u/skyslurm-jobs/sky-2").exit_code, 0);
}

TEST_F(RemoteFolderTest, ALinkAnotherUserOwnsIsRefused) {
  const std::string mine = Folder("mine", kUser, 0700);
  Folder("elsewhere", kOther, 0755);
  fs::create_directory_symlink(File("elsewhere"), mine + "/link");
  EXPECT_EQ(::lchown((mine + "/link").c_str(), kUser, kUser), 0);
  CommandOutput out = Make(mine + "/link/skyslurm-jobs/sky-3");
  EXPECT_EQ(out.exit_code, kFolderRefused);
  EXPECT_THAT(out.err, HasSubstr("belongs to uid 4243"));
}

// A root's link on the way (/scratch -> /lustre/scratch, as clusters
// have): a link's own mode is always 777, so it is judged by its owner and
// by what it points at.
TEST_F(RemoteFolderTest, ARootsLinkToASharedRootPasses) {
  const std::string lustre = Folder("lustre", 0, 01777);
  fs::create_directory_symlink(lustre, File("scratch"));
  CommandOutput out = Make(File("scratch") + "/u/skyslurm-jobs/sky-5");
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(Mode(lustre + "/u/skyslurm-jobs/sky-5"), 0700u);
}

TEST_F(RemoteFolderTest, ARelativeFolderIsMadeUnderTheHome) {
  const std::string home = Folder("home", kUser, 0755);
  CommandOutput out = Make("skyslurm-jobs/sky-4", home);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(Mode(home + "/skyslurm-jobs/sky-4"), 0700u);
}

}  // namespace
}  // namespace skyslurm::sync
