#include "broker/cluster/registry.h"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include "broker/config/paths.h"
#include "broker/config/run_dir.h"
#include "broker/job/global_id.h"

namespace skyslurm::cluster {

std::string AccessName(const ClusterEntry& entry) {
  switch (entry.access) {
    case ClusterEntry::Access::kLocal:
      return "local";
    case ClusterEntry::Access::kSsh:
      return "ssh";
    case ClusterEntry::Access::kDescriptionFile:
      return "description file";
    case ClusterEntry::Access::kApi:
      return entry.kind;
  }
  return "local";
}

std::vector<std::pair<std::string, std::string>> ClusterEntry::CommandEnv() const {
  std::vector<std::pair<std::string, std::string>> env;
  if (!slurm_conf.empty()) env.emplace_back("SLURM_CONF", slurm_conf);
  if (!modulepath.empty()) env.emplace_back("MODULEPATH", modulepath);
  return env;
}

namespace {

// Whether `name` is a Host block of the clusters file (a bastion kept there).
bool IsHost(const config::LoadedConfig& config, const std::string& name) {
  for (const auto& host : config.ssh_hosts) {
    if (host.name == name) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> ReadClusterName(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    // Keys are case-insensitive in slurm.conf.
    std::string key = line.substr(start, 12);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key == "clustername=") {
      std::string value = line.substr(start + 12);
      value = value.substr(0, value.find_first_of(" \t#"));
      if (!value.empty()) return value;
    }
  }
  return std::nullopt;
}

Result<ClusterRegistry> ClusterRegistry::FromConfig(const config::LoadedConfig& config,
                                                    const config::Environment& env) {
  ClusterRegistry registry;
  const config::Settings& s = config.settings;
  const std::string env_conf = env.Get("SLURM_CONF").value_or("/etc/slurm/slurm.conf");
  registry.home_ = s.home;
  if (registry.home_.empty()) {
    auto from_conf = ReadClusterName(env_conf);
    if (!from_conf) {
      return FailedPreconditionError(fmt::format(
          "which cluster is home? Set 'home:' in skyslurm.yaml (or SKYSLURM_HOME); {} names no "
          "ClusterName",
          env_conf));
    }
    registry.home_ = *from_conf;
  }
  auto add = [&](const std::string& name) -> ClusterEntry& {
    for (auto& c : registry.clusters_) {
      if (c.name == name) return c;
    }
    ClusterEntry& e = registry.clusters_.emplace_back();
    e.name = name;
    return e;
  };
  auto configure = [&](ClusterEntry& e) {
    const config::ClusterSettings cs = s.For(e.name);
    e.home = e.name == registry.home_;
    e.kind = cs.kind;
    if (!cs.reached_as_slurm()) {
      e.access = ClusterEntry::Access::kApi;
    } else if (!cs.description.empty()) {
      e.access = ClusterEntry::Access::kDescriptionFile;
      e.description_file = config::ExpandHome(cs.description, config.paths.home);
    } else if (!cs.slurm_conf.empty()) {
      e.access = ClusterEntry::Access::kLocal;
      e.slurm_conf = config::ExpandHome(cs.slurm_conf, config.paths.home);
      e.modulepath = cs.modulepath;
    } else if (e.home) {
      e.access = ClusterEntry::Access::kLocal;
      e.slurm_conf = env.Get("SLURM_CONF").value_or("");
      e.modulepath = cs.modulepath.empty() ? env.Get("MODULEPATH").value_or("") : cs.modulepath;
    } else if (e.ssh) {
      e.access = ClusterEntry::Access::kSsh;
    } else {
      e.access = ClusterEntry::Access::kSsh;  // no way given: reported when used
    }
  };
  add(registry.home_);
  std::set<std::string> bastions;
  for (const auto& host : config.ssh_hosts) {
    if (!host.proxy_jump.empty()) bastions.insert(host.proxy_jump);
  }
  const std::string run_dir = config::RunDir(env.Get("XDG_RUNTIME_DIR"), config.paths.state_dir);
  for (const auto& host : config.ssh_hosts) {
    if (bastions.count(host.name) != 0 && s.clusters.count(host.name) == 0) continue;
    ClusterEntry& e = add(host.name);
    e.ssh = host;
    if (!host.proxy_jump.empty()) {
      e.session = config::SessionFor(run_dir, host.name, host.proxy_jump,
                                     config.paths.clusters_file, IsHost(config, host.proxy_jump));
    }
  }
  for (const auto& [name, cs] : s.clusters) add(name);
  for (auto& e : registry.clusters_) configure(e);
  return registry;
}

const ClusterEntry* ClusterRegistry::Find(std::string_view name) const {
  for (const auto& c : clusters_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::map<std::string, int> ClusterRegistry::JobIdIndices(const config::Settings& settings) const {
  std::vector<std::string> names;
  std::map<std::string, int> pinned;
  for (const auto& c : clusters_) names.push_back(c.name);
  for (const auto& [name, c] : settings.clusters) {
    names.push_back(name);
    if (c.job_id_index != 0) pinned[name] = c.job_id_index;
  }
  return ClusterIndices(names, pinned);
}

}  // namespace skyslurm::cluster
