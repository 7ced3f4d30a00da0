#include "broker/daemon/job_input.h"

#include <fmt/format.h>
#include <json/json.h>

#include <memory>

namespace skyslurm::daemon {

job::RequestInput JobInput::ToRequestInput() const {
  job::RequestInput in;
  in.tool = tool == "salloc" ? job::Tool::kSalloc
            : tool == "srun" ? job::Tool::kSrun
                             : job::Tool::kSbatch;
  in.args = args;
  in.env = env;
  in.script_text = script;
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
  return in;
}

Result<JobInput> JobInputFromText(std::string_view json_text) {
  SKY_ASSIGN_OR_RETURN(Json::Value v, ParseJson(json_text));
  return JobInputFromJson(v);
}

std::string JobInputText(const JobInput& input) { return WriteJson(ToJson(input)); }

std::string WriteJson(const Json::Value& value) {
  Json::StreamWriterBuilder b;
  b["indentation"] = "";
  b["emitUTF8"] = true;
  return Json::writeString(b, value);
}

Result<Json::Value> ParseJson(std::string_view text) {
  Json::CharReaderBuilder b;
  std::unique_ptr<Json::CharReader> reader(b.newCharReader());
  Json::Value v;
  std::string errors;
  if (!reader->parse(text.data(), text.data() + text.size(), &v, &errors)) {
    return InvalidArgumentError(fmt::format("not valid JSON: {}", errors));
  }
  return v;
}

}  // namespace skyslurm::daemon
