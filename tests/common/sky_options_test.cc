#include "common/sky_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace skyslurm::sky {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(SkyOptionsTest, RegistersTheDocumentedOptions) {
  std::set<std::string> names;
  for (const auto& spec : SkyOptionSpecs()) {
    names.insert(spec.name);
    EXPECT_TRUE(std::string(spec.name).starts_with("sky-")) << spec.name;
    EXPECT_NE(std::string(spec.usage), "");
    // spank prints NAME=arginfo for options that take a value.
    EXPECT_EQ(spec.arginfo != nullptr, spec.argument != ArgumentKind::kNone) << spec.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"sky-any-cluster", "sky-infra", "sky-explain",
                                          "sky-managed", "sky-retry-on-failure", "sky-image", "sky-workdir", "sky-sync-back"}));
}

TEST(SkyOptionsTest, ImageNeedsAReferenceWithoutSpaces) {
  EXPECT_THAT(ValidateOptionValue(SkyOption::kImage, "nvcr.io/nvidia/pytorch:24.01-py3"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kImage, nullptr), HasSubstr("needs a container image"));
  EXPECT_THAT(ValidateOptionValue(SkyOption::kImage, "ubuntu 22.04"), HasSubstr("no spaces"));
  EXPECT_THAT(ValidateOptionValue(SkyOption::kWorkdir, "~/proj"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kWorkdir, "none"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kWorkdir, nullptr), HasSubstr("needs a folder"));
  EXPECT_THAT(ValidateOptionValue(SkyOption::kSyncBack, "out/*.txt"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kSyncBack, "../secret"), HasSubstr("without '..'"));
  EXPECT_THAT(ValidateOptionValue(SkyOption::kSyncBack, "/etc/passwd"), HasSubstr("relative"));
}

TEST(SkyOptionsTest, AnyClusterTakesAnOptionalList) {
  for (const auto& spec : SkyOptionSpecs()) {
    if (spec.id == SkyOption::kAnyCluster) {
      EXPECT_EQ(spec.argument, ArgumentKind::kOptional);
    }
  }
  EXPECT_THAT(ValidateOptionValue(SkyOption::kAnyCluster, nullptr), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kAnyCluster, ""), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kAnyCluster, "(null)"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kAnyCluster, "beta"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kAnyCluster, "alpha,beta,gamma-2,x_y"), IsEmpty());
}

TEST(SkyOptionsTest, AnyClusterRejectsMalformedLists) {
  for (const char* bad : {"beta,", ",beta", "a,,b", "be ta", "beta;rm", "a/b"}) {
    EXPECT_THAT(ValidateOptionValue(SkyOption::kAnyCluster, bad),
                HasSubstr("invalid --sky-any-cluster list"))
        << bad;
  }
}

TEST(SkyOptionsTest, InfraNeedsOneClusterName) {
  EXPECT_THAT(ValidateOptionValue(SkyOption::kInfra, "gamma"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kInfra, nullptr), HasSubstr("needs a cluster"));
  EXPECT_THAT(ValidateOptionValue(SkyOption::kInfra, "a,b"), HasSubstr("invalid --sky-infra"));
}

TEST(SkyOptionsTest, RetryOnFailureIsABoundedCount) {
  EXPECT_THAT(ValidateOptionValue(SkyOption::kRetryOnFailure, "0"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kRetryOnFailure, "3"), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kRetryOnFailure, "100"), IsEmpty());
  for (const char* bad : {"", "-1", "101", "3x", "x", " 3"}) {
    EXPECT_THAT(ValidateOptionValue(SkyOption::kRetryOnFailure, bad),
                HasSubstr("invalid --sky-retry-on-failure value"))
        << bad;
  }
  EXPECT_THAT(ValidateOptionValue(SkyOption::kRetryOnFailure, nullptr),
              HasSubstr("invalid --sky-retry-on-failure"));
}

TEST(SkyOptionsTest, FlagsTakeNoValue) {
  EXPECT_THAT(ValidateOptionValue(SkyOption::kExplain, nullptr), IsEmpty());
  EXPECT_THAT(ValidateOptionValue(SkyOption::kManaged, nullptr), IsEmpty());
}

TEST(SkyOptionsTest, ClusterNames) {
  EXPECT_TRUE(IsValidClusterName("alpha"));
  EXPECT_TRUE(IsValidClusterName("h100-cluster_2"));
  EXPECT_FALSE(IsValidClusterName(""));
  EXPECT_FALSE(IsValidClusterName(std::string(65, 'a')));
  EXPECT_FALSE(IsValidClusterName("a.b"));
}

TEST(SkyOptionsTest, AbsentValues) {
  EXPECT_TRUE(IsAbsentValue(nullptr));
  EXPECT_TRUE(IsAbsentValue(""));
  EXPECT_TRUE(IsAbsentValue("(null)"));
  EXPECT_FALSE(IsAbsentValue("beta"));
}

}  // namespace
}  // namespace skyslurm::sky
