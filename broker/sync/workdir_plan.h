// Where a job submitted from folder D runs on the cluster it goes to, and
// whether D is copied there first. A pure decision of the configuration
// (named roots, shared_fs, the cluster's workdir) and the job (its folder,
// --sky-workdir), with the reason `explain` and the submit notes show.
#pragma once

#include <string>

#include "broker/translate/path_roots.h"

namespace skyslurm::sync {

struct WorkdirInput {
  std::string sky_id;
  std::string source;     // the job's folder here, absolute ("" = none known)
  bool disabled = false;  // --sky-workdir=none
  std::string target;     // the cluster's name
  bool target_is_home = false;
  // The folder travels in the job's own objects (a Kubernetes job's
  // ConfigMap, unpacked into kPodFolder in each pod), not by rsync.
  bool packed_in_job = false;
  // Where a job there runs when nothing is copied, in words ("its image's
  // working directory"); "" = target_workdir, else the home there.
  std::string default_workdir;
  bool shared_fs = false;  // home and target mount one filesystem (shared_fs)
  translate::PathRoots home_roots;
  translate::PathRoots target_roots;
  std::string target_workdir;  // clusters.<target>.workdir ("" = none)
  std::string local_home;      // the user's home here (a folder that is never copied whole)
  // Why files cannot reach the target at all ("" = over its SSH login):
  // "it is reached through its controller only (slurm_conf)".
  std::string no_copy_route;
};

enum class WorkdirMode {
  kHome,         // the job stays home: it runs where it was submitted, nothing moves
  kOff,          // --sky-workdir=none: the cluster's workdir (or home) there, nothing copied
  kShared,       // one filesystem: the same folder there, nothing copied
  kMapped,       // D lies under a root the target has: copied to the same place there
  kPerJob,       // otherwise: copied to a folder of its own under the target's scratch
  kWhole,        // D is a root itself (the home...): run in its counterpart, nothing copied
  kPacked,       // Kubernetes: packed into the job's ConfigMap, unpacked in each pod
  kUnsupported,  // a cluster files cannot reach (only its controller is)
};

// Where a Kubernetes job's folder is unpacked in each pod (an emptyDir).
inline constexpr const char* kPodFolder = "/skyslurm/work";

struct WorkdirPlan {
  WorkdirMode mode = WorkdirMode::kHome;
  std::string source;  // D
  // The folder the job runs in there ("" = the cluster's default); relative
  // paths are under the user's home there.
  std::string dest;
  bool copy = false;   // rsync D to dest before the submission
  bool pack = false;   // D packed (tar.gz) into the job's own objects (Kubernetes)
  std::string reason;  // "~/proj is copied to beta:/home/skyuser1/proj (under the root home)"
};

WorkdirPlan PlanWorkdir(const WorkdirInput& in);

// The folder a job gets of its own on a cluster when its folder has no
// counterpart there: under the cluster's scratch root, else its workdir
// setting, else the home there (relative).
std::string PerJobFolder(const WorkdirInput& in);

// `path` with the local home spelled "~" (for messages).
std::string Tilde(const std::string& path, const std::string& home);

}  // namespace skyslurm::sync
