#include "broker/daemon/slurm_front/slurm_json.h"

#include <fmt/format.h>
#include <json/json.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "broker/util/json_read.h"

namespace skyslurm::daemon {
namespace {

bool IsIdKey(const std::string& name) {
  return name == "job_id" || name == "array_job_id" || name == "het_job_id";
}

// A number as 23.02 and later write one: {"set": true, "infinite": false,
// "number": N}.
bool IsNumberObject(const Json::Value& v) {
  return v.isObject() && v.size() == 3 && v.isMember("set") && v.isMember("infinite") &&
         v.isMember("number");
}
// The integer an id field holds, in either release's form (nullptr: none).
Json::Value* IdNumber(Json::Value& v) {
  if (v.isUInt64()) return &v;
  if (IsNumberObject(v) && v["number"].isUInt64()) return &v["number"];
  return nullptr;
}

// A member of an object, or null (what other JSON holds is never indexed:
// jsoncpp throws on that, and these documents come from the clusters).
const Json::Value& Member(const Json::Value& v, const char* name) {
  static const Json::Value kNull;
  return v.isObject() && v.isMember(name) ? v[name] : kNull;
}

// Every {"set", "infinite", "number"} as 22.05 wrote the value: the number
// when set and finite, else null.
void FlattenNumbers(Json::Value& v) {
  if (IsNumberObject(v)) {
    const bool set = v["set"].isBool() && v["set"].asBool();
    const bool infinite = !v["infinite"].isBool() || v["infinite"].asBool();
    v = set && !infinite ? Json::Value(v["number"]) : Json::Value(Json::nullValue);
    return;
  }
  if (v.isArray() || v.isObject()) {
    for (auto& e : v) FlattenNumbers(e);
  }
}

// A list of words (23.02+'s states and statuses) as 22.05's one word.
void FirstWord(Json::Value& v) {
  if (v.isArray()) v = v.empty() ? Json::Value("") : Json::Value(v[0]);
}

// A job record of a 23.02+ document (data_parser v0.0.39 and later) in
// 22.05's (OpenAPI v0.0.38) form, for a caller whose own Slurm is 22.05:
// numbers plain, states a word, squeue's exit codes the wait status.
void AsSlurm2205(Json::Value& job) {
  if (!job.isObject()) return;
  FlattenNumbers(job);
  // Only what is there is changed: a missing member is never added.
  auto has_object = [](const Json::Value& v, const char* name) {
    return v.isObject() && v.isMember(name) && v[name].isObject();
  };
  auto status_word = [&](Json::Value& v, const char* name, const char* inner) {
    if (has_object(v, name) && v[name].isMember(inner)) FirstWord(v[name][inner]);
  };
  if (job.isMember("job_state")) {  // squeue
    FirstWord(job["job_state"]);
    for (const char* key : {"exit_code", "derived_exit_code"}) {
      if (!has_object(job, key)) continue;
      const Json::Value& e = job[key];
      const Json::Value& rc = Member(e, "return_code");
      const Json::Value& id = Member(Member(e, "signal"), "id");
      const int code = rc.isInt() ? std::clamp(rc.asInt(), 0, 255) : 0;
      const int signal = id.isInt() ? std::clamp(id.asInt(), 0, 127) : 0;
      job[key] = Json::Value((code << 8) | signal);
    }
  }
  status_word(job, "state", "current");  // sacct
  for (const char* key : {"exit_code", "derived_exit_code"}) status_word(job, key, "status");
  if (job.isMember("steps") && job["steps"].isArray()) {
    for (auto& step : job["steps"]) {
      if (!step.isObject()) continue;
      if (step.isMember("state")) FirstWord(step["state"]);
      status_word(step, "exit_code", "status");
    }
  }
}

// Which form a document is in: 22.05 names its release under meta.Slurm,
// 23.02 and later under meta.slurm.
bool IsSlurm2205Document(const Json::Value& doc) {
  const Json::Value& meta = Member(doc, "meta");
  return meta.isObject() && !meta.isMember("slurm") &&
         (meta.isMember("Slurm") || meta.isMember("plugin"));
}
bool IsLaterDocument(const Json::Value& doc) {
  const Json::Value& meta = Member(doc, "meta");
  return meta.isObject() && meta.isMember("slurm");
}

// The ids of `map` put back as global ids wherever a job's document names
// one: its own, its array's and its het job's (inside "array" and "het"
// too), a step's ("step": {"id": "77.batch"}).
void MapIds(Json::Value& v, const IdMap& map) {
  if (v.isArray()) {
    for (auto& e : v) MapIds(e, map);
    return;
  }
  if (!v.isObject()) return;
  for (const std::string& name : v.getMemberNames()) {
    Json::Value& m = v[name];
    Json::Value* id = IsIdKey(name) ? IdNumber(m) : nullptr;
    if (id != nullptr) {
      const auto it = map.find(std::to_string(id->asUInt64()));
      if (it != map.end()) *id = Json::Value(Json::UInt64{it->second});
    } else if (name == "step" && m.isObject() && m.isMember("id") && m["id"].isString()) {
      m["id"] = MapIdValue(m["id"].asString(), map);
      MapIds(m, map);
    } else {
      MapIds(m, map);
    }
  }
}

// An array's task: its array job id is set (squeue: "array_job_id"; sacct:
// "array": {"job_id"}).
bool IsArrayTask(const Json::Value& job) {
  auto set = [](const Json::Value& v) {
    const Json::Value& n = IsNumberObject(v) ? v["number"] : v;
    return n.isUInt64() && n.asUInt64() != 0;
  };
  if (job.isMember("array_job_id") && set(job["array_job_id"])) return true;
  return job.isMember("array") && job["array"].isObject() && job["array"].isMember("job_id") &&
         set(job["array"]["job_id"]);
}

// A state as 22.05 prints it (a word) or as later versions do (a list of
// words): an ended one becomes COMPLETING.
void HoldState(Json::Value& state) {
  if (state.isString()) {
    if (IsEndedSlurmState(state.asString())) state = "COMPLETING";
  } else if (state.isArray()) {
    for (auto& s : state) {
      if (s.isString() && IsEndedSlurmState(s.asString())) s = "COMPLETING";
    }
  }
}

void HoldIfUnsettled(Json::Value& job, const Unsettled& unsettled) {
  if (unsettled.empty() || !job.isObject() || !job.isMember("job_id") ||
      !job["job_id"].isUInt64() || IsArrayTask(job)) {
    return;
  }
  if (!unsettled.contains(std::to_string(job["job_id"].asUInt64()))) return;
  if (job.isMember("job_state")) HoldState(job["job_state"]);  // squeue
  if (job.isMember("state") && job["state"].isObject() && job["state"].isMember("current")) {
    HoldState(job["state"]["current"]);  // sacct
  }
}

void Append(Json::Value& to, const Json::Value& from) {
  if (!from.isArray()) return;
  for (const auto& e : from) to.append(e);
}

}  // namespace

Result<std::string> MergeJobsJson(const std::vector<JsonPart>& parts) {
  Json::Value merged(Json::objectValue);
  Json::Value jobs(Json::arrayValue), errors(Json::arrayValue), warnings(Json::arrayValue);
  bool any = false, had_warnings = false, to_2205 = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const JsonPart& part = parts[i];
    if (part.text.find_first_not_of(" \t\r\n") == std::string::npos) continue;  // printed nothing
    Json::Value doc;
    std::string why;
    if (!ReadJson(part.text, &doc, &why) || !doc.isObject()) {
      return InvalidArgumentError(
          fmt::format("document {} is not a JSON object: {}", i + 1, why.empty() ? "?" : why));
    }
    if (!any) {
      merged = doc;  // the first's "meta" and whatever else it holds
      to_2205 = IsSlurm2205Document(doc);
    }
    any = true;
    // A later release's records in the caller's own (the first document's)
    // 22.05 form.
    const bool convert = to_2205 && IsLaterDocument(doc);
    if (doc.isMember("jobs")) {
      for (Json::Value job : doc["jobs"]) {
        if (convert) AsSlurm2205(job);
        if (part.unsettled != nullptr) HoldIfUnsettled(job, *part.unsettled);
        if (part.map != nullptr) MapIds(job, *part.map);
        jobs.append(std::move(job));
      }
    }
    if (doc.isMember("errors")) Append(errors, doc["errors"]);
    if (doc.isMember("warnings")) {
      had_warnings = true;
      Append(warnings, doc["warnings"]);
    }
  }
  if (!any) return std::string();
  merged["jobs"] = std::move(jobs);
  merged["errors"] = std::move(errors);
  if (had_warnings) merged["warnings"] = std::move(warnings);
  Json::StreamWriterBuilder writer;
  writer["indentation"] = "  ";
  return Json::writeString(writer, merged) + "\n";
}

}  // namespace skyslurm::daemon
