// A job as the user gave it, in the form skyslurmd keeps and receives: the
// command's arguments, the script's text (read by the submitter, so the
// daemon never depends on the submitter's folder), the environment and the
// folder it was typed in. Enough to parse, translate and place the job
// again, on any cluster, at any later time (a move, a restart).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/job/request.h"
#include "broker/util/status.h"

namespace Json {
class Value;
}

namespace skyslurm::daemon {

struct JobInput {
  std::string tool = "sbatch";
  std::vector<std::string> args;      // without argv[0]
  std::optional<std::string> script;  // the script's text
  std::map<std::string, std::string> env;
  std::string cwd;

  job::RequestInput ToRequestInput() const;
};

Json::Value ToJson(const JobInput& input);
// Errors name the field that is missing or of the wrong type.
Result<JobInput> JobInputFromJson(const Json::Value& value);

// The job input kept in the state store (ToJson, written with WriteJson).
Result<JobInput> JobInputFromText(std::string_view json_text);
std::string JobInputText(const JobInput& input);

std::string WriteJson(const Json::Value& value);  // compact, one line
Result<Json::Value> ParseJson(std::string_view text);

}  // namespace skyslurm::daemon
