#include "broker/place/job_folder.h"

#include <filesystem>

#include "broker/config/paths.h"

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
  in.target_kind = target.kind;
  in.shared_fs = ws.config.settings.ShareFilesystem(ws.home(), target.name);
  for (const auto& h : ws.handles) {
    if (h.home) in.home_roots = h.roots;
  }
  in.target_roots = target.roots;
  in.target_workdir = target.settings.workdir;
  if (target.kind == "slurm") {
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
  return sync::RsyncRemote{entry->ssh->name, ws.config.paths.clusters_file,
                           entry->ssh->strict_host_key_checking, ws.config.settings.sync_bwlimit};
}

void ApplyJobFolder(const sync::WorkdirPlan& plan, const job::Request& request,
                    backend::SubmitSpec* spec) {
  using sync::WorkdirMode;
  if (plan.mode != WorkdirMode::kMapped && plan.mode != WorkdirMode::kPerJob &&
      plan.mode != WorkdirMode::kShared && plan.mode != WorkdirMode::kWhole) {
    return;  // the spec's workdir stays the cluster's (SpecFor)
  }
  if (plan.dest.empty()) return;
  spec->submit_dir = plan.dest;
  if (request.chdir && request.chdir->starts_with("/")) {
    spec->workdir.clear();  // the job's own --chdir (spelled for the target) is in its options
  } else if (request.chdir) {
    spec->workdir = plan.dest + "/" + *request.chdir;
  } else {
    spec->workdir = plan.dest;
  }
}

}  // namespace skyslurm::place
