// One job array spread over clusters (docs/placement.md, "One array over
// several clusters"): when the clusters together start its tasks sooner
// than the best one alone, the array becomes one SPREAD sky job with a part
// per cluster. Each part is a sky job of its own (its indices as its
// --array, the whole array's id as its tasks' SKYPILOT_TASK_ID), so every
// protocol of a single job holds for it unchanged. Pending tasks of a part
// move to a cluster that starts them now (TaskMoves), a few tasks of one
// array are cancelled or shown by their indices.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/daemon/jobs/parsed_jobs.h"
#include "broker/daemon/jobs/piece.h"
#include "broker/daemon/jobs/submit_types.h"
#include "broker/job/request.h"
#include "broker/place/array_split.h"
#include "broker/place/planner.h"

namespace skyslurm::daemon {

class Arrays : public Piece {
 public:
  explicit Arrays(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // A new job array that several clusters start sooner together than any
  // one alone: recorded as a SPREAD job with a part per cluster (the parts
  // and the whole in one transaction before anything is sent), each part
  // submitted. Answers false, having done nothing, when it is not worth
  // spreading (the caller places it whole).
  Result<bool> Spread(store::SkyJob& job, const job::Request& request, const JobInput& input);
  // The answer for a spread array: its parts, named by the first.
  SubmitAnswer Answer(const store::SkyJob& job);
  // A part's tasks see the whole array's SLURM_ARRAY_TASK_MIN/MAX/COUNT: the
  // variables the plugin sets them from (spank/remote_context.cc).
  std::vector<std::pair<std::string, std::string>> WholeArrayEnv(const store::SkyJob& part);
  // A spread array once every part has ended: its final state.
  void Settle(store::SkyJob& job);
  // An array's parts (itself, kept whole), and the ones of them holding any
  // of the indices named ("7", "[7,9-12]"), with those indices.
  struct TaskSelection {
    store::SkyJob part;
    std::vector<std::int64_t> indices;
  };
  Result<std::vector<TaskSelection>> SelectTasks(const std::string& sky_id,
                                                 const std::string& index_text);
  Status CancelTasks(const std::string& sky_id, const std::string& index_text);

 private:
  // The parts of a spread, each with its own --array, read back once.
  struct Parts {
    std::vector<store::SkyJob> jobs;
    std::vector<std::shared_ptr<const ParsedJob>> parsed;
    std::vector<std::string> described;  // for the event: where, which, when
  };
  // The array's plan with each cluster's tasks laid out one after another.
  place::Plan PlanTasks(const job::Request& request);
  // nullopt: a part's arguments do not read back as its indices.
  std::optional<Parts> MakeParts(const store::SkyJob& job, const job::Request& request,
                                 const JobInput& input, const place::ArraySplit& split,
                                 std::time_t now);
  // Each part submitted to its cluster, else anywhere else; one refused
  // everywhere refuses the whole array (RefuseWhole).
  Status SendParts(store::SkyJob& job, std::vector<store::SkyJob>& parts,
                   const place::ArraySplit& split);
  // The other parts cancelled, the array REFUSED: a kFailedPrecondition.
  Status RefuseWhole(store::SkyJob& job, const std::vector<store::SkyJob>& parts,
                     std::size_t refused, const std::string& why);
};

class TaskMoves : public Piece {
 public:
  explicit TaskMoves(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // A part of a spread array whose tasks have pended migrate_after: when
  // another cluster starts some of them now, those (the last) leave their
  // cluster (held, then cancelled while still pending, under an intent) and
  // go there as a new part of the array.
  void Weigh(store::SkyJob& part, const backend::JobInfo& copy);
  // The rest of such a move from its intent (cluster and "N_[indices]"):
  // the tasks cancelled while still pending become a new part, submitted to
  // `target` ("" = wherever they start soonest); also what recovery does.
  void Finish(store::SkyJob& part, const store::Intent& intent, const std::string& target,
              const std::string& why);

 private:
  class Move;
};

// The job's arguments with `--array=SPEC` after its other options, so that
// it is the one sbatch applies: before the script and its arguments.
std::vector<std::string> WithArray(const JobInput& input, const job::Request& request,
                                   const std::string& spec);
// "[7,9-12]" as "7,9-12" (as Slurm lists a row's tasks); anything else as it is.
std::string_view Unbracketed(std::string_view text);

}  // namespace skyslurm::daemon
