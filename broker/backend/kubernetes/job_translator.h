// An sbatch job as a Kubernetes cluster runs it, or the reasons it cannot:
// one pod per Slurm node (an Indexed Job), each with the job's GPUs per node
// (of the type asked, by the node label that carries it), CPUs and memory,
// the time limit as a deadline, and an image: --sky-image, pyxis'
// --container-image, the site's image for a module the script loads, or
// the site's default. Refused: what cannot mean the same there (salloc and
// srun allocations, heterogeneous jobs, --dependency on Slurm job ids,
// arrays for now, node lists, reservations, licenses, constraints, other
// GRES, srun steps that span nodes). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "broker/cluster/description.h"
#include "broker/job/request.h"
#include "broker/translate/translation.h"
#include "broker/util/status.h"

namespace skyslurm::kube {

// The pods' shape: a TranslatedJob's native form (translation.h), which
// the Kubernetes backend reads (ShapeOf).
// A pyxis --container-mounts item as a pod volume: a node's folder
// (hostPath) or a PersistentVolumeClaim, as the cluster's `paths` name the
// root the source lies under.
struct PodMount {
  bool claim = false;      // a PersistentVolumeClaim (else a hostPath)
  std::string source;      // the claim's name, or the node's folder
  std::string sub_path;    // within the claim ("" = its root)
  std::string mount_path;  // where the container sees it
  bool read_only = false;
};

struct JobShape : translate::NativeJob {
  std::string image;
  std::vector<PodMount> mounts;
  std::int64_t pods = 1;
  std::int64_t gpus_per_pod = 0;
  std::string gpu_label;  // the node label key selecting the GPU type ("" = any GPU)
  std::string gpu_type;   // its value
  std::int64_t millicores = 1000;
  std::int64_t memory_mb = 0;         // 0: no request
  std::int64_t deadline_seconds = 0;  // 0: none
  std::string job_name;
  // Its fields as JSON.
  std::string Key() const override;
  // "an Indexed Job of 2 pod(s), each 4 nvidia.com/gpu (...), 8 CPU(s); image ...".
  std::string Summary() const override;
};

// The shape of a job the Kubernetes translation made; an error for any other.
Result<JobShape> ShapeOf(const translate::TranslatedJob& job);

translate::Translation TranslateForKubernetes(const job::Request& request,
                                              const cluster::Description& target,
                                              const translate::TranslateContext& context);

}  // namespace skyslurm::kube
