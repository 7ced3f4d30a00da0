// A kind of backend as the factory table (backend/factory/factory.h) holds
// it: its name in the configuration, what it offers, how a job is made fit
// for one of its clusters known only by a description file, and how a live
// cluster's backend is made from its entry. Each kind's folder defines its
// own (backend/slurm/slurm_kind.h, backend/kubernetes/kubernetes_kind.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "broker/backend/backend.h"
#include "broker/cluster/description.h"
#include "broker/cluster/registry.h"
#include "broker/config/settings.h"
#include "broker/util/command.h"

namespace skyslurm::backend {

// What the process making the backends knows.
struct FactoryOptions {
  // Where the local cluster's real Slurm commands are ("" = PATH): the router
  // passes it so that it never runs a shim.
  std::string slurm_bin_dir;
  // Where backends keep what they cache on disk (module lists).
  std::string cache_dir;
  // Named in the message of an SSH cluster that has no entry there.
  std::string clusters_file;
  // $KUBECONFIG and the user's home (~/.kube/config), and what runs a
  // kubeconfig's exec credential plugin.
  std::string kubeconfig_env;
  std::string home;
  CommandRunner* exec_runner = nullptr;
  // Keep clusters' views current from watches where a backend can: skyslurmd,
  // which reads every queue each poll.
  bool watch = false;
  // A site's daemon: skyslurmd-runas, through which a local cluster's
  // commands run as the user it acts for ("" = as this process).
  std::string run_as_helper;
};

struct MadeCluster {
  std::shared_ptr<Backend> backend;                 // a live cluster, or null
  std::shared_ptr<const JobTranslator> translator;  // null: the backend's, else the kind's
  Capabilities capabilities;  // set by MakeCluster: the backend's, else its kind's
  std::optional<cluster::Description> offline;  // a description file's cluster
  std::string unavailable;                      // why there is neither
};

struct BackendKind {
  std::string name;           // the configuration's `kind`
  Capabilities capabilities;  // what every cluster of the kind offers
  // A job made fit for a cluster of the kind without asking it.
  std::shared_ptr<const JobTranslator> translator;
  // The backend of a cluster reached as `entry` says (never a description
  // file's: the factory reads those itself), or why there is none.
  std::function<MadeCluster(const cluster::ClusterEntry& entry,
                            const config::ClusterSettings& settings, const FactoryOptions& options)>
      make;
};

}  // namespace skyslurm::backend
