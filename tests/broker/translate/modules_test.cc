#include "broker/translate/modules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::translate {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kBeta = {"cuda/12.4", "cuda/12.6"};
const std::vector<std::string> kGamma = {"CUDA/12.2", "cuda-toolkit/12.4"};

TEST(ModuleResolutionTest, ExactWins) {
  auto r = ResolveModule("cuda/12.4", kBeta, {});
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.module, "cuda/12.4");
  EXPECT_EQ(r.why, "present");
}

TEST(ModuleResolutionTest, SameMajorMinorWithAHigherPatchFirst) {
  auto r = ResolveModule("cuda/12.4.0", {"cuda/12.4.1", "cuda/12.4.3", "cuda/12.5.0"}, {});
  EXPECT_EQ(r.module, "cuda/12.4.1");
  EXPECT_THAT(r.why, HasSubstr("same 12.4 with a higher patch"));
}

TEST(ModuleResolutionTest, ThenTheNearestHigherMinor) {
  auto r = ResolveModule("cuda/12.1", kBeta, {});
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.module, "cuda/12.4");
  EXPECT_EQ(r.why, "nearest newer 12.x");
  EXPECT_EQ(ResolveModule("cuda/12.5", kBeta, {}).module, "cuda/12.6");
}

TEST(ModuleResolutionTest, NeverDowngradesNorCrossesAMajor) {
  EXPECT_FALSE(ResolveModule("cuda/12.8", kBeta, {}).found);
  EXPECT_FALSE(ResolveModule("cuda/11.8", kBeta, {}).found);
  EXPECT_FALSE(ResolveModule("cuda/13.0", kBeta, {}).found);
}

TEST(ModuleResolutionTest, RenamesFromTheConfiguration) {
  config::ModuleMap map;
  map.renames["cuda"] = "CUDA";
  auto r = ResolveModule("cuda/12.1", kGamma, map);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.module, "CUDA/12.2");
  EXPECT_THAT(r.why, HasSubstr("renamed cuda -> CUDA (configuration)"));
  EXPECT_EQ(ResolveModule("cuda/12.2", kGamma, map).module, "CUDA/12.2");
  EXPECT_EQ(ResolveModule("cuda", kGamma, map).module, "CUDA");
}

TEST(ModuleResolutionTest, ExplicitMapWhenNothingCompatibleExists) {
  config::ModuleMap map;
  map.versions["cuda/11.8"] = "cuda-toolkit/12.4";
  auto r = ResolveModule("cuda/11.8", kGamma, map);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.module, "cuda-toolkit/12.4");
  EXPECT_EQ(r.why, "mapped cuda/11.8 -> cuda-toolkit/12.4 (configuration)");
  map.versions["cuda/11.7"] = "cuda-toolkit/99";
  auto missing = ResolveModule("cuda/11.7", kGamma, map);
  EXPECT_FALSE(missing.found);
  EXPECT_THAT(missing.why, HasSubstr("the configured counterpart cuda-toolkit/99 is not there"));
}

TEST(ModuleResolutionTest, NoCounterpartSaysWhatIsThere) {
  auto r = ResolveModule("cuda/12.1", kGamma, {});
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.why, "no counterpart (no module of that name)");
  config::ModuleMap map;
  map.renames["cuda"] = "CUDA";
  auto older = ResolveModule("cuda/12.9", kGamma, map);
  EXPECT_EQ(older.why, "no counterpart (it has CUDA/12.2)");
}

TEST(ModuleResolutionTest, NameWithoutVersion) {
  EXPECT_EQ(ResolveModule("cuda", kBeta, {}).module, "cuda");
  EXPECT_FALSE(ResolveModule("python", kBeta, {}).found);
}

TEST(VersionTest, NumericComparison) {
  EXPECT_LT(CompareVersions("12.9", "12.10"), 0);
  EXPECT_GT(CompareVersions("12.10", "12.9"), 0);
  EXPECT_EQ(CompareVersions("12.4", "12.4"), 0);
  EXPECT_LT(CompareVersions("12.4", "12.4.1"), 0);
  EXPECT_EQ(CompareVersions("012", "12"), 0);
  EXPECT_LT(CompareVersions("8.9-cuda11", "8.9-cuda12"), 0);
}

}  // namespace
}  // namespace skyslurm::translate
