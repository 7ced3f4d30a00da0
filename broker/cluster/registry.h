// The clusters a user can send jobs to, and how each is reached: the home
// cluster's controller directly (its SLURM_CONF), a peer over SSH (its
// ~/.slurm/config entry), a peer's controller directly (`slurm_conf` in the
// settings), the API of its kind (a Kubernetes cluster's API server: `kind:
// kubernetes`), or only a description file (offline, for tests and admins).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/cluster/description.h"
#include "broker/config/login_session.h"
#include "broker/config/settings.h"

namespace skyslurm::cluster {

struct ClusterEntry {
  // kApi: a client of its kind's own API, made by that kind's backend from
  // the settings (a Kubernetes cluster's API server, with the user's
  // kubeconfig context and namespace).
  enum class Access { kLocal, kSsh, kDescriptionFile, kApi };
  std::string name;
  std::string kind = "slurm";  // the settings' `kind`: which backend reaches it
  Access access = Access::kLocal;
  bool home = false;
  std::string slurm_conf;              // kLocal ("" = the environment's own)
  std::string modulepath;              // kLocal
  std::string description_file;        // kDescriptionFile
  std::optional<config::SshHost> ssh;  // kSsh
  // kSsh through a bastion (ProxyJump): the session `skyslurm login` opens
  // there (config/login_session.h), used whenever it holds.
  std::optional<config::LoginSession> session;
  // The environment commands for this cluster run with (kLocal).
  std::vector<std::pair<std::string, std::string>> CommandEnv() const;
};

// How it is reached, for people: "local", "ssh", "description file", or its
// kind's name for its own API ("kubernetes").
std::string AccessName(const ClusterEntry& entry);

class ClusterRegistry {
 public:
  // Home first, then the clusters of ~/.slurm/config, then clusters only the
  // settings name. A Host of ~/.slurm/config that another Host jumps
  // through (its ProxyJump) is a bastion, not a cluster. The home cluster is `home` from the
  // settings, else the ClusterName of $SLURM_CONF (or /etc/slurm/slurm.conf).
  static Result<ClusterRegistry> FromConfig(const config::LoadedConfig& config,
                                            const config::Environment& env);

  const std::vector<ClusterEntry>& clusters() const { return clusters_; }
  const ClusterEntry* Find(std::string_view name) const;
  const std::string& home() const { return home_; }
  // Each cluster's index in routed jobs' ids (job/global_id.h): its
  // job_id_index, else derived from its name.
  std::map<std::string, int> JobIdIndices(const config::Settings& settings) const;

 private:
  std::vector<ClusterEntry> clusters_;
  std::string home_;
};

// ClusterName= from a slurm.conf, if it has one.
std::optional<std::string> ReadClusterName(const std::string& slurm_conf_path);

}  // namespace skyslurm::cluster
