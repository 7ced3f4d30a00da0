#include "broker/daemon/slurm_front/slurm_json.h"

#include <fmt/format.h>
#include <json/json.h>

#include <memory>
#include <sstream>

#include "broker/util/json_read.h"

namespace skyslurm::daemon {
namespace {

bool IsIdKey(const std::string& name) {
  return name == "job_id" || name == "array_job_id" || name == "het_job_id";
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
    if (IsIdKey(name) && m.isIntegral()) {
      const auto it = map.find(std::to_string(m.asUInt64()));
      if (it != map.end()) m = Json::Value(Json::UInt64{it->second});
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
  auto set = [](const Json::Value& v) { return v.isIntegral() && v.asUInt64() != 0; };
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
      !job["job_id"].isIntegral() || IsArrayTask(job)) {
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
  bool any = false, had_warnings = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const JsonPart& part = parts[i];
    if (part.text.find_first_not_of(" \t\r\n") == std::string::npos) continue;  // printed nothing
    Json::Value doc;
    std::string why;
    if (!ReadJson(part.text, &doc, &why) || !doc.isObject()) {
      return InvalidArgumentError(
          fmt::format("document {} is not a JSON object: {}", i + 1, why.empty() ? "?" : why));
    }
    if (!any) merged = doc;  // the first's "meta" and whatever else it holds
    any = true;
    if (doc.isMember("jobs")) {
      for (Json::Value job : doc["jobs"]) {
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
