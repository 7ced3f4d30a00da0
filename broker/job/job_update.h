// What `scontrol update JobId=... Key=Value ...` changed in a routed job,
// said as sbatch options, so that every later copy of the job (a move, a
// restart, a failover) is submitted with it: an update the user made is
// never lost because skyslurm moved the job.
//
// A field that means the same on every cluster (TimeLimit, JobName,
// Comment, NumNodes, MinMemoryNode, Features, ...) becomes its sbatch
// option. A field that is one cluster's own (Partition, Account, QOS,
// ReservationName, a node list, Priority), a relative value (TimeLimit=+30)
// or a field this table does not know binds the job to the cluster it is on:
// it is not moved afterwards, as the user tuned it for that cluster.
#pragma once

#include <string>
#include <vector>

namespace skyslurm::job {

struct JobUpdate {
  // sbatch options ("--time=30"), each replacing the same option given at
  // submission (on the command line; the script's #SBATCH lines and
  // SBATCH_* variables yield to the command line anyway).
  std::vector<std::string> options;
  // The long names of the options set ("time"), in the order of `options`.
  std::vector<std::string> names;
  // The Key=Value words that bind the job to its cluster, as typed.
  std::vector<std::string> binding;
  bool empty() const { return options.empty() && binding.empty(); }
};

// `words`: scontrol's arguments after "update" (JobId=... among them, which
// is not an update of a field; nor are words without '=').
JobUpdate TranslateJobUpdate(const std::vector<std::string>& words);

// sbatch's arguments (without argv[0]) with the update applied: its options
// first, each earlier occurrence of the same option removed (short and
// bundled forms too); the script and its arguments kept. `bind_to`, when
// not empty, pins the job there (--sky-infra, replacing any earlier one).
std::vector<std::string> ApplyJobUpdate(const std::vector<std::string>& sbatch_args,
                                        const JobUpdate& update, const std::string& bind_to);

}  // namespace skyslurm::job
