// pyxis' --container-image names an image as enroot does:
// [USER@][REGISTRY#]IMAGE[:TAG|@DIGEST] (the '#' parts the registry from the
// path), or a squashfs file on the cluster. Where a container runtime pulls
// it (a Kubernetes pod, a SkyPilot task) the same image is an OCI reference:
// REGISTRY/IMAGE[:TAG|@DIGEST]. Every path that crosses between the two
// forms goes through here.
#pragma once

#include <string>
#include <string_view>

#include "broker/util/status.h"

namespace skyslurm::job {

// The OCI reference a runtime pulls for an enroot image: "nvcr.io#nvidia/
// pytorch:24.01-py3" -> "nvcr.io/nvidia/pytorch:24.01-py3"; a docker://
// prefix and enroot's USER@ go. An error (saying why) for what no registry
// serves: a squashfs file, a local daemon's image (dockerd://, podman://),
// an empty or malformed name.
Result<std::string> ImageReferenceOf(std::string_view enroot_image);

// The enroot form of an OCI reference, for an #SBATCH --container-image
// line: "localhost:5000/me/app" -> "localhost:5000#me/app"; a Docker Hub
// name ("ubuntu:22.04", "library/ubuntu") stays as it is.
std::string EnrootImageOf(std::string_view reference);

}  // namespace skyslurm::job
