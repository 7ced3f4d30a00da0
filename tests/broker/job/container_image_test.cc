#include "broker/job/container_image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::job {
namespace {

using ::testing::HasSubstr;

std::string Reference(std::string_view enroot) {
  auto r = ImageReferenceOf(enroot);
  EXPECT_TRUE(r.ok()) << enroot << ": " << r.status().message();
  return r.ok() ? *r : "";
}

TEST(ContainerImageTest, EnrootsFormsBecomeTheReferenceARuntimePulls) {
  EXPECT_EQ(Reference("nvcr.io#nvidia/pytorch:24.01-py3"), "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(Reference("registry.example.org:5000#org/image"),
            "registry.example.org:5000/org/image");
  EXPECT_EQ(Reference("docker://nvcr.io#nvidia/cuda:12.4.1-base"),
            "nvcr.io/nvidia/cuda:12.4.1-base");
  EXPECT_EQ(Reference("alice@nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(Reference("alice@ubuntu:22.04"), "ubuntu:22.04");
  EXPECT_EQ(Reference("ubuntu:22.04"), "ubuntu:22.04");
  EXPECT_EQ(Reference("nvidia/cuda:12.1.0-runtime-ubuntu22.04"),
            "nvidia/cuda:12.1.0-runtime-ubuntu22.04");
  // A digest's '@' is the image's, not a user's.
  EXPECT_EQ(Reference("ubuntu@sha256:abcd"), "ubuntu@sha256:abcd");
  EXPECT_EQ(Reference("nvcr.io#nvidia/pytorch@sha256:abcd"), "nvcr.io/nvidia/pytorch@sha256:abcd");
}

TEST(ContainerImageTest, WhatNoRegistryServesIsAnErrorSayingWhy) {
  for (const char* file :
       {"/scratch/images/pytorch.sqsh", "./app.sqsh", "~/img.squashfs", "images/pytorch.sqsh"}) {
    auto r = ImageReferenceOf(file);
    ASSERT_FALSE(r.ok()) << file;
    EXPECT_THAT(r.status().message(), HasSubstr("squashfs file on the cluster's filesystem"));
  }
  EXPECT_THAT(ImageReferenceOf("dockerd://myapp:dev").status().message(),
              HasSubstr("local dockerd daemon"));
  EXPECT_THAT(ImageReferenceOf("a#b#c").status().message(), HasSubstr("more than one '#'"));
  EXPECT_FALSE(ImageReferenceOf("").ok());
  EXPECT_FALSE(ImageReferenceOf("nvcr.io#").ok());
  EXPECT_FALSE(ImageReferenceOf("my image").ok());
}

TEST(ContainerImageTest, AReferenceInEnrootsForm) {
  EXPECT_EQ(EnrootImageOf("ubuntu:22.04"), "ubuntu:22.04");
  EXPECT_EQ(EnrootImageOf("library/ubuntu:22.04"), "library/ubuntu:22.04");  // Docker Hub
  EXPECT_EQ(EnrootImageOf("localhost:5000/me/app"), "localhost:5000#me/app");
  EXPECT_EQ(EnrootImageOf("nvcr.io/nvidia/pytorch:24.01-py3"), "nvcr.io#nvidia/pytorch:24.01-py3");
  // Round trip.
  EXPECT_EQ(Reference(EnrootImageOf("nvcr.io/nvidia/pytorch:24.01-py3")),
            "nvcr.io/nvidia/pytorch:24.01-py3");
}

}  // namespace
}  // namespace skyslurm::job
