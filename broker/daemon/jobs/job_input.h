// A job as the user gave it, in the form skyslurmd keeps and receives: the
// command's arguments, the script's text (read by the submitter, so the
// daemon never depends on the submitter's folder), the environment and the
// folder it was typed in. Enough to parse, translate and place the job
// again, on any cluster, at any later time (a move, a restart).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/job/request.h"
#include "broker/util/secret_seal.h"
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
  // Whether sbatch printed to a terminal (a person typing it) or to a
  // program that reads its answer (a workflow engine, a script's $(...)):
  // the latter's jobs bring their folder back by default (FetchBack).
  // Unknown for inputs kept by earlier versions.
  std::optional<bool> at_terminal;
  // The names in `env` that are secrets (a task's `secrets`: skyslurm
  // launch): their values are sealed in the store's copy (JobInputText),
  // never written in clear.
  std::vector<std::string> secret_names;
  // What messages call the script when no file is named ("" = "(stdin)").
  std::string stdin_name;

  job::RequestInput ToRequestInput() const;
};

Json::Value ToJson(const JobInput& input);
// Errors name the field that is missing or of the wrong type.
Result<JobInput> JobInputFromJson(const Json::Value& value);

// The job input kept in the state store (ToJson, written with WriteJson),
// its secrets sealed with the seal given to UseSecretSeal (without one, their
// values are not kept: a later submission of the job fails, saying so).
// Reading it opens them again; one that does not open is an error.
Result<JobInput> JobInputFromText(std::string_view json_text);
std::string JobInputText(const JobInput& input);
// The user's seal (util/secret_seal.h), set once by skyslurmd at its start.
void UseSecretSeal(std::shared_ptr<const SecretSeal> seal);

std::string WriteJson(const Json::Value& value);  // compact, one line
Result<Json::Value> ParseJson(std::string_view text);

}  // namespace skyslurm::daemon
