#include "broker/sync/workdir_plan.h"

#include <fmt/format.h>

namespace skyslurm::sync {
namespace {

using translate::MapPath;
using translate::PathMapping;

// `outer` is `inner` or one of its ancestors.
bool Covers(const std::string& outer, const std::string& inner) {
  if (outer.empty() || inner.empty()) return false;
  if (outer == "/" || outer == inner) return true;
  return inner.starts_with(outer) && inner[outer.size()] == '/';
}

std::string There(const std::string& dest) { return dest.empty() ? "your home directory" : dest; }

// Where a job runs there when nothing is copied.
std::string DefaultWorkdir(const WorkdirInput& in) {
  return !in.default_workdir.empty() ? in.default_workdir : There(in.target_workdir);
}

}  // namespace

std::string Tilde(const std::string& path, const std::string& home) {
  if (!home.empty() && home != "/" && path == home) return "~";
  if (!home.empty() && home != "/" && Covers(home, path)) return "~" + path.substr(home.size());
  return path;
}

std::string PerJobFolder(const WorkdirInput& in) {
  std::string base;
  if (const translate::PathRoot* scratch = in.target_roots.Find("scratch")) {
    base = scratch->path;
  } else {
    base = in.target_workdir;
  }
  const std::string leaf = "skyslurm-jobs/" + in.sky_id;
  if (base.empty()) return leaf;  // under the home there
  return base + (base.ends_with('/') ? "" : "/") + leaf;
}

WorkdirPlan PlanWorkdir(const WorkdirInput& in) {
  WorkdirPlan p;
  p.source = in.source;
  const std::string shown = Tilde(in.source, in.local_home);
  if (in.target_is_home) {
    p.mode = WorkdirMode::kHome;
    return p;
  }
  if (in.packed_in_job && (in.disabled || in.source.empty())) {
    p.mode = WorkdirMode::kOff;
    p.reason = fmt::format("it runs in {} there, and nothing is copied ({})", DefaultWorkdir(in),
                           in.disabled ? "--sky-workdir=none" : "no folder to copy");
    return p;
  }
  if (in.disabled || in.source.empty()) {
    p.mode = WorkdirMode::kOff;
    p.dest = in.target_workdir;
    p.reason = fmt::format("it runs in {} there, and nothing is copied ({})", There(p.dest),
                           in.disabled ? "--sky-workdir=none" : "no folder to copy");
    return p;
  }
  if (!in.no_copy_route.empty() && !in.shared_fs) {
    p.mode = WorkdirMode::kUnsupported;
    p.dest = in.target_workdir;
    p.reason = fmt::format("it runs in {} there, and files are not copied: {}", There(p.dest),
                           in.no_copy_route);
    return p;
  }
  if (in.shared_fs) {
    p.mode = WorkdirMode::kShared;
    p.dest = in.source;
    p.reason = fmt::format(
        "it runs in {} there, a filesystem {} shares (shared_fs): nothing is "
        "copied",
        shown, in.target);
    return p;
  }
  if (in.packed_in_job) {
    bool whole = Covers(in.source, in.local_home);
    for (const auto& r : in.home_roots.roots) whole = whole || Covers(in.source, r.path);
    if (whole) {
      p.mode = WorkdirMode::kWhole;
      p.reason = fmt::format(
          "it runs in {} there; {} holds your home or a whole root, so nothing is copied (name "
          "the job's folder with --sky-workdir=DIR, or submit from it)",
          DefaultWorkdir(in), shown);
      return p;
    }
    p.mode = WorkdirMode::kPacked;
    p.pack = true;
    p.dest = kPodFolder;
    p.reason = fmt::format(
        "{} travels in the job's ConfigMap, is unpacked into {} in each pod before the script "
        "starts, and runs there",
        shown, kPodFolder);
    return p;
  }
  const PathMapping m = MapPath(in.source, in.home_roots, in.target_roots);
  const bool mapped = m.fate == PathMapping::Fate::kMapped || m.fate == PathMapping::Fate::kSame;
  bool whole = Covers(in.source, in.local_home);
  for (const auto& r : in.home_roots.roots) whole = whole || Covers(in.source, r.path);
  if (whole) {
    // Copying a home (or a whole scratch) would overwrite the dot files and
    // keys there; the job runs in the counterpart, and is told so.
    p.mode = WorkdirMode::kWhole;
    p.dest = mapped ? m.path : in.target_workdir;
    p.reason = fmt::format(
        "it runs in {} there; {} holds your home or a whole root, so nothing is copied (name "
        "the job's folder with --sky-workdir=DIR, or submit from it)",
        There(p.dest), shown);
    return p;
  }
  p.copy = true;
  if (mapped) {
    p.mode = WorkdirMode::kMapped;
    p.dest = m.path;
    p.reason =
        fmt::format("{} is copied to {}:{} (the same place under its {} root) and runs there",
                    shown, in.target, p.dest, m.root);
  } else {
    p.mode = WorkdirMode::kPerJob;
    p.dest = PerJobFolder(in);
    p.reason = fmt::format("{} is copied to {}:{}, a folder of its own ({}), and runs there", shown,
                           in.target, p.dest,
                           in.home_roots.empty() ? "no roots are named for the clusters"
                                                 : "it lies under no root " + in.target + " has");
  }
  return p;
}

}  // namespace skyslurm::sync
