#include "shim/front/real_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace skyslurm::shim {
namespace {
namespace fs = std::filesystem;

class RealCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "skyslurm-shim-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    root_ = templ;
  }
  void TearDown() override { fs::remove_all(root_); }

  // Creates root/<rel> as an executable file and returns its path.
  std::string Executable(const std::string& rel, bool executable = true) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "#!/bin/sh\n";
    fs::permissions(p, executable ? fs::perms::owner_all : fs::perms::owner_read);
    return p.string();
  }
  std::string Dir(const std::string& rel) {
    fs::create_directories(root_ / rel);
    return (root_ / rel).string();
  }
  std::string Link(const std::string& rel, const std::string& target) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    fs::create_symlink(target, p);
    return p.string();
  }

  fs::path root_;
};

TEST(ModeTest, FromArgv0) {
  EXPECT_EQ(ModeFromArgv0("sbatch"), Mode::kSbatch);
  EXPECT_EQ(ModeFromArgv0("/opt/skyslurm/libexec/skyslurm/bin/salloc"), Mode::kSalloc);
  EXPECT_EQ(ModeFromArgv0("./srun"), Mode::kSrun);
  EXPECT_EQ(ModeFromArgv0("skyslurm-shim"), std::nullopt);
  EXPECT_EQ(ModeFromArgv0("sbatch2"), std::nullopt);
  EXPECT_EQ(ModeFromArgv0(""), std::nullopt);
  EXPECT_EQ(ModeName(Mode::kSalloc), "salloc");
}

TEST_F(RealCommandTest, SkipsItselfAndFindsTheNextOnPath) {
  const std::string shim = Executable("libexec/skyslurm-shim");
  Link("libexec/bin/sbatch", "../skyslurm-shim");
  const std::string real = Executable("usr/bin/sbatch");
  const std::string path = Dir("libexec/bin") + ":" + Dir("usr/bin");
  std::string why;
  auto found = FindRealCommand("sbatch", path, fs::canonical(shim).string(), &why);
  ASSERT_TRUE(found.has_value()) << why;
  EXPECT_EQ(*found, real);
}

TEST_F(RealCommandTest, SkipsAnotherCopyOfTheShim) {
  // Two installed copies (a package and a build tree) must not call each other.
  Executable("a/skyslurm-shim");
  Link("a/bin/srun", "../skyslurm-shim");
  Executable("b/skyslurm-shim");
  Link("b/bin/srun", "../skyslurm-shim");
  const std::string real = Executable("usr/bin/srun");
  const std::string path = Dir("b/bin") + ":" + Dir("a/bin") + ":" + Dir("usr/bin");
  auto found =
      FindRealCommand("srun", path, fs::canonical(root_ / "a/skyslurm-shim").string(), nullptr);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, real);
}

TEST_F(RealCommandTest, SkipsNonExecutablesAndDirectories) {
  Executable("one/salloc", /*executable=*/false);
  Dir("two/salloc");
  const std::string real = Executable("three/salloc");
  const std::string path = Dir("one") + ":" + Dir("two") + "::" + Dir("three");
  auto found = FindRealCommand("salloc", path, "/nonexistent", nullptr);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, real);
}

TEST_F(RealCommandTest, RealCommandReachedThroughASymlinkIsKept) {
  const std::string real = Executable("usr/bin/sbatch");
  const std::string link = Link("local/bin/sbatch", real);
  auto found = FindRealCommand("sbatch", Dir("local/bin"), "/nonexistent/skyslurm-shim", nullptr);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, link);
}

TEST_F(RealCommandTest, ExplainsWhenOnlyShimsAreFound) {
  const std::string shim = Executable("libexec/skyslurm-shim");
  const std::string link = Link("libexec/bin/sbatch", "../skyslurm-shim");
  std::string why;
  auto found = FindRealCommand("sbatch", Dir("libexec/bin"), fs::canonical(shim).string(), &why);
  EXPECT_FALSE(found.has_value());
  EXPECT_EQ(why, "no sbatch on PATH other than skyslurm's shim (" + link + ")");
}

TEST_F(RealCommandTest, ExplainsWhenNothingIsFound) {
  std::string why;
  EXPECT_FALSE(FindRealCommand("sbatch", Dir("empty"), "/x", &why).has_value());
  EXPECT_EQ(why, "no sbatch on PATH");
}

}  // namespace
}  // namespace skyslurm::shim
