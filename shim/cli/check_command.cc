#include "shim/cli/check_command.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <future>

#include "broker/backend/slurm_backend.h"
#include "broker/backend/slurm_ssh.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

int RunCheck() {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm check: %s\n", ws.status().message().c_str());
    return 2;
  }
  struct Row {
    std::string name, access, verdict, detail;
    bool ok = false;
  };
  std::vector<std::future<Row>> checks;
  for (std::size_t i = 0; i < ws->handles.size(); ++i) {
    const place::ClusterHandle& h = ws->handles[i];
    const cluster::ClusterEntry& entry = ws->registry.clusters()[i];
    backend::SlurmBackend* slurm = ws->slurm[i];
    checks.push_back(std::async(std::launch::async, [&h, &entry, slurm]() {
      Row row;
      row.name = h.name;
      row.access = std::string(cluster::AccessName(entry.access));
      if (entry.access == cluster::ClusterEntry::Access::kSsh && entry.ssh) {
        row.access =
            fmt::format("ssh {}@{}:{}", entry.ssh->user, entry.ssh->hostname, entry.ssh->port);
      }
      if (!h.excluded.empty()) {
        row.verdict = "excluded";
        row.detail = h.excluded;
        row.ok = true;
        return row;
      }
      if (slurm == nullptr) {
        row.ok = h.offline.has_value();
        row.verdict = row.ok ? "offline" : "unusable";
        row.detail = row.ok ? "described by " + entry.description_file : h.unavailable;
        return row;
      }
      std::string rest;
      if (auto* viassh = dynamic_cast<backend::SlurmSshBackend*>(slurm)) {
        if (Status s = viassh->pool().Check(std::chrono::seconds(10)); !s.ok()) {
          row.verdict = "unreachable";
          row.detail = s.message();
          return row;
        }
        if (viassh->uses_rest()) {
          row.access = "rest+" + row.access;
          // access: rest that cannot work is a fault to fix, not a fallback to hide.
          auto pong = viassh->RestPing(std::chrono::seconds(10));
          if (!pong.ok()) {
            row.verdict = "no slurmrestd";
            row.detail = pong.status().message() +
                         " (install Slurm's slurmrestd on the login node, or drop 'access: rest')";
            return row;
          }
          rest = fmt::format("; slurmrestd {} (API v0.0.38)", *pong);
        }
      }
      auto version = slurm->SlurmVersion(std::chrono::seconds(15));
      if (!version.ok()) {
        row.verdict = "no answer";
        row.detail = version.status().message();
        return row;
      }
      // The controller itself, not only the client.
      auto probe = h.backend->Probe(std::chrono::seconds(15));
      if (!probe.ok()) {
        row.verdict = "no answer";
        row.detail = probe.status().message();
        return row;
      }
      row.ok = true;
      row.verdict = "ok";
      std::size_t nodes = probe->description.nodes.size(), usable = 0;
      for (const auto& n : probe->description.nodes) {
        if (n.usable()) ++usable;
      }
      row.detail = fmt::format("{}{}; {} partitions, {}/{} nodes usable", *version, rest,
                               probe->description.partitions.size(), usable, nodes);
      return row;
    }));
  }
  bool all_ok = true;
  std::printf("%-10s %-12s %-34s %s\n", "CLUSTER", "STATUS", "ACCESS", "DETAIL");
  for (auto& f : checks) {
    Row row = f.get();
    all_ok = all_ok && row.ok;
    std::printf("%-10s %-12s %-34s %s\n", row.name.c_str(), row.verdict.c_str(), row.access.c_str(),
                row.detail.c_str());
  }
  return all_ok ? 0 : 1;
}

}  // namespace skyslurm::cli
