// `squeue --json` and `sacct --json` over several clusters: each cluster
// prints a document of Slurm's REST data ({"meta": ..., "errors": [...],
// "warnings": [...], "jobs": [...]}) naming its own job ids; the user gets
// one document, as one cluster's command prints it, with the routed jobs'
// global ids (job/global_id.h) and, like the text forms (slurm_text.h), an
// unsettled job's ended state held as COMPLETING. Pure functions, tested on
// fixtures and on the testbed's real output.
#pragma once

#include <string>
#include <vector>

#include "broker/daemon/slurm_front/slurm_text.h"
#include "broker/util/status.h"

namespace skyslurm::daemon {

// One cluster's document and what maps its ids.
struct JsonPart {
  std::string text;
  const IdMap* map = nullptr;
  const Unsettled* unsettled = nullptr;
};

// The documents merged: the first's "meta", every document's "jobs",
// "errors" and "warnings", in order. In each job, the ids its cluster gave
// are the global ones: "job_id", "array_job_id", "het_job_id" (also inside
// "array", "het" and a step's "step"), and a step's "id" when it is a whole
// id ("77.batch"; 22.05 prints "batch"). When the first document is 22.05's
// (the caller's own release) and another is of 23.02 or later (meta.slurm),
// that one's records are given in 22.05's form: {"set", "infinite",
// "number"} as the number (null when unset or infinite), a list of states
// or statuses as its first word, squeue's exit codes as the wait status. A job of its own (not an
// array's task) that is unsettled and ended there shows COMPLETING in its
// "job_state" (squeue) or "state"."current" (sacct). An error names the
// document that is not JSON.
Result<std::string> MergeJobsJson(const std::vector<JsonPart>& parts);

}  // namespace skyslurm::daemon
