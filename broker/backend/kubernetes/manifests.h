// The Kubernetes objects one job becomes (pure): a ConfigMap holding the
// batch script, an entry point and an `srun` for the pod; a headless
// Service through which the pods find each other (pod <job>-<index> is
// <job>-<index>.<job> in cluster DNS); and an Indexed batch/v1 Job, one pod
// per Slurm node, restartPolicy Never. Every object carries the sky id and
// the job's number as labels, which is how a retried submission finds the
// job it already made and how the queue is read.
#pragma once

#include <json/json.h>

#include <string>
#include <utility>
#include <vector>

#include "broker/backend/kubernetes/job_translator.h"

namespace skyslurm::kube {

inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kSkyIdLabel = "skyslurm.io/sky-id";
inline constexpr const char* kJobIdLabel = "skyslurm.io/job-id";
inline constexpr const char* kIndexLabel = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kMountPath = "/var/run/skyslurm";
// The job's folder in each pod (an emptyDir), when it travels with the job.
inline constexpr const char* kFolderPath = "/skyslurm/work";

struct ManifestInput {
  JobShape shape;
  std::string script;
  std::vector<std::string> script_args;
  std::string sky_id;
  std::string native_id;  // the job's number on this cluster
  std::string cluster;
  std::string namespace_name;
  std::string user;
  std::string workdir;  // "" = the image's
  // The job's folder as a .tar.gz ("" = none): in the ConfigMap's
  // binaryData, unpacked into kFolderPath by the entry point.
  std::string folder_archive;
  std::vector<std::pair<std::string, std::string>> env;
  // Whether Kubernetes may start a pod again after a disruption (eviction,
  // preemption, node loss) as Slurm requeues: a pod failure policy that does
  // not count those. Never for the job's own failure (backoffLimit 0).
  bool restartable = true;
};

// "skyslurm-<native id>": the Job's, the Service's and the ConfigMap's name.
std::string ObjectName(const std::string& native_id);

struct Manifests {
  Json::Value config_map;
  Json::Value service;
  // The job's environment values (its --export's, a task's secrets; not
  // skyslurm's own SKYSLURM_*/SKYPILOT_*, which are plain): a Secret the Job
  // owns, each variable a secretKeyRef to it, never a plain value in the
  // pod's spec (which anyone who may read pods reads). Null when the job
  // has none: then no Secret is made, nor needs the right to.
  Json::Value secret;
  Json::Value job;
};
Manifests BuildManifests(const ManifestInput& in);

// What runs first in each pod (a POSIX shell script): it waits until every
// pod's name resolves, sets SKYPILOT_* and the SLURM_* a batch script reads,
// puts the pod's srun first on PATH, and execs the batch script.
std::string EntryPointScript();
// The srun of a pod: runs its command here, once (this pod is one node).
std::string PodSrunScript();
// The pod's `module` (and `ml`): the image stands for the modules, so a
// load succeeds, saying so on stderr (a shell function of the image's own
// Lmod still wins).
std::string PodModuleScript();

}  // namespace skyslurm::kube
