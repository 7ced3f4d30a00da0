// Builds the backend of each configured cluster from its registry entry and
// settings: the one place that knows which kinds of backend exist (Slurm
// reached locally, over SSH or through slurmrestd; Kubernetes). Everything
// above it holds a Backend and its JobTranslator, never a kind's class.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "broker/backend/backend.h"
#include "broker/cluster/description.h"
#include "broker/cluster/registry.h"
#include "broker/config/settings.h"

namespace skyslurm::backend {

struct FactoryOptions {
  // Where the local cluster's real Slurm commands are ("" = PATH): the router
  // passes it so that it never runs a shim.
  std::string slurm_bin_dir;
  // Where backends keep what they cache on disk (module lists), and for how long.
  std::string cache_dir;
  // Named in the message of an SSH cluster that has no entry there.
  std::string clusters_file;
  // Kubernetes: $KUBECONFIG and the user's home (~/.kube/config), and what
  // runs a kubeconfig's exec credential plugin.
  std::string kubeconfig_env;
  std::string home;
  CommandRunner* exec_runner = nullptr;
  // Keep clusters' views current from watches where a backend can
  // (Kubernetes): skyslurmd, which reads every queue each poll.
  bool watch = false;
};

struct MadeCluster {
  std::shared_ptr<Backend> backend;                 // a live cluster, or null
  std::shared_ptr<const JobTranslator> translator;  // always set
  std::optional<cluster::Description> offline;      // a description file's cluster
  std::string unavailable;                          // why there is neither
};

// The translator of a kind ("slurm"), for a cluster without a backend.
std::shared_ptr<const JobTranslator> TranslatorFor(std::string_view kind);

MadeCluster MakeCluster(const cluster::ClusterEntry& entry, const config::ClusterSettings& settings,
                        const FactoryOptions& options);

}  // namespace skyslurm::backend
