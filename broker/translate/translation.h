// A job made fit for one cluster, in the words every kind of backend shares:
// the translated job (its options and script there, or its own form for a
// backend whose jobs are not sbatch's), the changes made and why, or the
// reasons it cannot run there; and what a translation is given to read
// (the catalog, the target's settings, the home's modules and
// filesystems). Each kind of backend translates (backend/slurm/
// slurm_translator.h, backend/kubernetes/job_translator.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/queue.h"
#include "broker/config/settings.h"
#include "broker/job/request.h"
#include "broker/translate/path_roots.h"

namespace skyslurm::translate {

struct Change {
  std::string where;  // "job.sh:5", "command line", "SBATCH_PARTITION"
  std::string what;   // "--gres=gpu:h100:4 -> --gres=gpu:nvidia_h100_80gb_hbm3:4"
  std::string why;
};

// A job in a backend's own terms, when they are not sbatch's (Kubernetes:
// the pods' shape and image). Only the backend of the kind that made it
// reads it.
struct NativeJob {
  virtual ~NativeJob() = default;
  // What tells two such jobs apart (a cache of start estimates).
  virtual std::string Key() const = 0;
  // The job in one line for people (explain).
  virtual std::string Summary() const = 0;
};

struct TranslatedJob {
  std::string cluster;
  std::vector<std::string> partitions;  // the partition(s) it goes to ({} = the default)
  std::string partition_note;           // why that partition
  // Every partition of the cluster that can run it, the chosen one first
  // (placement asks for an estimate in each).
  std::vector<std::string> fitting_partitions;
  job::Tool tool = job::Tool::kSbatch;  // the command it was given to (salloc's, srun's options)
  std::vector<std::string> args;        // sbatch options for that cluster, before the script
  // The job in the target backend's own terms (null: sbatch's, above).
  std::shared_ptr<const NativeJob> native;
  std::string script;  // the script to submit there
  std::vector<std::string> script_args;
  // The words of the script's #SBATCH lines as sbatch reads them, in order
  // (before the command line's): what slurmrestd, which reads no script, is
  // given as data.
  std::vector<std::string> script_options;
  bool heterogeneous = false;  // its options describe several components (hetjob)
  // The job as its cluster's queue lists it once submitted, pending: its
  // partition, nodes, GPUs (of the type as the cluster spells it), time
  // limit and array tasks (Backend::AsQueued).
  cluster::QueuedJob queued;
  std::vector<Change> changes;
  // The job's --export as the target needs it, when that differs from the
  // request's (paths in its values mapped): what it is submitted with.
  std::optional<std::string> export_env;
  std::vector<std::string> caveats;  // what the user should know (arrays, --wait ...)
};

struct Translation {
  std::string cluster;
  std::optional<TranslatedJob> job;
  std::vector<std::string> reasons;  // why it cannot run there (when there is no job)
  bool ok() const { return job.has_value(); }
};

struct TranslateContext {
  std::string home;  // the home cluster (where job ids in --dependency live)
  const catalog::AcceleratorCatalog* catalog = nullptr;
  const config::ClusterSettings* settings = nullptr;  // the target's
  // Send the job to this partition (one that fits, from fitting_partitions),
  // whatever the request asked: placement's way to try each partition.
  std::string partition;
  // The home cluster's modules, or nullptr when they are not known (home
  // unreachable or not asked, its listing failed). A module the home does not
  // have either cannot be translated: it is kept as written everywhere, with
  // a note, never a reason to refuse (the real sbatch submits it as written).
  // Unknown, every module is taken for one the home has.
  const std::vector<std::string>* home_modules = nullptr;
  // The named roots of the home's filesystems and of the target's, for the
  // user (path_roots.h): a peer's --chdir, -o, -e, -i and --export paths
  // under a root of the home are spelled as the target spells that root;
  // the script's own are listed as caveats, or rewritten with
  // rewrite_script_paths. Null or empty: paths are left as written.
  const PathRoots* home_roots = nullptr;
  const PathRoots* target_roots = nullptr;
  bool rewrite_script_paths = false;
};

}  // namespace skyslurm::translate
