// A job's folder as one .tar.gz, for a cluster the folder cannot be copied
// to but travels inside the job's own objects (a Kubernetes ConfigMap): what
// a copy would send (the same .gitignore/.skyignore rules, staged with rsync
// in a private folder), packed with tar.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::sync {

// A ConfigMap holds 1 MiB in all (the apiserver's limit, what etcd takes):
// the packed folder may use this much of it, the rest is the job's script,
// entry point and tools.
inline constexpr std::size_t kMaxPackedBytes = std::size_t{900} << 10;

// The .tar.gz's bytes (the folder's entries at its top, never the folder
// itself; owners left out), "" for a folder with nothing to send.
Result<std::string> PackFolder(CommandRunner& runner, const std::string& source,
                               std::chrono::milliseconds timeout);

}  // namespace skyslurm::sync
