// The placement decision, a pure function: every candidate (a cluster and a
// partition) with what is known of it in, the choice and one verdict per
// candidate out. The earliest estimated start wins; estimates within the tie
// tolerance (default 60 s) count as equal, and then the configured
// preference (higher wins), then the home cluster, then a Slurm cluster over
// an overflow one (Kubernetes), then the cluster's own first choice of
// partition, then the earlier start.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace skyslurm::place {

struct Candidate {
  std::string cluster;
  std::string partition;       // "" when the cluster is out before partitions matter
  bool home = false;
  // Kubernetes (or cloud): a Slurm cluster wins a tie against it.
  bool overflow = false;
  int preference = 0;
  // Among one cluster's partitions: 0 for the one translation chose (the
  // user's, else the default), then 1, 2...: a tie goes to the lower.
  int partition_rank = 0;
  // Why it is out, when it is (unreachable, excluded, cannot run the job,
  // no estimate): the first of these that is set decides.
  std::string excluded;        // by --sky-any-cluster=..., --sky-infra or site policy
  std::string unreachable;
  std::vector<std::string> infeasible;
  std::string no_estimate;
  std::optional<std::time_t> start;  // the estimate
  std::string start_basis;
};

struct Policy {
  std::chrono::seconds tie_tolerance{60};
};

struct Verdict {
  enum class Kind { kChosen, kTied, kLater, kInfeasible, kUnreachable, kExcluded, kNoEstimate };
  std::string cluster;
  std::string partition;
  Kind kind = Kind::kLater;
  std::optional<std::time_t> start;
  std::string reason;
};
std::string_view KindName(Verdict::Kind kind);

struct Decision {
  std::optional<std::size_t> chosen;  // index into candidates/verdicts
  std::vector<Verdict> verdicts;      // one per candidate, same order
  std::string summary;                // one line: the choice and why, or why none
};

Decision Place(const std::vector<Candidate>& candidates, const Policy& policy, std::time_t now);

// "now", "in 45 s", "in 12 min", "in 3 h 5 min" relative to `now`.
std::string FormatWait(std::time_t start, std::time_t now);

}  // namespace skyslurm::place
