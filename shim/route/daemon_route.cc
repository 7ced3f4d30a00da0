#include "shim/route/daemon_route.h"

#include <fmt/format.h>
#include <json/json.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <optional>
#include <thread>

#include "broker/backend/backend.h"
#include "broker/store/job_store.h"
#include "shim/front/stop_signals_held.h"
#include "shim/route/wait_bound.h"

namespace skyslurm::route {
namespace {

// --wait: the job waited for through skyslurmd, wherever it runs.
int WaitThroughDaemon(const std::string& tool, const job::Request& request,
                      cli::DaemonClient& client, const std::string& sky_id,
                      const config::FailoverSettings& failover) {
  // Waited for while skyslurmd answers and knows how the job is doing; its
  // silence, or its not knowing (the job's cluster silent: UNKNOWN), ends
  // the wait after the job's time limit plus cluster_dead_after.
  WaitBound bound(TimeLimitMinutes(request), failover.cluster_dead_after, std::time(nullptr));
  while (true) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto now = client.Get("/v1/jobs/" + sky_id);
    if (!now.ok()) {
      // Only a daemon that does not answer is waited for; anything else ends the wait.
      if (now.status().code() != StatusCode::kUnavailable) {
        return Fail(tool, "skyslurm: " + now.status().message());
      }
      if (auto error = bound.GiveUp(std::time(nullptr), "skyslurmd", sky_id,
                                    "skyslurm status " + sky_id + " tells later")) {
        return Fail(tool, "skyslurm: " + *error);
      }
      (void)client.EnsureRunning();
      continue;
    }
    const std::string state = (*now)["job"]["state"].asString();
    if (store::IsFinalState(state))
      return WaitStatusExit(state, (*now)["job"]["exit_code"].asInt());
    if (state != "UNKNOWN") {
      bound.Answered(std::time(nullptr));
    } else if (auto error = bound.GiveUp(std::time(nullptr),
                                         "cluster " + (*now)["job"]["cluster"].asString(), sky_id,
                                         "skyslurm status " + sky_id + " tells later")) {
      return Fail(tool, "skyslurm: " + *error);
    }
  }
}

}  // namespace

// A routed sbatch: the job goes to skyslurmd, which answers with where it
// went. A lost connection is retried with the same sky id: the daemon
// answers with the job it has, never a second one.
int SubmitThroughDaemon(const std::string& tool, const job::Request& request,
                        cli::DaemonClient& client, const daemon::JobInput& input,
                        Progress& progress, const config::FailoverSettings& failover,
                        config::SubmitOutput form) {
  Json::Value body(Json::objectValue);
  // The shim's own id when it handed over after sending (a retry names the
  // same job), else a new one.
  const char* given = std::getenv("SKYSLURM_SKY_ID");
  body["sky_id"] = given != nullptr && LooksLikeSkyId(given)
                       ? std::string(given)
                       : backend::NewSkyId(std::time(nullptr));
  unsetenv("SKYSLURM_SKY_ID");
  body["input"] = daemon::ToJson(input);
  body["managed"] = request.sky.managed;
  body["submit_output"] =
      form == config::SubmitOutput::kMultiCluster ? "multi-cluster" : "single-cluster";
  if (CurrentTrace() != nullptr && CurrentTrace()->trace() != nullptr) {
    body["trace"] = true;
    body["trace_origin_ns"] = Json::Int64{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              CurrentTrace()->trace()->origin().time_since_epoch())
                                              .count()};
  }
  Result<Json::Value> answer = UnavailableError("not sent");
  // Ctrl-C (a kill, a hang-up) while skyslurmd places the job is held until
  // its answer (the threads started meanwhile hold it too): the job is then
  // cancelled, and the signal ends us when `held` goes, as the shim does
  // when it speaks to the daemon itself (daemon_handoff.cc). Only that
  // long: `--wait` is interrupted as sbatch's is.
  std::optional<shim::StopSignalsHeld> held(std::in_place);
  {
    // On a terminal, what the daemon does for the job meanwhile (copying
    // its folder: the share sent) is the progress line.
    std::atomic<bool> answered{false};
    std::mutex said_mu;
    std::thread watcher;
    if (progress.on_terminal()) {
      watcher = std::thread([&, sky_id = body["sky_id"].asString(), watch = client]() mutable {
        while (!answered) {
          std::this_thread::sleep_for(std::chrono::milliseconds(250));
          if (answered) break;
          auto now = watch.GetQuick("/v1/jobs/" + sky_id, std::chrono::seconds(1));
          if (!now.ok() || (*now)["activity"].asString().empty()) continue;
          std::lock_guard lock(said_mu);
          if (!answered) progress.Say((*now)["activity"].asString());
        }
      });
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
      trace::Span span("POST /v1/jobs to skyslurmd");
      // A submission may copy the job's folder first (at most copy_timeout,
      // 10 min): waited for as long, the progress line saying so.
      answer = client.Post("/v1/jobs", body, std::chrono::minutes(11));
      if (answer.ok() || answer.status().code() != StatusCode::kUnavailable) break;
      if (!client.EnsureRunning().ok()) break;
    }
    {
      std::lock_guard lock(said_mu);
      answered = true;
    }
    if (watcher.joinable()) watcher.join();
  }
  progress.Clear();
  if (held->Arrived()) {
    const std::string sky_id = body["sky_id"].asString();
    auto cancelled = client.Post("/v1/jobs/" + sky_id + "/cancel", Json::Value(Json::objectValue));
    if (cancelled.ok()) {
      std::fprintf(stderr, "%s: skyslurm: interrupted: job %s cancelled\n", tool.c_str(),
                   sky_id.c_str());
    } else {
      std::fprintf(stderr,
                   "%s: error: skyslurm: interrupted, and %s may not be cancelled (%s): "
                   "`skyslurm status %s`\n",
                   tool.c_str(), sky_id.c_str(), cancelled.status().message().c_str(),
                   sky_id.c_str());
    }
    return 128 + SIGINT;  // when the signal itself does not end us
  }
  if (!answer.ok() && answer.status().code() == StatusCode::kUnavailable) {
    // The request may have reached the daemon before it stopped answering.
    const std::string sky_id = body["sky_id"].asString();
    return Fail(tool, fmt::format("skyslurm: {}; `skyslurm status {}` tells whether skyslurmd "
                                  "submitted the job",
                                  answer.status().message(), sky_id));
  }
  if (!answer.ok()) return Fail(tool, "skyslurm: " + answer.status().message());
  if (CurrentTrace() != nullptr) CurrentTrace()->AddDaemon((*answer)["trace"].asString());
  // The daemon writes what the command prints (submit_text.h): the notes
  // first, the line last (as the shim prints them: daemon_handoff.cc).
  std::fputs((*answer)["stderr"].asCString(), stderr);
  std::fflush(stderr);
  std::fputs((*answer)["stdout"].asCString(), stdout);
  std::fflush(stdout);
  // Its id told: from here on a signal ends the command as it would have.
  held.reset();
  if ((*answer)["exit_code"].asInt() != 0) return (*answer)["exit_code"].asInt();
  const std::string sky_id = (*answer)["job"]["sky_id"].asString();
  if (!request.wait) return 0;
  return WaitThroughDaemon(tool, request, client, sky_id, failover);
}

}  // namespace skyslurm::route
