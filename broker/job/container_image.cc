#include "broker/job/container_image.h"

#include <fmt/format.h>

namespace skyslurm::job {
namespace {

bool IsFile(std::string_view image) {
  return image.starts_with('/') || image.starts_with("./") || image.starts_with("../") ||
         image.starts_with('~') || image.ends_with(".sqsh") || image.ends_with(".squashfs");
}

}  // namespace

Result<std::string> ImageReferenceOf(std::string_view enroot_image) {
  std::string_view image = enroot_image;
  if (image.starts_with("docker://")) image.remove_prefix(9);
  for (std::string_view local : {"dockerd://", "podman://"}) {
    if (image.starts_with(local)) {
      return InvalidArgumentError(
          fmt::format("'{}' is an image of the local {} daemon, which no registry serves",
                      enroot_image, local.substr(0, local.size() - 3)));
    }
  }
  if (IsFile(image)) {
    return InvalidArgumentError(fmt::format(
        "'{}' is a squashfs file on the cluster's filesystem, no image a registry serves",
        enroot_image));
  }
  // enroot's USER@ (credentials) comes before the registry's '#', or
  // before the image when there is none; an '@' after a '/' or before a
  // digest algorithm ("ubuntu@sha256:...") is a digest.
  const auto hash = image.find('#');
  if (const auto at = image.find('@'); at != std::string_view::npos) {
    const bool user = hash != std::string_view::npos
                          ? at < hash
                          : at < image.find('/') && !image.substr(at + 1).starts_with("sha");
    if (user) image.remove_prefix(at + 1);
  }
  std::string out(image);
  if (const auto h = out.find('#'); h != std::string::npos) {
    if (out.find('#', h + 1) != std::string::npos) {
      return InvalidArgumentError(fmt::format(
          "'{}' has more than one '#' (enroot's REGISTRY#IMAGE has one)", enroot_image));
    }
    out[h] = '/';
  }
  if (out.empty() || out.starts_with('/') || out.ends_with('/') ||
      out.find_first_of(" \t\n\"'\\") != std::string::npos) {
    return InvalidArgumentError(fmt::format("'{}' is no image name", enroot_image));
  }
  return out;
}

std::string EnrootImageOf(std::string_view reference) {
  const auto slash = reference.find('/');
  if (slash == std::string_view::npos) return std::string(reference);
  const std::string_view first = reference.substr(0, slash);
  const bool registry = first.find_first_of(".:") != std::string_view::npos || first == "localhost";
  if (!registry) return std::string(reference);
  return fmt::format("{}#{}", first, reference.substr(slash + 1));
}

}  // namespace skyslurm::job
