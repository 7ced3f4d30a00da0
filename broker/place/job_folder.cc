#include "broker/place/job_folder.h"

#include <fmt/format.h>

#include <filesystem>

#include "broker/config/paths.h"
#include "broker/config/settings.h"
#include "broker/sync/folder_pack.h"

namespace skyslurm::place {

std::string JobFolder(const job::Request& request, const std::string& submit_dir,
                      const std::string& local_home) {
  if (!request.sky.workdir) return submit_dir;
  if (*request.sky.workdir == "none") return "";
  std::filesystem::path p = config::ExpandHome(*request.sky.workdir, local_home);
  if (p.is_relative() && !submit_dir.empty()) p = std::filesystem::path(submit_dir) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.ends_with('/')) out.pop_back();
  return out;
}

sync::WorkdirPlan PlanJobFolder(const Workspace& ws, const ClusterHandle& target,
                                const job::Request& request, const std::string& sky_id,
                                const std::string& submit_dir) {
  sync::WorkdirInput in;
  in.sky_id = sky_id;
  in.local_home = ws.config.paths.home;
  in.source = JobFolder(request, submit_dir, in.local_home);
  in.disabled = request.sky.workdir && *request.sky.workdir == "none";
  in.target = target.name;
  in.target_is_home = target.home;
  in.packed_in_job = target.caps.folders == backend::Capabilities::Folders::kPacked;
  in.default_workdir = target.caps.default_workdir;
  in.shared_fs = ws.config.settings.ShareFilesystem(ws.home(), target.name);
  for (const auto& h : ws.handles) {
    if (h.home) in.home_roots = h.roots;
  }
  in.target_roots = target.roots;
  in.target_workdir = target.settings.workdir;
  if (target.caps.folders == backend::Capabilities::Folders::kCopied) {
    const cluster::ClusterEntry* entry = ws.registry.Find(target.name);
    if (entry == nullptr || !entry->ssh) {
      in.no_copy_route =
          "it is not reached over SSH (no entry in " + ws.config.paths.clusters_file + ")";
    }
  }
  return sync::PlanWorkdir(in);
}

Result<sync::RsyncRemote> RemoteOf(const Workspace& ws, const std::string& cluster) {
  const cluster::ClusterEntry* entry = ws.registry.Find(cluster);
  if (entry == nullptr || !entry->ssh) {
    return FailedPreconditionError(cluster + " is not reached over SSH: no files can be copied");
  }
  sync::RsyncRemote remote{entry->ssh->name, ws.config.paths.clusters_file,
                           entry->ssh->strict_host_key_checking, ws.config.settings.sync_bwlimit,
                           sync::SshControlDir()};
  if (entry->session) {
    SKY_ASSIGN_OR_RETURN(
        remote.proxy_command,
        config::SessionProxyCommand(*entry->session, ws.config.settings.For(cluster).one_time_code,
                                    /*for_openssh=*/true));
  }
  return remote;
}

Status FolderFits(CommandRunner& runner, const Workspace& ws, const sync::WorkdirPlan& plan,
                  const std::string& cluster, std::chrono::milliseconds timeout) {
  const std::uint64_t limit = ws.config.settings.sync_limit;
  if (limit == 0) return OkStatus();  // no limit: nothing to measure
  const std::string shown = sync::Tilde(plan.source, ws.config.paths.home);
  auto measured = sync::Measure(runner, plan.source, timeout);
  if (!measured.ok()) {
    return FailedPreconditionError(fmt::format("the job's folder cannot be copied to {}: {}",
                                               cluster, measured.status().message()));
  }
  if (measured->total_size <= limit) return OkStatus();
  return FailedPreconditionError(fmt::format(
      "{} holds {} in {} file(s) to copy to {}, more than sync_limit ({}); nothing was "
      "submitted. List what the job does not need in {}/.skyignore (as in .gitignore), name a "
      "smaller folder with --sky-workdir=DIR, copy nothing with --sky-workdir=none, or raise "
      "sync_limit (skyslurm.yaml, SKYSLURM_SYNC_LIMIT)",
      shown, config::DescribeBytes(measured->total_size), measured->files, cluster,
      config::DescribeBytes(limit), shown));
}

Result<std::string> PackJobFolder(CommandRunner& runner, const Workspace& ws,
                                  const sync::WorkdirPlan& plan, const std::string& cluster,
                                  std::chrono::milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(std::string packed, sync::PackFolder(runner, plan.source, timeout));
  if (packed.size() <= sync::kMaxPackedBytes) return packed;
  const std::string shown = sync::Tilde(plan.source, ws.config.paths.home);
  return FailedPreconditionError(fmt::format(
      "{} packs to {}, more than a job on Kubernetes cluster {} carries ({}, in its "
      "ConfigMap); nothing was submitted. List what the job does not need in {}/.skyignore, "
      "name a smaller folder with --sky-workdir=DIR, or copy nothing with --sky-workdir=none",
      shown, config::DescribeBytes(packed.size()), cluster,
      config::DescribeBytes(sync::kMaxPackedBytes), shown));
}

void ApplyJobFolder(const sync::WorkdirPlan& plan, const job::Request& request,
                    backend::SubmitSpec* spec) {
  using sync::WorkdirMode;
  if (plan.mode != WorkdirMode::kMapped && plan.mode != WorkdirMode::kPerJob &&
      plan.mode != WorkdirMode::kShared && plan.mode != WorkdirMode::kWhole &&
      plan.mode != WorkdirMode::kPacked) {
    return;  // the spec's workdir stays the cluster's (SpecFor)
  }
  if (plan.dest.empty()) return;
  // In a pod the folder is the container's working directory; elsewhere
  // sbatch runs in it too. A relative folder (under the home there) is
  // where sbatch runs, so the job's working directory is its default, or
  // its own relative --chdir taken against it.
  if (plan.mode != WorkdirMode::kPacked) spec->submit_dir = plan.dest;
  const bool relative = !plan.dest.starts_with("/");
  if (request.chdir && request.chdir->starts_with("/")) {
    spec->workdir.clear();  // the job's own --chdir (spelled for the target) is in its options
  } else if (request.chdir) {
    spec->workdir = relative ? *request.chdir : plan.dest + "/" + *request.chdir;
  } else {
    spec->workdir = relative ? "" : plan.dest;
  }
}

}  // namespace skyslurm::place
