#include "shim/route/route_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>

#include "broker/backend/backend.h"
#include "broker/cluster/registry.h"
#include "broker/config/login_session.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/job/request.h"
#include "broker/job/sky_dependency.h"
#include "broker/place/audit.h"
#include "broker/place/explain_view.h"
#include "broker/place/planner.h"
#include "broker/place/spending.h"
#include "broker/util/trace.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"
#include "shim/cli/login_command.h"
#include "shim/route/daemon_route.h"
#include "shim/route/direct_route.h"
#include "shim/route/route_support.h"

namespace skyslurm::route {
namespace {

namespace fs = std::filesystem;

// One routed command: its configuration, the job as sbatch reads it, then
// skyslurmd's or its own placement.
class Route {
 public:
  Route(std::string tool, job::Tool jtool, const std::vector<std::string>& args)
      : tool_(std::move(tool)), jtool_(jtool), args_(args), progress_(tool_) {}

  int Run();

 private:
  // The configuration, and the real command to fall back on; nullopt when
  // it is read and routing is on (else the command's exit status, or the
  // real command in place of this process).
  std::optional<int> Load();
  // The job, exactly as sbatch reads it.
  Result<job::Request> ReadJob();
  // A batch job handed to skyslurmd; nullopt when none answers and this
  // command places it itself (with a warning).
  std::optional<int> HandToDaemon(const job::Request& request,
                                  const job::SkyDependency& sky_dependency);
  // Placed and submitted (or explained) by this command.
  int PlaceHere(const job::Request& request, const job::Request& placed);
  Status LoginOnTheTerminal(const job::Request& request, const cli::Workspace& ws) const;
  void ExecRealWithWarning(const std::string& why);

  const std::string tool_;
  const job::Tool jtool_;
  const std::vector<std::string>& args_;
  TracePrinter tracer_;
  Progress progress_;
  config::Environment env_ = config::Environment::FromProcess();
  Result<config::LoadedConfig> loaded_ = UnavailableError("not read");
  std::string real_;
  bool home_on_error_ = false;
};

void Route::ExecRealWithWarning(const std::string& why) {
  progress_.Clear();
  std::fprintf(stderr, "%s: skyslurm: warning: %s; submitting on this cluster instead\n",
               tool_.c_str(), why.c_str());
  ExecReal(real_, tool_, jtool_, args_);
}

std::optional<int> Route::Load() {
  progress_.Say("reading the configuration");
  loaded_ = [&] {
    trace::Span span("read the configuration");
    return config::LoadConfig(env_, cli::GlobalSettingFlags());
  }();
  real_ = RealCommandPath(tool_, loaded_.ok() ? loaded_->settings : config::Settings{});
  if (real_.empty()) return Fail(tool_, "skyslurm: cannot find the real " + tool_ + " on PATH");
  if (!loaded_.ok()) ExecRealWithWarning(loaded_.status().message());
  if (!loaded_->settings.routing) {
    progress_.Clear();
    ExecReal(real_, tool_, jtool_, args_);  // the site turned routing off
  }
  home_on_error_ = loaded_->settings.on_broker_error == config::OnBrokerError::kHome;
  return std::nullopt;
}

Result<job::Request> Route::ReadJob() {
  job::RequestInput input;
  input.tool = jtool_;
  input.args = args_;
  input.env = env_.vars();
  if (jtool_ == job::Tool::kSbatch) {
    job::OptionTable table(jtool_);
    auto parsed = job::ParseArgs(table, args_, job::OperandPolicy::kStopAtFirst, "command line");
    bool wrap = false;
    if (parsed.ok()) {
      for (const auto& o : parsed->options)
        wrap = wrap || (o.spec && o.spec->id == job::Opt::kWrap);
    }
    if (parsed.ok() && parsed->operands.empty() && !wrap) {
      input.script_text = std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
  }
  return job::ParseRequest(input);
}

std::optional<int> Route::HandToDaemon(const job::Request& request,
                                       const job::SkyDependency& sky_dependency) {
  // skyslurmd places, submits and tracks every routed batch job (and fails
  // it over: docs/failover.md), deciding from its warm view of the clusters.
  if (request.sky.infra) {
    auto registry = cluster::ClusterRegistry::FromConfig(*loaded_, env_);
    if (registry.ok() && registry->Find(*request.sky.infra) == nullptr) {
      return Fail(tool_,
                  fmt::format("skyslurm: --sky-infra={}: no such cluster", *request.sky.infra));
    }
  }
  cli::DaemonClient client(env_, *loaded_, fs::path(real_).parent_path().string());
  progress_.Say("handing the job to skyslurmd");
  Status up = [&] {
    trace::Span span("is skyslurmd up (GET /v1/health)");
    return client.EnsureRunning();
  }();
  const char* handed = std::getenv("SKYSLURM_SKY_ID");
  if (!up.ok() && handed != nullptr && LooksLikeSkyId(handed)) {
    // The shim sent the job to skyslurmd before its answer was lost: it
    // may have it. Placing it here too could make two jobs of one.
    progress_.Clear();
    return Fail(tool_, fmt::format("skyslurm: the job was handed to skyslurmd as {} and {}; it "
                                   "is not submitted a second time here: `skyslurm status {}` "
                                   "tells whether skyslurmd submitted it",
                                   handed, up.message(), handed));
  }
  if (up.ok()) {
    daemon::JobInput job_input{.tool = tool_,
                               .args = args_,
                               .script = request.script,
                               .env = env_.vars(),
                               .cwd = fs::current_path().string(),
                               .at_terminal = isatty(STDOUT_FILENO) == 1};
    return SubmitThroughDaemon(tool_, request, client, job_input, progress_,
                               loaded_->settings.failover, loaded_->settings.submit_output);
  }
  progress_.Clear();
  if (up.code() == StatusCode::kPermissionDenied) {
    // Someone else's folder or listener at the socket's path is not a
    // broker that failed: the user is told, and nothing goes anywhere.
    return Fail(tool_, fmt::format("{}; nothing is submitted", up.message()));
  }
  if (!sky_dependency.conditions.empty()) {
    return Fail(tool_, fmt::format("skyslurm: --dependency={} names sky jobs, which only "
                                   "skyslurmd can wait for, and {}; nothing is submitted",
                                   *request.dependency, up.message()));
  }
  if (request.sky.managed) {
    if (!home_on_error_) return Fail(tool_, "skyslurm: " + up.message());
    ExecRealWithWarning(up.message());
  }
  if (!request.EffectiveByName("quiet")) {
    std::fprintf(stderr, "%s: skyslurm: warning: %s; the job is placed once and not tracked\n",
                 tool_.c_str(), up.message().c_str());
  }
  return std::nullopt;
}

Status Route::LoginOnTheTerminal(const job::Request& request, const cli::Workspace& ws) const {
  // salloc/srun pinned to a cluster whose bastion asks for a one-time code,
  // from a terminal: the code is asked here once, as ssh would, and the
  // session is opened for the daemon and the next jobs too.
  if (jtool_ == job::Tool::kSbatch || !request.sky.infra) return OkStatus();
  if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDERR_FILENO) == 0) return OkStatus();
  const cluster::ClusterEntry* entry = ws.registry.Find(*request.sky.infra);
  if (entry == nullptr || !entry->session || !ws.config.settings.For(entry->name).one_time_code) {
    return OkStatus();
  }
  if (config::SessionUntil(*entry->session, std::chrono::system_clock::now())) return OkStatus();
  std::fprintf(stderr, "%s: skyslurm: %s asks for a one-time code (skyslurm login %s)\n",
               tool_.c_str(), entry->name.c_str(), entry->name.c_str());
  if (cli::RunLogin(entry->name, /*report_on_stderr=*/true) != 0) {
    return FailedPreconditionError(config::NeedsLoginReason(entry->name));
  }
  return OkStatus();
}

int Route::PlaceHere(const job::Request& request, const job::Request& placed) {
  progress_.Say("asking the clusters");
  const std::string real_dir = fs::path(real_).parent_path().string();
  auto ws = cli::OpenWorkspace({}, real_dir, *loaded_);  // the configuration read above
  if (!ws.ok()) {
    if (!home_on_error_) return Fail(tool_, "skyslurm: " + ws.status().message());
    ExecRealWithWarning(ws.status().message());
  }
  if (Status st = LoginOnTheTerminal(request, *ws); !st.ok()) {
    return Fail(tool_, "skyslurm: " + st.message());
  }
  place::PlanOptions options;
  options.only = request.sky.clusters;
  options.policy = place::PlacementPolicy(*ws, options.probe_timeout);
  if (request.sky.infra) options.pinned = *request.sky.infra;
  if (request.sky.infra && ws->registry.Find(*request.sky.infra) == nullptr) {
    return Fail(tool_,
                fmt::format("skyslurm: --sky-infra={}: no such cluster", *request.sky.infra));
  }
  place::Plan plan = place::MakePlan(placed, ws->handles, ws->catalog, ws->home(), options);
  progress_.Clear();
  if (request.sky.explain) {
    const place::ExplainText view =
        place::RenderExplain(request, *ws, plan, true, fs::current_path().string());
    std::fputs(view.text.c_str(), stdout);
    cli::AppendAudit(*ws,
                     place::AuditLine(plan, ws->config.paths.user, "explain", request.script_name));
    return view.some_cluster_can_run_it && plan.decision.chosen ? 0 : 1;
  }
  if (!plan.decision.chosen) return Fail(tool_, "skyslurm: " + place::NoClusterMessage(plan));
  const place::Candidate& chosen = plan.candidates[*plan.decision.chosen];
  std::size_t index = 0;
  while (index + 1 < ws->handles.size() && ws->handles[index].name != chosen.cluster) ++index;
  // -Q/--quiet silences our notes as it does the command's own.
  const DirectJob job{tool_,
                      request,
                      *ws,
                      plan,
                      ws->handles[index],
                      index,
                      backend::NewSkyId(plan.now),
                      request.EffectiveByName("quiet") != nullptr};
  cli::AppendAudit(*ws,
                   place::AuditLine(plan, ws->config.paths.user, job.sky_id, request.script_name));
  if (!job.quiet) {
    for (const auto& note : plan.chosen_job()->caveats) {
      std::fprintf(stderr, "%s: skyslurm: warning: %s\n", tool_.c_str(), note.c_str());
    }
  }
  if (jtool_ != job::Tool::kSbatch) return RunInteractive(job, real_);
  return SubmitDirect(job, env_, progress_, loaded_->settings);
}

int Route::Run() {
  // The plugin's guard against handing an invocation over twice has done
  // its work; it must not travel into the job's environment.
  unsetenv("SKYSLURM_PLUGIN_REEXEC");
  trace::Install traced(tracer_.trace());
  if (auto done = Load()) return *done;
  auto request = [&] {
    trace::Span span("parse the job");
    return ReadJob();
  }();
  if (!request.ok()) return Fail(tool_, request.status().message());
  // A --dependency naming sky jobs: only skyslurmd can wait for them.
  // Placed here (--sky-explain, --test-only), the job is weighed with what
  // sbatch would get once they answered it.
  job::Request placed = *request;
  auto sky_dependency = job::TakeSkyDependency(placed);
  if (!sky_dependency.ok()) return Fail(tool_, sky_dependency.status().message());
  if (jtool_ == job::Tool::kSbatch && !request->sky.explain && !request->test_only) {
    if (auto done = HandToDaemon(*request, *sky_dependency)) return *done;
  }
  return PlaceHere(*request, placed);
}

}  // namespace

int RunRoute(const std::string& mode, const std::vector<std::string>& args) {
  job::Tool jtool = job::Tool::kSbatch;
  if (mode == "salloc") {
    jtool = job::Tool::kSalloc;
  } else if (mode == "srun") {
    jtool = job::Tool::kSrun;
  } else if (mode != "sbatch") {
    return Fail("skyslurm", "__route: unknown mode " + mode);
  }
  return Route(mode, jtool, args).Run();
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
    setenv("SKYSLURM_CLIENT_DIRECT", "1", 1);
    Exec(std::move(argv), real);
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
