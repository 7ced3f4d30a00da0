#include "broker/daemon/jobs/job_input.h"

#include <fmt/format.h>
#include <json/json.h>

#include <memory>
#include <mutex>

#include "broker/util/json_read.h"

namespace skyslurm::daemon {
namespace {

// A value not kept: no seal to keep it with.
constexpr std::string_view kNotKept = "skyslurm-sealed:none";
// The member that holds the sealed environment in a kept input.
constexpr const char* kSealedEnv = "env_sealed";

std::mutex seal_mu;
std::shared_ptr<const SecretSeal> seal_given;  // guarded by seal_mu

std::shared_ptr<const SecretSeal> Seal() {
  std::lock_guard lock(seal_mu);
  return seal_given;
}

}  // namespace

void UseSecretSeal(std::shared_ptr<const SecretSeal> seal) {
  std::lock_guard lock(seal_mu);
  seal_given = std::move(seal);
}

job::RequestInput JobInput::ToRequestInput() const {
  job::RequestInput in;
  in.tool = tool == "salloc" ? job::Tool::kSalloc
            : tool == "srun" ? job::Tool::kSrun
                             : job::Tool::kSbatch;
  in.args = args;
  in.env = env;
  in.script_text = script;
  if (!stdin_name.empty()) in.stdin_name = stdin_name;
  return in;
}

Json::Value ToJson(const JobInput& input) {
  Json::Value v(Json::objectValue);
  v["tool"] = input.tool;
  v["args"] = Json::Value(Json::arrayValue);
  for (const auto& a : input.args) v["args"].append(a);
  if (input.script) v["script"] = *input.script;
  v["env"] = Json::Value(Json::objectValue);
  for (const auto& [k, val] : input.env) v["env"][k] = val;
  v["cwd"] = input.cwd;
  if (input.at_terminal) v["at_terminal"] = *input.at_terminal;
  if (!input.stdin_name.empty()) v["stdin_name"] = input.stdin_name;
  if (!input.secret_names.empty()) {
    v["secrets"] = Json::Value(Json::arrayValue);
    for (const auto& name : input.secret_names) v["secrets"].append(name);
  }
  return v;
}

Result<JobInput> JobInputFromJson(const Json::Value& v) {
  auto bad = [](std::string_view what) {
    return InvalidArgumentError(fmt::format("job input: {}", what));
  };
  if (!v.isObject()) return bad("must be an object");
  JobInput in;
  if (!v["tool"].isString()) return bad("'tool' must be a string");
  in.tool = v["tool"].asString();
  if (in.tool != "sbatch" && in.tool != "salloc" && in.tool != "srun") {
    return bad(fmt::format("unknown tool '{}'", in.tool));
  }
  if (!v["args"].isArray()) return bad("'args' must be a list of strings");
  for (const auto& a : v["args"]) {
    if (!a.isString()) return bad("'args' must be a list of strings");
    in.args.push_back(a.asString());
  }
  if (v.isMember("script")) {
    if (!v["script"].isString()) return bad("'script' must be a string");
    in.script = v["script"].asString();
  }
  if (v.isMember("env")) {
    if (!v["env"].isObject()) return bad("'env' must map names to strings");
    for (const auto& name : v["env"].getMemberNames()) {
      if (!v["env"][name].isString()) return bad("'env' must map names to strings");
      in.env[name] = v["env"][name].asString();
    }
  }
  if (!v["cwd"].isString()) return bad("'cwd' must be a string");
  in.cwd = v["cwd"].asString();
  if (v.isMember("at_terminal")) {
    if (!v["at_terminal"].isBool()) return bad("'at_terminal' must be true or false");
    in.at_terminal = v["at_terminal"].asBool();
  }
  if (v.isMember("stdin_name")) {
    if (!v["stdin_name"].isString()) return bad("'stdin_name' must be a string");
    in.stdin_name = v["stdin_name"].asString();
  }
  if (v.isMember("secrets")) {
    if (!v["secrets"].isArray()) return bad("'secrets' must be a list of names");
    for (const auto& name : v["secrets"]) {
      if (!name.isString() || !in.env.contains(name.asString())) {
        return bad("'secrets' must name variables of 'env'");
      }
      in.secret_names.push_back(name.asString());
    }
  }
  return in;
}

Result<JobInput> JobInputFromText(std::string_view json_text) {
  SKY_ASSIGN_OR_RETURN(Json::Value v, ParseJson(json_text));
  const std::shared_ptr<const SecretSeal> seal = Seal();
  if (v.isObject() && v.isMember(kSealedEnv)) {
    // The whole environment, sealed with the user's key (JobInputText).
    if (!v[kSealedEnv].isString() || seal == nullptr) {
      return FailedPreconditionError("the job's environment was not kept (submit it again)");
    }
    auto opened = seal->Open(v[kSealedEnv].asString());
    if (!opened.ok()) {
      return FailedPreconditionError(
          fmt::format("the job's environment: {} (submit it again)", opened.status().message()));
    }
    SKY_ASSIGN_OR_RETURN(v["env"], ParseJson(*opened));
    v.removeMember(kSealedEnv);
  }
  SKY_ASSIGN_OR_RETURN(JobInput input, JobInputFromJson(v));
  for (const auto& name : input.secret_names) {
    std::string& value = input.env[name];
    if (value == kNotKept || (SecretSeal::IsSealed(value) && seal == nullptr)) {
      return FailedPreconditionError(
          fmt::format("the job's secret {} was not kept (launch it again)", name));
    }
    if (!SecretSeal::IsSealed(value)) continue;  // kept in a sealed environment, or in clear
    auto opened = seal->Open(value);
    if (!opened.ok()) {
      return FailedPreconditionError(fmt::format("the job's secret {}: {} (launch it again)", name,
                                                 opened.status().message()));
    }
    value = std::move(*opened);
  }
  return input;
}

std::string JobInputText(const JobInput& input) {
  Json::Value v = ToJson(input);
  const std::shared_ptr<const SecretSeal> seal = Seal();
  // The submitter's whole environment (tokens, passwords in it) is kept
  // sealed with the user's own key, never in clear; without a seal, only
  // the secrets' values are left out.
  if (seal != nullptr) {
    if (auto sealed = seal->Seal(WriteJson(v["env"])); sealed.ok()) {
      v.removeMember("env");
      v[kSealedEnv] = *sealed;
      return WriteJson(v);
    }
  }
  for (const auto& name : input.secret_names) v["env"][name] = std::string(kNotKept);
  return WriteJson(v);
}

std::string WriteJson(const Json::Value& value) {
  Json::StreamWriterBuilder b;
  b["indentation"] = "";
  b["emitUTF8"] = true;
  return Json::writeString(b, value);
}

Result<Json::Value> ParseJson(std::string_view text) {
  Json::Value v;
  std::string errors;
  if (!ReadJson(text, &v, &errors)) {
    return InvalidArgumentError(fmt::format("not valid JSON: {}", errors));
  }
  return v;
}

}  // namespace skyslurm::daemon
