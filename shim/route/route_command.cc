#include "shim/route/route_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "broker/backend/backend.h"
#include "broker/backend/slurm/slurm_state.h"
#include "broker/cluster/registry.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/job/request.h"
#include "broker/job/sky_dependency.h"
#include "broker/place/audit.h"
#include "broker/place/explain_view.h"
#include "broker/place/job_folder.h"
#include "broker/place/planner.h"
#include "broker/place/spending.h"
#include "broker/place/submission.h"
#include "broker/store/job_store.h"
#include "broker/sync/rsync.h"
#include "broker/util/strings.h"
#include "broker/util/trace.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"
#include "shim/real_command.h"
#include "shim/route/wait_bound.h"
#include "shim/stop_signals_held.h"

namespace skyslurm::route {
namespace {

namespace fs = std::filesystem;

// SKYSLURM_TRACE=1: the spans of this submission, the client's and
// skyslurmd's, printed on stderr when the command ends.
class TracePrinter {
 public:
  TracePrinter() {
    if (!trace::Wanted()) return;
    // The shim's start, when it handed the invocation over (same clock).
    const char* start = std::getenv("SKYSLURM_TRACE_START");
    const auto now = std::chrono::steady_clock::now();
    auto origin = now;
    if (start != nullptr && std::atoll(start) > 0) {
      origin = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(std::atoll(start)));
    }
    trace_ = std::make_shared<trace::Trace>("skyslurm", origin);
    if (origin != now) {
      trace_->Add({"the shim starts, finds routing asked for, execs skyslurm __route", 0,
                   std::chrono::duration_cast<std::chrono::microseconds>(now - origin).count(),
                   trace::Cost::kLocalProcess});
    }
    unsetenv("SKYSLURM_TRACE_START");
  }
  ~TracePrinter();
  const std::shared_ptr<trace::Trace>& trace() const { return trace_; }
  void AddDaemon(const std::string& rendered) { daemon_ += rendered; }

 private:
  std::shared_ptr<trace::Trace> trace_;
  std::string daemon_;
};

// The command's printer while RunRoute runs (null otherwise).
TracePrinter* g_trace = nullptr;

TracePrinter::~TracePrinter() {
  g_trace = nullptr;
  if (trace_ == nullptr) return;
  std::fprintf(stderr, "skyslurm: trace (SKYSLURM_TRACE), times from the command's start:\n%s%s",
               trace_->Render().c_str(), daemon_.c_str());
}

// A progress line on stderr, when it is a terminal; silent otherwise.
class Progress {
 public:
  explicit Progress(std::string tool) : tool_(std::move(tool)), tty_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() { Clear(); }
  void Say(const std::string& what) {
    if (!tty_) return;
    std::fprintf(stderr, "\r\033[K%s: skyslurm: %s", tool_.c_str(), what.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (tty_ && shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
  }
  bool on_terminal() const { return tty_; }

 private:
  std::string tool_;
  bool tty_;
  bool shown_ = false;
};

std::string RealCommandPath(const std::string& tool, const config::Settings& settings) {
  const char* path = std::getenv("PATH");
  std::string search = !settings.real_bin_dir.empty() ? settings.real_bin_dir
                                                      : (path != nullptr ? path : "/usr/bin:/bin");
  std::string why;
  auto found = shim::FindRealCommand(tool, search, "", &why);
  return found ? *found : "";
}

// The real command is about to replace this process (same PID): its
// plugin must not hand the invocation back to the shim, even when the
// script still says #SBATCH --sky-any-cluster. Keyed to this PID, the mark
// means nothing to any other process that inherits it (the job's own).
void MarkRealCommand() {
  setenv("SKYSLURM_REAL_COMMAND_PID", std::to_string(getpid()).c_str(), 1);
  unsetenv("SKYSLURM_ANY_CLUSTER");
}

// Runs the real command in place of this process: the fallback home. The
// --sky-* options go (the plugin may be missing there); the script's own
// words after it stay, whatever they look like.
[[noreturn]] void ExecReal(const std::string& real, const std::string& tool, job::Tool jtool,
                           const std::vector<std::string>& args) {
  std::vector<std::string> argv = {tool};
  const std::vector<std::string> kept =
      job::RemoveOptions(job::OptionTable(jtool), args, job::SkyOptionIds());
  argv.insert(argv.end(), kept.begin(), kept.end());
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  MarkRealCommand();
  execv(real.c_str(), c.data());
  std::fprintf(stderr, "%s: error: skyslurm: cannot run %s: %s\n", tool.c_str(), real.c_str(),
               std::strerror(errno));
  std::exit(1);
}

int Fail(const std::string& tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
  return 1;
}

// The job's own time limit in minutes, when it has a finite one.
std::optional<std::int64_t> TimeLimitMinutes(const job::Request& request) {
  if (!request.time_limit || request.time_limit->infinite()) return std::nullopt;
  return request.time_limit->minutes;
}

// Slurm's wait status as sbatch --wait exits: the exit code, or 128+signal.
int WaitStatusExit(const std::string& state, int wait_status) {
  if (state == "COMPLETED") return 0;
  const int code = (wait_status >> 8) & 0xff, signal = wait_status & 0x7f;
  return signal != 0 ? 128 + signal : (code != 0 ? code : 1);
}

// A routed sbatch: the job goes to skyslurmd, which answers with where it
// went. A lost connection is retried with the same sky id: the daemon
// answers with the job it has, never a second one.
int SubmitThroughDaemon(const std::string& tool, const job::Request& request,
                        cli::DaemonClient& client, const daemon::JobInput& input,
                        Progress& progress, const config::FailoverSettings& failover) {
  Json::Value body(Json::objectValue);
  // The shim's own id when it handed over after sending (a retry names the
  // same job), else a new one.
  const char* given = std::getenv("SKYSLURM_SKY_ID");
  body["sky_id"] = given != nullptr && LooksLikeSkyId(given) ? std::string(given)
                                                             : backend::NewSkyId(std::time(nullptr));
  unsetenv("SKYSLURM_SKY_ID");
  body["input"] = daemon::ToJson(input);
  body["managed"] = request.sky.managed;
  if (g_trace != nullptr && g_trace->trace() != nullptr) {
    body["trace"] = true;
    body["trace_origin_ns"] = Json::Int64{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              g_trace->trace()->origin().time_since_epoch())
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
  if (g_trace != nullptr) g_trace->AddDaemon((*answer)["trace"].asString());
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
    if (store::IsFinalState(state)) return WaitStatusExit(state, (*now)["job"]["exit_code"].asInt());
    if (state != "UNKNOWN") {
      bound.Answered(std::time(nullptr));
    } else if (auto error = bound.GiveUp(
                   std::time(nullptr), "cluster " + (*now)["job"]["cluster"].asString(), sky_id,
                   "skyslurm status " + sky_id + " tells later")) {
      return Fail(tool, "skyslurm: " + *error);
    }
  }
}

}  // namespace

int RunRoute(const std::string& mode, const std::vector<std::string>& args) {
  const std::string tool = mode;
  job::Tool jtool = job::Tool::kSbatch;
  if (mode == "salloc") {
    jtool = job::Tool::kSalloc;
  } else if (mode == "srun") {
    jtool = job::Tool::kSrun;
  } else if (mode != "sbatch") {
    return Fail("skyslurm", "__route: unknown mode " + mode);
  }
  // The plugin's guard against handing an invocation over twice has done
  // its work; it must not travel into the job's environment.
  unsetenv("SKYSLURM_PLUGIN_REEXEC");
  TracePrinter tracer;
  g_trace = &tracer;
  trace::Install traced(tracer.trace());
  Progress progress(tool);
  progress.Say("reading the configuration");
  auto env = config::Environment::FromProcess();
  auto loaded = [&] {
    trace::Span span("read the configuration");
    return config::LoadConfig(env, cli::GlobalSettingFlags());
  }();
  const std::string real = RealCommandPath(tool, loaded.ok() ? loaded->settings : config::Settings{});
  if (real.empty()) return Fail(tool, "skyslurm: cannot find the real " + tool + " on PATH");
  if (!loaded.ok()) {
    progress.Clear();
    std::fprintf(stderr, "%s: skyslurm: warning: %s; submitting on this cluster instead\n",
                 tool.c_str(), loaded.status().message().c_str());
    ExecReal(real, tool, jtool, args);
  }
  if (!loaded->settings.routing) {
    progress.Clear();
    ExecReal(real, tool, jtool, args);  // the site turned routing off
  }
  const bool home_on_error = loaded->settings.on_broker_error == config::OnBrokerError::kHome;

  // The job, exactly as sbatch reads it.
  job::RequestInput input;
  input.tool = jtool;
  input.args = args;
  input.env = env.vars();
  if (jtool == job::Tool::kSbatch) {
    job::OptionTable table(jtool);
    auto parsed = job::ParseArgs(table, args, job::OperandPolicy::kStopAtFirst, "command line");
    bool wrap = false;
    if (parsed.ok()) {
      for (const auto& o : parsed->options) wrap = wrap || (o.spec && o.spec->id == job::Opt::kWrap);
    }
    if (parsed.ok() && parsed->operands.empty() && !wrap) {
      input.script_text = std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
  }
  auto request = [&] {
    trace::Span span("parse the job");
    return job::ParseRequest(input);
  }();
  if (!request.ok()) return Fail(tool, request.status().message());
  // A --dependency naming sky jobs: only skyslurmd can wait for them.
  // Placed here (--sky-explain, --test-only), the job is weighed with what
  // sbatch would get once they answered it.
  job::Request placed = *request;
  auto sky_dependency = job::TakeSkyDependency(placed);
  if (!sky_dependency.ok()) return Fail(tool, sky_dependency.status().message());

  const std::string real_dir = fs::path(real).parent_path().string();
  if (jtool == job::Tool::kSbatch && !request->sky.explain && !request->test_only) {
    // skyslurmd places, submits and tracks every routed batch job (and fails
    // it over: docs/failover.md), deciding from its warm view of the clusters.
    if (request->sky.infra) {
      auto registry = cluster::ClusterRegistry::FromConfig(*loaded, env);
      if (registry.ok() && registry->Find(*request->sky.infra) == nullptr) {
        return Fail(tool, fmt::format("skyslurm: --sky-infra={}: no such cluster", *request->sky.infra));
      }
    }
    cli::DaemonClient client(env, *loaded, real_dir);
    progress.Say("handing the job to skyslurmd");
    Status up = [&] {
      trace::Span span("is skyslurmd up (GET /v1/health)");
      return client.EnsureRunning();
    }();
    const char* handed = std::getenv("SKYSLURM_SKY_ID");
    if (!up.ok() && handed != nullptr && LooksLikeSkyId(handed)) {
      // The shim sent the job to skyslurmd before its answer was lost: it
      // may have it. Placing it here too could make two jobs of one.
      progress.Clear();
      return Fail(tool, fmt::format("skyslurm: the job was handed to skyslurmd as {} and {}; it "
                                    "is not submitted a second time here: `skyslurm status {}` "
                                    "tells whether skyslurmd submitted it",
                                    handed, up.message(), handed));
    }
    if (up.ok()) {
      daemon::JobInput job_input{.tool = tool,
                                 .args = args,
                                 .script = request->script,
                                 .env = env.vars(),
                                 .cwd = fs::current_path().string(),
                                 .at_terminal = isatty(STDOUT_FILENO) == 1};
      return SubmitThroughDaemon(tool, *request, client, job_input, progress,
                                 loaded->settings.failover);
    } else if (!sky_dependency->conditions.empty()) {
      progress.Clear();
      return Fail(tool, fmt::format("skyslurm: --dependency={} names sky jobs, which only "
                                    "skyslurmd can wait for, and {}; nothing is submitted",
                                    *request->dependency, up.message()));
    } else if (request->sky.managed) {
      progress.Clear();
      if (!home_on_error) return Fail(tool, "skyslurm: " + up.message());
      std::fprintf(stderr, "%s: skyslurm: warning: %s; submitting on this cluster instead\n",
                   tool.c_str(), up.message().c_str());
      ExecReal(real, tool, jtool, args);
    } else if (!request->EffectiveByName("quiet")) {
      progress.Clear();
      std::fprintf(stderr, "%s: skyslurm: warning: %s; the job is placed once and not tracked\n",
                   tool.c_str(), up.message().c_str());
    }
  }
  progress.Say("asking the clusters");
  auto ws = cli::OpenWorkspace({}, real_dir, *loaded);  // the configuration read above
  if (!ws.ok()) {
    if (!home_on_error) return Fail(tool, "skyslurm: " + ws.status().message());
    progress.Clear();
    std::fprintf(stderr, "%s: skyslurm: warning: %s; submitting on this cluster instead\n",
                 tool.c_str(), ws.status().message().c_str());
    ExecReal(real, tool, jtool, args);
  }
  place::PlanOptions options;
  options.only = request->sky.clusters;
  options.policy = place::PlacementPolicy(*ws, options.probe_timeout);
  if (request->sky.infra) options.pinned = *request->sky.infra;
  if (request->sky.infra && ws->registry.Find(*request->sky.infra) == nullptr) {
    return Fail(tool, fmt::format("skyslurm: --sky-infra={}: no such cluster", *request->sky.infra));
  }
  place::Plan plan = place::MakePlan(placed, ws->handles, ws->catalog, ws->home(), options);
  progress.Clear();

  if (request->sky.explain) {
    const place::ExplainText view = place::RenderExplain(*request, *ws, plan, true);
    std::fputs(view.text.c_str(), stdout);
    cli::AppendAudit(
        *ws, place::AuditLine(plan, ws->config.paths.user, "explain", request->script_name));
    return view.some_cluster_can_run_it && plan.decision.chosen ? 0 : 1;
  }
  if (!plan.decision.chosen) return Fail(tool, "skyslurm: " + place::NoClusterMessage(plan));
  const place::Candidate& chosen = plan.candidates[*plan.decision.chosen];
  const translate::TranslatedJob& job = *plan.chosen_job();
  const std::size_t cluster_index = [&] {
    for (std::size_t i = 0; i < ws->handles.size(); ++i) {
      if (ws->handles[i].name == chosen.cluster) return i;
    }
    return std::size_t{0};
  }();
  place::ClusterHandle& target = ws->handles[cluster_index];
  const std::string sky_id = backend::NewSkyId(plan.now);
  // -Q/--quiet silences our notes as it does the command's own.
  const bool quiet = request->EffectiveByName("quiet") != nullptr;
  cli::AppendAudit(*ws,
                   place::AuditLine(plan, ws->config.paths.user, sky_id, request->script_name));
  if (!quiet) {
    for (const auto& note : job.caveats) {
      std::fprintf(stderr, "%s: skyslurm: warning: %s\n", tool.c_str(), note.c_str());
    }
  }

  if (jtool != job::Tool::kSbatch) {
    // salloc/srun: interactive. Home: the real command with the translated
    // options. A peer: the same through the user's ssh.
    // salloc has no --export: the job's variables travel in the environment.
    std::vector<std::string> argv = {tool};
    argv.insert(argv.end(), job.args.begin(), job.args.end());
    argv.insert(argv.end(), job.script_args.begin(), job.script_args.end());
    if (target.home) {
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      MarkRealCommand();
      setenv("SKYPILOT_TASK_ID", sky_id.c_str(), 1);
      setenv("SKYSLURM_CLUSTER", target.name.c_str(), 1);
      execv(real.c_str(), c.data());
      return Fail(tool, fmt::format("skyslurm: cannot run {}: {}", real, std::strerror(errno)));
    }
    const cluster::ClusterEntry* entry = ws->registry.Find(target.name);
    if (entry == nullptr || !entry->ssh) {
      return Fail(tool, fmt::format("skyslurm: {} is not reached over SSH; cannot run {} there",
                                    target.name, tool));
    }
    // OpenSSH reads the user's own clusters file, so that every setting of
    // it applies (ConnectTimeout, ServerAliveInterval, ProxyJump ...), as for
    // `ssh -F ~/.slurm/config <cluster>` by hand; host keys are checked as
    // skyslurm checks them (the file's StrictHostKeyChecking, default yes,
    // where OpenSSH's own default would ask).
    const std::string& clusters_file = ws->config.paths.clusters_file;
    const bool interactive = isatty(STDIN_FILENO) != 0;
    std::vector<std::string> ssh = {"ssh", "-F", clusters_file, interactive ? "-t" : "-T",
                                    // errors only: no "Connection to ... closed."
                                    "-o", "LogLevel=ERROR"};
    ssh.insert(ssh.end(),
               {"-o", "StrictHostKeyChecking=" + entry->ssh->strict_host_key_checking});
    if (!interactive) ssh.insert(ssh.end(), {"-o", "BatchMode=yes"});  // no prompt nobody sees
    ssh.push_back(entry->ssh->name);
    std::string remote = "env -u SKYSLURM_ANY_CLUSTER " +
                         ShellQuote("SKYPILOT_TASK_ID=" + sky_id) + " " +
                         ShellQuote("SKYSLURM_CLUSTER=" + target.name) + " " + ShellJoin(argv);
    if (!target.settings.workdir.empty()) remote = "cd " + ShellQuote(target.settings.workdir) + " && " + remote;
    ssh.push_back(remote);
    if (!quiet) {
      std::fprintf(stderr, "%s: skyslurm: running on cluster %s (%s)\n", tool.c_str(),
                   target.name.c_str(), plan.decision.summary.c_str());
    }
    std::vector<char*> c;
    for (auto& a : ssh) c.push_back(a.data());
    c.push_back(nullptr);
    execvp("ssh", c.data());
    return Fail(tool, fmt::format("skyslurm: cannot run ssh: {}", std::strerror(errno)));
  }

  // sbatch: submit there. --wait is ours to do (wherever the job runs), and
  // so are --quiet and --parsable: the cluster's sbatch returns at once,
  // saying the job id.
  const auto environment = env.vars();
  backend::SubmitSpec spec =
      place::SpecFor(*request, job, target, {.sky_id = sky_id, .env = &environment});
  spec.first_attempt = true;  // made just above; Submit is not retried here
  // The job's folder there (place/job_folder.h): measured, then copied
  // before the submission, as skyslurmd does (without its intent: this
  // process submits once, after the copy, or not at all).
  const sync::WorkdirPlan folder =
      place::PlanJobFolder(*ws, target, *request, sky_id, fs::current_path().string());
  place::ApplyJobFolder(folder, *request, &spec);
  std::string copied;
  // --test-only submits nothing: nothing is sent for it either.
  const bool send = !request->test_only;
  if (send && (folder.copy || folder.pack)) {
    LocalCommandRunner runner;
    if (Status fits = place::FolderFits(runner, *ws, folder, target.name, std::chrono::minutes(10));
        !fits.ok()) {
      return Fail(tool, "skyslurm: " + fits.message());
    }
    if (folder.pack) {
      auto packed =
          place::PackJobFolder(runner, *ws, folder, target.name, std::chrono::minutes(10));
      if (!packed.ok()) return Fail(tool, "skyslurm: " + packed.status().message());
      spec.folder_archive = std::move(*packed);
    }
  }
  if (send && folder.copy) {
    LocalCommandRunner runner;
    auto remote = place::RemoteOf(*ws, target.name);
    if (!remote.ok()) return Fail(tool, "skyslurm: " + remote.status().message());
    const std::string doing = fmt::format(
        "copying {} to {}", sync::Tilde(folder.source, ws->config.paths.home), target.name);
    progress.Say(doing);
    auto sent =
        sync::Push(runner, *remote, folder.source, folder.dest, std::chrono::minutes(10),
                   [&](int percent) { progress.Say(fmt::format("{}: {}%", doing, percent)); });
    progress.Clear();
    if (!sent.ok()) return Fail(tool, "skyslurm: " + sent.status().message());
    copied = " (" + sync::DescribeStats(*sent) + ")";
  }
  if (!target.home && !request->parsable && !request->test_only && !quiet) {
    std::fprintf(stderr, "%s: skyslurm: %s goes to cluster %s (%s); %s%s\n", tool.c_str(),
                 request->script_name.c_str(), target.name.c_str(),
                 plan.decision.summary.c_str(), folder.reason.c_str(), copied.c_str());
  }
  progress.Say(fmt::format("submitting to {}", target.name));
  auto key = target.backend->Submit(spec, std::chrono::seconds(30));
  progress.Clear();
  if (!key.ok()) return Fail(tool, key.status().message());
  if (request->parsable) {
    std::printf("%s;%s\n", key->job_id.c_str(), key->cluster.c_str());
  } else if (!quiet) {
    std::printf("Submitted batch job %s on cluster %s\n", key->job_id.c_str(), key->cluster.c_str());
  }
  std::fflush(stdout);
  if (!request->wait) return 0;
  // --wait: wait for the job wherever it runs; exit as sbatch --wait does.
  // A cluster that stops answering is waited for within a bound (wait_bound.h).
  const std::string job_name = fmt::format("{}:{}", key->cluster, key->job_id);
  std::optional<std::int64_t> minutes = TimeLimitMinutes(*request);
  if (!minutes) {  // the partition's own default, as the plan knows it
    const auto& inventory = plan.clusters[cluster_index].inventory;
    const cluster::Partition* p =
        inventory ? inventory->description.FindPartition(chosen.partition) : nullptr;
    if (p != nullptr) minutes = p->default_time_minutes ? p->default_time_minutes : p->max_time_minutes;
  }
  WaitBound bound(minutes, loaded->settings.failover.cluster_dead_after, std::time(nullptr));
  const std::time_t submitted = std::time(nullptr);
  while (true) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::time_t now = std::time(nullptr);
    auto jobs = target.backend->Jobs(std::chrono::seconds(10));
    if (!jobs.ok()) {
      if (auto error = bound.GiveUp(now, "cluster " + target.name, job_name,
                                    "skyslurm queue shows it once " + target.name +
                                        " answers again")) {
        return Fail(tool, "skyslurm: " + *error + " (" + jobs.status().message() + ")");
      }
      continue;
    }
    bound.Answered(now);
    bool seen = false;
    for (const auto& j : *jobs) {
      if (j.key.job_id != key->job_id) continue;
      seen = true;
      if (!backend::IsFinal(j.phase)) break;
      // Slurm keeps a wait status: the exit code above 8 bits, a signal below.
      return WaitStatusExit(j.state, j.exit_code);
    }
    // Gone from the queue without an end seen (purged, MinJobAge passed).
    if (!seen && now - submitted > 10) {
      return Fail(tool, fmt::format("skyslurm: {} left the queue of {} unseen; how it ended is "
                                    "not known",
                                    job_name, target.name));
    }
  }
}

int RunClient(const std::string& tool, const std::vector<std::string>& args) {
  if (tool != "squeue" && tool != "sacct" && tool != "scontrol" && tool != "scancel") {
    return Fail("skyslurm", "__slurm: unknown command " + tool);
  }
  auto env = config::Environment::FromProcess();
  auto loaded = config::LoadConfig(env, cli::GlobalSettingFlags());
  const std::string real =
      RealCommandPath(tool, loaded.ok() ? loaded->settings : config::Settings{});
  auto exec_real = [&](const std::string& why) {
    if (real.empty()) return Fail(tool, "skyslurm: cannot find the real " + tool + " on PATH");
    std::fprintf(stderr, "%s: skyslurm: warning: %s; routed jobs are not shown\n", tool.c_str(),
                 why.c_str());
    std::vector<std::string> argv = {tool};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    setenv("SKYSLURM_CLIENT_DIRECT", "1", 1);
    execv(real.c_str(), c.data());
    return Fail(tool, "skyslurm: cannot run " + real + ": " + std::strerror(errno));
  };
  if (!loaded.ok()) return exec_real(loaded.status().message());
  cli::DaemonClient client(env, *loaded, fs::path(real).parent_path().string());
  if (Status up = client.EnsureRunning(); !up.ok()) return exec_real(up.message());
  Json::Value body(Json::objectValue);
  body["tool"] = tool;
  body["args"] = Json::Value(Json::arrayValue);
  for (const auto& a : args) body["args"].append(a);
  body["env"] = Json::Value(Json::objectValue);
  for (const auto& [name, value] : env.vars()) body["env"][name] = value;
  auto answer = client.Post("/v1/slurm", body);
  if (!answer.ok()) return Fail(tool, "skyslurm: " + answer.status().message());
  std::fputs((*answer)["stderr"].asString().c_str(), stderr);
  std::fflush(stderr);
  std::fputs((*answer)["stdout"].asString().c_str(), stdout);
  std::fflush(stdout);
  return (*answer)["exit_code"].asInt();
}

}  // namespace skyslurm::route
