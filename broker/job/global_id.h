// Job ids that name a routed job on any cluster, as Slurm's federation names
// a federated job: the cluster's index (1-63) above bit 26, the job's id on
// that cluster below. A cluster's own ids stay below 2^26 (Slurm's MaxJobId
// is at most 67,043,328 by default, below 2^26 for this reason), so a global
// id never collides with a job of the home cluster and the home's own
// squeue/scancel would refuse it rather than act on another job.
//
// A cluster's index is its `job_id_index` in skyslurm.yaml, else derived
// from its name alone (a hash), so every program that reads the same
// configuration derives the same indices, and adding a cluster does not
// change another's unless their names share a slot (then the later name in
// alphabetical order takes the next free one; pin with job_id_index).
// Standard library only: the shim reads ids too.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skyslurm {

inline constexpr int kGlobalIdShift = 26;
inline constexpr int kMaxClusterIndex = 63;
inline constexpr std::uint64_t kLocalIdLimit = std::uint64_t{1} << kGlobalIdShift;

// The global id of a cluster's job `local_id` (a decimal number below 2^26);
// nullopt when it is not one or the index is out of 1-63.
std::optional<std::uint64_t> EncodeGlobalId(int index, std::string_view local_id);

struct DecodedId {
  int index = 0;  // 0: not a global id (a cluster's own)
  std::uint64_t local = 0;
};
DecodedId DecodeGlobalId(std::uint64_t id);

// A job id as Slurm's commands take it: "123", "123_7", "123_[1-3]",
// "123.batch", "123+1"; `number` the leading decimal, `rest` what follows
// it. nullopt when it does not start with a decimal number.
struct JobIdWord {
  std::uint64_t number = 0;
  std::string rest;
};
std::optional<JobIdWord> SplitJobIdWord(std::string_view word);

// Whether `word` names a global id (a number at or above 2^26, with an
// optional array or step suffix).
bool IsGlobalIdWord(std::string_view word);

// Each cluster's index: `pinned` (name -> index, from job_id_index) first,
// then the rest by name, each at its hash's slot or the next free one.
// Names beyond 63 clusters get none.
std::map<std::string, int> ClusterIndices(const std::vector<std::string>& names,
                                          const std::map<std::string, int>& pinned);

// The slot a name hashes to (1-63): FNV-1a of the name.
int DefaultClusterIndex(std::string_view name);

}  // namespace skyslurm
