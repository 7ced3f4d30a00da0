#include "broker/catalog/accelerators.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::catalog {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(AcceleratorCatalogTest, CanonicalNamesInAnyCase) {
  AcceleratorCatalog catalog;
  for (const char* name : {"H100", "H200", "H100-NVL", "GH200", "B200", "B300", "A100", "A100-80GB",
                           "A10G", "L4", "L40S", "V100", "T4", "MI250X", "MI300X"}) {
    EXPECT_THAT(catalog.Canonical(name), Optional(std::string(name)));
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_THAT(catalog.Canonical(lower), Optional(std::string(name))) << lower;
  }
}

TEST(AcceleratorCatalogTest, TestbedSpellings) {
  AcceleratorCatalog catalog;
  EXPECT_THAT(catalog.Canonical("h100"), Optional(std::string("H100")));
  EXPECT_THAT(catalog.Canonical("nvidia_h100_80gb_hbm3"), Optional(std::string("H100")));
  EXPECT_THAT(catalog.Canonical("A100"), Optional(std::string("A100")));
  EXPECT_TRUE(catalog.Same("h100", "nvidia_h100_80gb_hbm3"));
  EXPECT_FALSE(catalog.Same("h100", "A100"));
}

TEST(AcceleratorCatalogTest, NvmlAutodetectNames) {
  AcceleratorCatalog catalog;
  EXPECT_THAT(catalog.Canonical("nvidia_a100-sxm4-80gb"), Optional(std::string("A100-80GB")));
  EXPECT_THAT(catalog.Canonical("nvidia_a100-sxm4-40gb"), Optional(std::string("A100")));
  EXPECT_THAT(catalog.Canonical("nvidia_a100_80gb_pcie"), Optional(std::string("A100-80GB")));
  EXPECT_THAT(catalog.Canonical("nvidia_h100_nvl"), Optional(std::string("H100-NVL")));
  EXPECT_THAT(catalog.Canonical("nvidia_h100_pcie"), Optional(std::string("H100")));
  EXPECT_THAT(catalog.Canonical("nvidia_gh200_480gb"), Optional(std::string("GH200")));
  EXPECT_THAT(catalog.Canonical("tesla_v100-sxm2-32gb"), Optional(std::string("V100")));
  EXPECT_THAT(catalog.Canonical("tesla_t4"), Optional(std::string("T4")));
  EXPECT_THAT(catalog.Canonical("nvidia_l40s"), Optional(std::string("L40S")));
  EXPECT_THAT(catalog.Canonical("amd_instinct_mi300x"), Optional(std::string("MI300X")));
  // A variant the table does not list still resolves by its model name.
  EXPECT_THAT(catalog.Canonical("nvidia_h100_80gb_hbm3e"), Optional(std::string("H100")));
  EXPECT_THAT(catalog.Canonical("NVIDIA_H200_141GB_HBM3E"), Optional(std::string("H200")));
}

// Kubernetes node labels: GPU feature discovery's nvidia.com/gpu.product and
// GKE's cloud.google.com/gke-accelerator values.
TEST(AcceleratorCatalogTest, KubernetesLabelSpellings) {
  AcceleratorCatalog catalog;
  EXPECT_THAT(catalog.Canonical("NVIDIA-H100-80GB-HBM3"), Optional(std::string("H100")));
  EXPECT_THAT(catalog.Canonical("NVIDIA-L4"), Optional(std::string("L4")));
  EXPECT_THAT(catalog.Canonical("NVIDIA-A100-SXM4-80GB"), Optional(std::string("A100-80GB")));
  EXPECT_THAT(catalog.Canonical("Tesla-T4"), Optional(std::string("T4")));
  EXPECT_THAT(catalog.Canonical("nvidia-tesla-t4"), Optional(std::string("T4")));
  EXPECT_THAT(catalog.Canonical("nvidia-l4"), Optional(std::string("L4")));
  EXPECT_TRUE(catalog.Same("NVIDIA-H100-80GB-HBM3", "h100"));
  EXPECT_FALSE(catalog.Same("NVIDIA-L4", "L40S"));
}

TEST(AcceleratorCatalogTest, SimilarNamesStayApart) {
  AcceleratorCatalog catalog;
  EXPECT_FALSE(catalog.Same("a10g", "a100"));
  EXPECT_FALSE(catalog.Same("l4", "l40s"));
  EXPECT_FALSE(catalog.Same("h100", "gh200"));
  EXPECT_FALSE(catalog.Same("h100", "h100-nvl"));
  EXPECT_FALSE(catalog.Same("a100", "a100-80gb"));
}

TEST(AcceleratorCatalogTest, MigProfilesAreTypesOfTheirOwn) {
  AcceleratorCatalog catalog;
  EXPECT_THAT(catalog.Canonical("1g.10gb"), Optional(std::string("1g.10gb")));
  EXPECT_THAT(catalog.Canonical("3G.40GB"), Optional(std::string("3g.40gb")));
  EXPECT_THAT(catalog.Canonical("nvidia_a100-sxm4-80gb_3g.40gb"), Optional(std::string("3g.40gb")));
  EXPECT_FALSE(catalog.Same("3g.40gb", "A100-80GB"));
  EXPECT_FALSE(catalog.Same("1g.10gb", "2g.20gb"));
  EXPECT_EQ(AcceleratorCatalog::MigProfile("h100"), std::nullopt);
  EXPECT_EQ(AcceleratorCatalog::MigProfile("3g.40g"), std::nullopt);
}

TEST(AcceleratorCatalogTest, UnknownNames) {
  AcceleratorCatalog catalog;
  EXPECT_EQ(catalog.Canonical("tpu-v5"), std::nullopt);
  EXPECT_EQ(catalog.Canonical(""), std::nullopt);
  EXPECT_TRUE(catalog.Same("Mystery", "mystery"));  // unknown: plain case-insensitive match
}

TEST(AcceleratorCatalogTest, SiteAliases) {
  AcceleratorCatalog catalog;
  EXPECT_EQ(catalog.Canonical("hopper"), std::nullopt);
  ASSERT_TRUE(catalog.AddAlias("H100", "hopper").ok());
  EXPECT_THAT(catalog.Canonical("Hopper"), Optional(std::string("H100")));
  EXPECT_THAT(catalog.AddAlias("X9000", "x").message(), HasSubstr("unknown accelerator 'X9000'"));
  EXPECT_THAT(catalog.AddAlias("A100", "hopper").message(), HasSubstr("already names H100"));
  EXPECT_THAT(catalog.AddAlias("A100", "3g.40gb").message(), HasSubstr("MIG profile"));
}

}  // namespace
}  // namespace skyslurm::catalog
