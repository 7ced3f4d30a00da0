#include "broker/backend/kubernetes/job_status.h"

#include <fmt/format.h>

#include "broker/util/timestamp.h"

namespace skyslurm::kube {
namespace {

using cluster::JobPhase;

std::time_t Time(const Json::Value& v) { return ParseRfc3339(v.asString()).value_or(0); }

const Json::Value* Condition(const Json::Value& object, const char* type) {
  for (const auto& c : object["status"]["conditions"]) {
    if (c["type"].asString() == type && c["status"].asString() == "True") return &c;
  }
  return nullptr;
}

// A disrupted pod's phase: preemption and eviction, or the node's loss.
JobPhase DisruptionPhase(const std::string& reason) {
  if (reason == "DeletionByTaintManager" || reason == "DeletionByPodGC") return JobPhase::kNodeFail;
  return JobPhase::kPreempted;
}

}  // namespace

JobStatus StatusOf(const Json::Value& job, const std::vector<Json::Value>& pods) {
  JobStatus s;
  s.start = Time(job["status"]["startTime"]);
  s.end = Time(job["status"]["completionTime"]);
  const Json::Value* disrupted = nullptr;
  int running = 0, succeeded = 0;
  for (const auto& p : pods) {
    const std::string phase = p["status"]["phase"].asString();
    if (phase == "Running") ++running;
    if (phase == "Succeeded") ++succeeded;
    if (phase == "Failed") {
      if (const Json::Value* c = Condition(p, "DisruptionTarget")) disrupted = c;
      for (const auto& cs : p["status"]["containerStatuses"]) {
        const Json::Value& t = cs["state"]["terminated"];
        if (t.isObject() && t["exitCode"].asInt() != 0 && s.exit_code == 0) {
          s.exit_code = t["exitCode"].asInt() << 8;
        }
      }
    }
    for (const auto& cs : p["status"]["containerStatuses"]) {
      const Json::Value& waiting = cs["state"]["waiting"];
      const std::string why = waiting["reason"].asString();
      if (why == "ImagePullBackOff" || why == "ErrImagePull" || why == "InvalidImageName") {
        s.state = why;
        s.reason = waiting["message"].asString();
        const std::time_t since = Time(p["status"]["startTime"]) != 0
                                      ? Time(p["status"]["startTime"])
                                      : Time(p["metadata"]["creationTimestamp"]);
        if (s.image_pull_stuck_since == 0 || since < s.image_pull_stuck_since) {
          s.image_pull_stuck_since = since;
        }
      }
    }
  }
  if (const Json::Value* done = Condition(job, "Complete")) {
    s.phase = JobPhase::kCompleted;
    s.state = "Complete";
    s.reason = "";
    if (s.end == 0) s.end = Time((*done)["lastTransitionTime"]);
    return s;
  }
  if (const Json::Value* f = Condition(job, "Failed")) {
    const std::string why = (*f)["reason"].asString();
    s.end = Time((*f)["lastTransitionTime"]);
    s.state = why.empty() ? "Failed" : why;
    s.reason = (*f)["message"].asString();
    if (why == "DeadlineExceeded") {
      s.phase = JobPhase::kTimeout;
    } else if (disrupted != nullptr) {
      s.phase = DisruptionPhase((*disrupted)["reason"].asString());
      s.state = (*disrupted)["reason"].asString();
      s.reason = (*disrupted)["message"].asString();
    } else {
      s.phase = JobPhase::kFailed;
    }
    return s;
  }
  if (job["spec"]["suspend"].asBool()) {
    s.phase = JobPhase::kHeld;
    s.state = "Suspended";
    return s;
  }
  if (running > 0) {
    s.phase = JobPhase::kRunning;
    s.state = "Running";
    s.reason = "";
    return s;
  }
  const auto pods_wanted = job["spec"]["completions"].asInt();
  if (succeeded > 0 && succeeded >= pods_wanted) {
    s.phase = JobPhase::kEnding;
    s.state = "Completing";
    return s;
  }
  s.phase = JobPhase::kPending;
  if (s.state.empty()) {
    s.state = "Pending";
    for (const auto& p : pods) {
      for (const auto& c : p["status"]["conditions"]) {
        if (c["type"].asString() == "PodScheduled" && c["status"].asString() == "False") {
          s.reason = fmt::format("{}: {}", c["reason"].asString(), c["message"].asString());
        }
      }
    }
  }
  return s;
}

}  // namespace skyslurm::kube
