// Slurm lists a job array as its tasks: one row "452_[1-3,7%2]" for the
// tasks still pending, and one row "452_5" for each task that has started
// (until MinJobAge after it ends). skyslurm submits an array as one job,
// "452" (what sbatch --parsable answers), and follows it as one: a task is
// neither a job gone missing nor a duplicate copy of its siblings.
#pragma once

#include <string_view>
#include <vector>

#include "broker/backend/backend.h"

namespace skyslurm::backend {

// The array's job id of a queue row's id: "452" for "452_5" and
// "452_[1-3,7%2]"; the id itself for a job that is not an array's task.
std::string_view ArrayJobId(std::string_view job_id);

// The rows of each sky job's array (a sky id, the same cluster and array
// job id) folded into one, keyed by the array's job id, in the place of its
// first row; other rows unchanged (a user's own array is listed as Slurm
// lists it). The folded row's phase is the array's:
//   - a task in a phase this version does not know: unknown (never an end);
//   - else any task started (it has or had nodes, or ended): running while
//     any task is live (the array has started: it is never moved whole),
//     else the end of the whole: the first of node failure, boot failure,
//     preemption, failure, time-out, cancellation that a task met, else
//     completed (the largest exit code);
//   - else all pending: pending, or held when every pending task is held.
// `array_tasks` counts its tasks in view by phase name, `pending_tasks`
// lists the indices still waiting (not held); the array's own record
// listed by its bare id beside its tasks ("452 CANCELLED": Slurm lists it
// so once every task it held pending was cancelled) is one of its rows,
// counted as one task; submit time is the
// earliest, start the earliest start, end the latest end; the reason is the
// pending tasks' while the array has not started.
std::vector<JobInfo> FoldArrayTasks(std::vector<JobInfo> rows);

}  // namespace skyslurm::backend
