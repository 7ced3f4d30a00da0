// Each sky job's input and request, read from the store's text once and
// kept while the job lives: a move, a restart, a weighing, a look at its
// tasks or its folder read the same parsed request instead of parsing the
// job again (one ParseRequest per job in a daemon's life; a job whose input
// changed, by scontrol update, is read again).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "broker/daemon/jobs/job_input.h"
#include "broker/job/request.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct ParsedJob {
  JobInput input;
  job::Request request;
};

class ParsedJobs {
 public:
  // The job's input and request, as its stored input text says.
  Result<std::shared_ptr<const ParsedJob>> Of(const store::SkyJob& job);
  // Keeps what the caller read of a job's input text (a new submission).
  void Keep(const std::string& sky_id, const std::string& input_json,
            std::shared_ptr<const ParsedJob> parsed);
  // Forgets every job's but those of `live` (the jobs that have not ended).
  void KeepOnly(const std::set<std::string>& live);

 private:
  struct Kept {
    std::string input_json;
    std::shared_ptr<const ParsedJob> parsed;
  };
  std::mutex mu_;
  std::map<std::string, Kept> kept_;
};

// Reads a job's input text: its input, and its request parsed.
Result<std::shared_ptr<const ParsedJob>> ParseJob(JobInput input);

}  // namespace skyslurm::daemon
