#include "broker/daemon/api/api_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <json/json.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "broker/daemon/api/adoption.h"
#include "broker/daemon/api/metrics.h"
#include "broker/daemon/dashboard/dashboard_server.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/daemon/slurm_front/submit_text.h"
#include "broker/util/strings.h"
#include "broker/util/trace.h"
#include "skyslurm/version.h"

namespace skyslurm::daemon {
namespace {

constexpr std::size_t kApiThreads = 64;

Json::Value JobJson(const store::SkyJob& j) {
  Json::Value v(Json::objectValue);
  v["sky_id"] = j.sky_id;
  v["owner"] = j.owner;
  v["state"] = j.state;
  v["reason"] = j.reason;
  v["cluster"] = j.cluster;
  v["native_id"] = j.native_id;
  v["managed"] = j.managed;
  v["retry_on_failure"] = j.retry_on_failure;
  v["restarts"] = j.restarts;
  v["moves"] = j.moves;
  v["created"] = Json::Int64{j.created};
  v["updated"] = Json::Int64{j.updated};
  v["submitted"] = Json::Int64{j.submitted};
  v["expected_start"] = Json::Int64{j.expected_start};
  v["started"] = Json::Int64{j.started};
  v["ended"] = Json::Int64{j.ended};
  v["exit_code"] = j.exit_code;
  if (j.global_id != 0) v["job_id"] = Json::UInt64{j.global_id};
  if (!j.parent.empty()) v["parent"] = j.parent;
  if (!j.indices.empty()) v["indices"] = j.indices;
  if (!j.name.empty()) v["name"] = j.name;
  return v;
}

int HttpStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return 503;
    default:
      return 500;
  }
}

void Reply(httplib::Response& res, int status, const Json::Value& body) {
  res.status = status;
  res.set_content(WriteJson(body) + "\n", "application/json");
}

// `parsed`: the input as read (Submit says what is wrong with one that
// cannot be read).
std::string NotForDirectSubmission(const JobInput& input,
                                   const Result<std::shared_ptr<const ParsedJob>>& parsed) {
  if (input.tool != "sbatch") return "only sbatch is taken directly";
  if (!parsed.ok()) return "";
  const job::Request& request = (*parsed)->request;
  if (request.sky.explain) return "--sky-explain";
  if (request.test_only) return "--test-only";
  if (request.wait) return "--wait";
  return "";
}

// Why the process `pid` (a request's peer) is not this user; nullopt when
// it is. Its effective uid, from /proc (the pid is the peer's while the
// request is answered: it waits for the answer).
std::optional<std::string> PeerUidProblem(int pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (pid > 0 && std::getline(status, line)) {
    if (!line.starts_with("Uid:")) continue;
    std::istringstream ids(line.substr(4));
    unsigned long real = 0, effective = 0;
    if (ids >> real >> effective && effective == ::geteuid()) return std::nullopt;
    return fmt::format("a process of uid {} (pid {}) is not this user (uid {})", effective, pid,
                       ::geteuid());
  }
  return fmt::format("cannot tell who asked (pid {})", pid);
}

void ReplyError(httplib::Response& res, const Status& s) {
  Json::Value v(Json::objectValue);
  v["error"] = s.message();
  Reply(res, HttpStatus(s), v);
}

}  // namespace

ApiServer::ApiServer(JobManager& manager, DashboardOptions dashboard, SiteAccess* site)
    : manager_(manager),
      site_(site),
      front_(manager),
      dashboard_data_(manager),
      server_(std::make_unique<httplib::Server>()),
      last_request_(std::time(nullptr)),
      dashboard_options_(std::move(dashboard)) {
  auto& s = *server_;
  // A thread per client at once, up to a burst of submissions from many
  // shells (each mostly waiting for a cluster); beyond that they queue on
  // the socket's backlog and are served in turn.
  s.new_task_queue = [] { return new httplib::ThreadPool(kApiThreads); };
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // A user's own daemon: only the user's own processes are served,
    // whatever the socket's mode became (on a UNIX socket httplib gives the
    // peer's pid, from SO_PEERCRED, as the remote port). A site's admits
    // each request in its handler (Route), once its body is read: the
    // credential binds it.
    if (site_ == nullptr) {
      if (auto problem = PeerUidProblem(req.remote_port)) {
        ReplyError(res, PermissionDeniedError(*problem));
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    Touch();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  AddRoutes(s, Routes::kAll);
  // Only on the socket: the dashboard's own switch, and the daemon's.
  Route(s).Post("/v1/dashboard", [this](const httplib::Request& req, httplib::Response& res) {
    // A site's dashboard shows every job: its admins' for now.
    if (Status st = AdminsOnly("the dashboard"); !st.ok()) return ReplyError(res, st);
    auto body = req.body.empty() ? Result<Json::Value>(Json::Value(Json::objectValue))
                                 : ParseJson(req.body);
    if (!body.ok()) return ReplyError(res, body.status());
    const int port = (*body).isObject() ? (*body).get("port", 0).asInt() : 0;
    if (port < 0 || port > 65535) {
      return ReplyError(res, InvalidArgumentError("'port' must be 0 (any free port) to 65535"));
    }
    std::lock_guard lock(dashboard_mu_);
    if (!dashboard_) {
      dashboard_ = std::make_unique<DashboardServer>(
          [this](httplib::Server& server) { AddRoutes(server, Routes::kDashboard); },
          [this] { Touch(); }, dashboard_options_);
      dashboard_made_ = dashboard_.get();
    }
    auto served = dashboard_->Start(port);
    if (!served.ok()) return ReplyError(res, served.status());
    Json::Value v(Json::objectValue);
    v["url"] = dashboard_->NewLoginUrl();
    v["port"] = *served;
    v["address"] = dashboard_->address();
    Reply(res, 200, v);
  });
  Route(s).Post("/v1/dashboard/stop", [this](const httplib::Request&, httplib::Response& res) {
    if (Status st = AdminsOnly("stopping the dashboard"); !st.ok()) return ReplyError(res, st);
    std::lock_guard lock(dashboard_mu_);
    Json::Value v(Json::objectValue);
    v["stopped"] = dashboard_ != nullptr && dashboard_->serving();
    if (dashboard_) dashboard_->Stop();
    Reply(res, 200, v);
  });
  Route(s).Post("/v1/shutdown", [this](const httplib::Request&, httplib::Response& res) {
    if (Status st = AdminsOnly("shutting skyslurmd down"); !st.ok()) return ReplyError(res, st);
    Reply(res, 200, Json::Value(Json::objectValue));
    if (on_shutdown_) on_shutdown_();
  });
}

void ApiServer::AddRoutes(httplib::Server& s, Routes routes) {
  AddDashboardRoutes(s);
  AddJobRoutes(s);
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        ReplyError(res, InternalError(what));
      });
  if (routes == Routes::kDashboard) return;
  // The clients' own: a browser's session never submits a job or runs a
  // Slurm command (a stolen one could do nothing the pages cannot).
  AddClientRoutes(s);
  AddMetricsRoute(s);
  AddAdoptRoute(s);
}

// A user's own store moved into the site's (`skyslurm site adopt`,
// adoption.h): each job the asker's, whatever the body says.
void ApiServer::AddAdoptRoute(httplib::Server& s) {
  Route(s).Post("/v1/adopt", [this](const httplib::Request& req, httplib::Response& res) {
    if (site_ == nullptr || !CurrentViewer()) {
      return ReplyError(res, FailedPreconditionError("only a site's skyslurmd adopts jobs"));
    }
    auto body = ParseJson(req.body);
    if (!body.ok()) return ReplyError(res, body.status());
    if (!(*body)["jobs"].isArray()) {
      return ReplyError(res, InvalidArgumentError("'jobs' must be a list"));
    }
    Json::Value v(Json::objectValue);
    v["adopted"] = Json::Value(Json::arrayValue);
    v["present"] = Json::Value(Json::arrayValue);
    for (const Json::Value& item : (*body)["jobs"]) {
      auto adopted = AdoptedJobFromJson(item);
      if (!adopted.ok()) return ReplyError(res, adopted.status());
      auto taken = manager_.Adopt(adopted->job, adopted->copies, adopted->events, adopted->intents,
                                  CurrentViewer()->name);
      if (!taken.ok()) return ReplyError(res, taken.status().WithContext(adopted->job.sky_id));
      v[*taken ? "adopted" : "present"].append(adopted->job.sky_id);
    }
    Reply(res, 200, v);
  });
}

void ApiServer::AddMetricsRoute(httplib::Server& s) {
  // Counts for Prometheus (metrics.h): asked without a credential, as a
  // scraper asks; they name no job and no user.
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    MetricsInput in;
    in.jobs = manager_.store().JobCounts().value_or({});
    in.events = manager_.store().EventCounts().value_or({});
    for (const auto& c : manager_.ClusterStates()) {
      in.clusters.push_back({c.name, c.reachable, c.probe_seconds});
    }
    in.takeovers = manager_.takeovers();
    in.submissions_refused = submissions_refused_.load();
    in.submissions = &submissions_;
    in.store = &manager_.store().latency();
    res.set_content(RenderMetrics(in), "text/plain; version=0.0.4");
  });
}

void ApiServer::AddClientRoutes(httplib::Server& s) {
  // Whether it serves: asked before every routed submission, so a site's
  // answers it without a credential (it names no job and no user).
  s.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
    Json::Value v(Json::objectValue);
    v["version"] = kVersion;
    v["pid"] = static_cast<Json::Int64>(::getpid());
    v["live_jobs"] = static_cast<Json::UInt64>(manager_.LiveJobs());
    Reply(res, 200, v);
  });
  Route(s).Post("/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    auto body = ParseJson(req.body);
    if (!body.ok()) return ReplyError(res, body.status());
    if (!body->isObject() || !(*body)["sky_id"].isString()) {
      return ReplyError(res, InvalidArgumentError("'sky_id' must be a string"));
    }
    // SKYSLURM_TRACE on the client: this request's spans go back with the
    // answer, on the client's clock (the same machine's monotonic clock).
    std::shared_ptr<trace::Trace> tr;
    if ((*body).get("trace", false).asBool()) {
      const auto origin_ns = (*body).get("trace_origin_ns", Json::Int64{0}).asInt64();
      tr = std::make_shared<trace::Trace>(
          "skyslurmd",
          origin_ns > 0 ? std::chrono::steady_clock::time_point(std::chrono::nanoseconds(origin_ns))
                        : std::chrono::steady_clock::now());
    }
    trace::Install install(tr);
    auto input = JobInputFromJson((*body)["input"]);
    if (!input.ok()) return ReplyError(res, input.status());
    // The job read once: for the answer, and for the submission itself.
    const auto parsed = ParseJob(*input);
    if ((*body).get("direct", false).asBool()) {
      // The shim, straight from the user's shell: what only `skyslurm __route`
      // does (explain, --test-only, --wait, routing turned off) goes back to it
      // untouched.
      std::string why =
          manager_.routing() ? NotForDirectSubmission(*input, parsed) : "routing is off";
      if (!why.empty()) {
        Json::Value v(Json::objectValue);
        v["error"] = why;
        v["route"] = true;
        return Reply(res, 422, v);
      }
    }
    // A site's daemon: the job is the asker's, whatever the request says.
    SubmitRequest r{(*body)["sky_id"].asString(), std::move(*input),
                    (*body).get("managed", false).asBool(), parsed.ok() ? *parsed : nullptr,
                    CurrentViewer() ? CurrentViewer()->name : ""};
    const auto started = std::chrono::steady_clock::now();
    auto answer = manager_.Submit(r);
    if (!answer.ok()) {
      ++submissions_refused_;
      return ReplyError(res, answer.status());
    }
    submissions_.Observe(std::chrono::steady_clock::now() - started);
    Json::Value v(Json::objectValue);
    // What the command prints, for clients that print it as it is.
    if (parsed.ok()) {
      // The submitting command's form (its environment and configuration),
      // never the daemon's own: a client that does not say gets its
      // SKYSLURM_SUBMIT_OUTPUT, else the configuration files' form.
      config::SubmitOutput form = manager_.submit_output();
      if (auto e = r.input.env.find("SKYSLURM_SUBMIT_OUTPUT"); e != r.input.env.end()) {
        if (auto asked = config::ParseSubmitOutput(e->second); asked.ok()) form = *asked;
      }
      if (const Json::Value& said = (*body)["submit_output"]; said.isString()) {
        if (auto asked = config::ParseSubmitOutput(said.asString()); asked.ok()) form = *asked;
      }
      const SubmitText text = RenderSubmitted(r.input.tool, (*parsed)->request, *answer, form);
      v["stdout"] = text.out;
      v["stderr"] = text.err;
      v["exit_code"] = text.exit_code;
    }
    if (tr) v["trace"] = tr->Render();
    v["job"] = JobJson(answer->job);
    v["summary"] = answer->summary;
    v["workdir"] = answer->workdir;
    v["folder"] = answer->folder;
    v["home"] = answer->home;
    v["notes"] = Json::Value(Json::arrayValue);
    for (const auto& note : answer->notes) v["notes"].append(note);
    if (!answer->parts.empty()) {
      v["parts"] = Json::Value(Json::arrayValue);
      for (const auto& p : answer->parts) v["parts"].append(JobJson(p));
    }
    Reply(res, 201, v);
  });
  // squeue, sacct, scontrol, scancel as the shims run them (slurm_front.h).
  Route(s).Post("/v1/slurm", [this](const httplib::Request& req, httplib::Response& res) {
    auto body = ParseJson(req.body);
    if (!body.ok()) return ReplyError(res, body.status());
    const Json::Value& b = *body;
    if (!b.isObject() || !b["tool"].isString() || !b["args"].isArray()) {
      return ReplyError(res, InvalidArgumentError("'tool' must be a string and 'args' a list"));
    }
    const std::string tool = b["tool"].asString();
    if (tool != "squeue" && tool != "sacct" && tool != "scontrol" && tool != "scancel") {
      return ReplyError(res,
                        InvalidArgumentError("'tool' must be squeue, sacct, scontrol or scancel"));
    }
    std::vector<std::string> args;
    for (const auto& a : b["args"]) args.push_back(a.asString());
    std::map<std::string, std::string> env;
    if (b["env"].isObject()) {
      for (const auto& name : b["env"].getMemberNames()) env[name] = b["env"][name].asString();
    }
    const ClientCommandAnswer a = front_.Run(tool, args, env);
    Json::Value v(Json::objectValue);
    v["stdout"] = a.out;
    v["stderr"] = a.err;
    v["exit_code"] = a.exit_code;
    Reply(res, 200, v);
  });
  Route(s).Get("/v1/jobs", [this](const httplib::Request&, httplib::Response& res) {
    Json::Value v(Json::objectValue);
    v["jobs"] = Json::Value(Json::arrayValue);
    for (const auto& j : manager_.List()) v["jobs"].append(JobJson(j));
    Reply(res, 200, v);
  });
  Route(s).Get("/v1/queue", [this](const httplib::Request& req, httplib::Response& res) {
    Json::Value v(Json::objectValue);
    v["jobs"] = Json::Value(Json::arrayValue);
    // expand: a spread array's parts each as a row.
    for (const auto& r : manager_.Queue(req.has_param("expand"))) {
      Json::Value row(Json::objectValue);
      row["sky_id"] = r.sky_id;
      row["cluster"] = r.cluster;
      row["native_id"] = r.native_id;
      row["user"] = r.user;
      row["state"] = r.state;
      row["reason"] = r.reason;
      row["name"] = r.name;
      row["since"] = Json::Int64{r.since};
      if (!r.tasks.empty()) {
        row["tasks"] = Json::Value(Json::objectValue);
        for (const auto& [phase, n] : r.tasks) row["tasks"][phase] = Json::Int64{n};
      }
      v["jobs"].append(row);
    }
    v["clusters"] = Json::Value(Json::arrayValue);
    for (const auto& c : manager_.ClusterStates()) {
      Json::Value cv(Json::objectValue);
      cv["name"] = c.name;
      cv["answered"] = Json::Int64{c.answered};
      cv["error"] = c.error;
      v["clusters"].append(cv);
    }
    Reply(res, 200, v);
  });
}

// One job's history, output and cancel: the commands' and the dashboard's.
void ApiServer::AddJobRoutes(httplib::Server& s) {
  Route(s).Get(R"(/v1/jobs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    auto job = manager_.Find(req.matches[1]);
    if (!job.ok()) return ReplyError(res, job.status());
    Json::Value v(Json::objectValue);
    v["job"] = JobJson(*job);
    v["activity"] = manager_.Activity(job->sky_id);
    v["events"] = Json::Value(Json::arrayValue);
    for (const auto& e : manager_.History(job->sky_id)) {
      Json::Value ev(Json::objectValue);
      ev["time"] = Json::Int64{e.time};
      ev["kind"] = e.kind;
      ev["cluster"] = e.cluster;
      ev["native_id"] = e.native_id;
      ev["detail"] = e.detail;
      v["events"].append(ev);
    }
    if (auto parts = manager_.PartsOf(job->sky_id); !parts.empty()) {
      v["parts"] = Json::Value(Json::arrayValue);
      for (const auto& p : parts) v["parts"].append(JobJson(p));
    }
    v["copies"] = Json::Value(Json::arrayValue);
    for (const auto& c : manager_.CopiesOf(job->sky_id)) {
      Json::Value cv(Json::objectValue);
      cv["cluster"] = c.cluster;
      cv["native_id"] = c.native_id;
      cv["partition"] = c.partition;
      cv["state"] = c.state;
      cv["submitted"] = Json::Int64{c.submitted};
      cv["args"] = c.args;
      cv["script"] = c.script;
      cv["workdir"] = c.workdir;
      cv["source"] = c.source;
      v["copies"].append(cv);
    }
    // On an elastic cluster, when asked: what it has cost so far (the bill
    // is read from the cluster, not for every progress poll).
    const JobManager::JobCost cost =
        req.has_param("cost") ? manager_.CostOf(*job) : JobManager::JobCost{};
    if (cost.billed) {
      Json::Value cj(Json::objectValue);
      cj["amount"] = cost.amount;
      cj["currency"] = cost.currency;
      cj["error"] = cost.error;
      cj["copies"] = Json::Value(Json::arrayValue);
      for (const auto& [copy, amount] : cost.copies) {
        Json::Value one(Json::objectValue);
        one["cluster"] = copy.cluster;
        one["native_id"] = copy.native_id;
        one["amount"] = amount;
        cj["copies"].append(one);
      }
      v["cost"] = cj;
    }
    Reply(res, 200, v);
  });
  Route(s).Post(R"(/v1/jobs/([^/]+)/cancel)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  Status st = manager_.Cancel(req.matches[1]);
                  if (!st.ok()) return ReplyError(res, st);
                  Json::Value v(Json::objectValue);
                  v["cancelled"] = std::string(req.matches[1]);
                  Reply(res, 200, v);
                });
  Route(s).Get(
      R"(/v1/jobs/([^/]+)/output)", [this](const httplib::Request& req, httplib::Response& res) {
        // offset: only what follows the first `offset` bytes (a page tailing
        // the log asks for what is new), read where the file is, at most
        // kOutputPart at a time; size: the whole output's.
        std::size_t offset = 0;
        if (req.has_param("offset")) {
          const std::string text = req.get_param_value("offset");
          const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), offset);
          if (ec != std::errc() || end != text.data() + text.size()) {
            return ReplyError(res, InvalidArgumentError("'offset' must be a number of bytes"));
          }
        }
        constexpr std::size_t kOutputPart = std::size_t{4} << 20;
        auto out = manager_.Output(req.matches[1], offset, kOutputPart);
        if (!out.ok()) return ReplyError(res, out.status());
        Json::Value v(Json::objectValue);
        // Cut between characters: the rest of one split here comes next time.
        const std::string_view rest = out->bytes;
        const std::size_t whole = Utf8WholePrefix(rest);
        v["size"] = Json::UInt64{offset <= out->size ? offset + whole : out->size};
        // Cut at the part's size: the rest is there to ask for at once.
        v["more"] = out->bytes.size() >= kOutputPart;
        v["output"] = std::string(rest.substr(0, whole));
        auto job = manager_.Find(req.matches[1]);
        v["state"] = job.ok() ? job->state : "";
        v["final"] = job.ok() && store::IsFinalState(job->state);
        Reply(res, 200, v);
      });
}

// The dashboard's answers (docs/dashboard.md), on the socket too.
void ApiServer::AddDashboardRoutes(httplib::Server& s) {
  Route(s).Get("/v1/clusters", [this](const httplib::Request&, httplib::Response& res) {
    Json::Value v(Json::objectValue);
    v["time"] = Json::Int64{std::time(nullptr)};
    v["clusters"] = Json::Value(Json::arrayValue);
    for (const ClusterCard& c : dashboard_data_.ClusterCards()) {
      v["clusters"].append(ClusterCardJson(c, manager_.currency()));
    }
    Reply(res, 200, v);
  });
  Route(s).Get("/v1/gpu-history", [this](const httplib::Request& req, httplib::Response& res) {
    double hours = 6;
    if (req.has_param("hours")) {
      const std::string text = req.get_param_value("hours");
      char* end = nullptr;
      hours = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !(hours > 0) || hours > 48) {
        return ReplyError(res,
                          InvalidArgumentError("'hours' must be a number above 0, at most 48"));
      }
    }
    const std::time_t since = std::time(nullptr) - static_cast<std::time_t>(hours * 3600);
    Json::Value v(Json::objectValue);
    v["interval"] = dashboard_data_.gpu_sample_every();
    v["samples"] = Json::Value(Json::objectValue);
    for (const store::GpuSample& g : dashboard_data_.GpuHistory(since)) {
      Json::Value point(Json::arrayValue);
      point.append(Json::Int64{g.time});
      point.append(Json::Int64{g.total - g.free});  // busy (or out of use)
      point.append(Json::Int64{g.free});
      point.append(Json::Int64{g.pending});
      v["samples"][g.cluster].append(point);
    }
    Reply(res, 200, v);
  });
  Route(s).Get("/v1/table", [this](const httplib::Request& req, httplib::Response& res) {
    std::map<std::string, std::string> params;
    for (const auto& [name, value] : req.params) params[name] = value;
    auto query = ParseTableQuery(params);
    if (!query.ok()) return ReplyError(res, query.status());
    const TablePage page = QueryTable(dashboard_data_.JobTable(), *query);
    Json::Value v(Json::objectValue);
    v["total"] = Json::UInt64{page.total};
    v["all"] = Json::UInt64{page.all};
    v["states"] = Json::Value(Json::objectValue);
    for (const auto& [state, n] : page.states) v["states"][state] = Json::Int64{n};
    v["clusters"] = Json::Value(Json::arrayValue);
    for (const auto& c : page.clusters) v["clusters"].append(c);
    v["rows"] = Json::Value(Json::arrayValue);
    for (const TableRow& r : page.rows) {
      Json::Value row(Json::objectValue);
      row["key"] = r.key;
      row["sky_id"] = r.sky_id;
      row["cluster"] = r.cluster;
      row["native_id"] = r.native_id;
      row["job_id"] = r.job_id;
      row["name"] = r.name;
      row["user"] = r.user;
      row["state"] = r.state;
      row["reason"] = r.reason;
      row["gres"] = r.gres;
      row["gpus"] = Json::Int64{r.gpus};
      row["wait"] = Json::Int64{r.wait};
      row["since"] = Json::Int64{r.since};
      if (!r.tasks.empty()) {
        row["tasks"] = Json::Value(Json::objectValue);
        for (const auto& [phase, n] : r.tasks) row["tasks"][phase] = Json::Int64{n};
      }
      v["rows"].append(row);
    }
    Reply(res, 200, v);
  });
  Route(s).Post(
      R"(/v1/jobs/([^/]+)/move)", [this](const httplib::Request& req, httplib::Response& res) {
        Status st = manager_.RequestMove(req.matches[1]);
        if (!st.ok()) return ReplyError(res, st);
        Json::Value v(Json::objectValue);
        v["asked"] = std::string(req.matches[1]);
        v["note"] =
            "weighed at the next look at the queues (within poll_interval), by the same rules as "
            "skyslurmd's own moves; the job's history says what came of it";
        Reply(res, 202, v);
      });
  auto explained = [](httplib::Response& res, const Result<place::ExplainText>& e) {
    if (!e.ok()) return ReplyError(res, e.status());
    Json::Value v(Json::objectValue);
    v["text"] = e->text;
    v["can_run"] = e->some_cluster_can_run_it;
    Reply(res, 200, v);
  };
  Route(s).Get(R"(/v1/jobs/([^/]+)/explain)",
               [this, explained](const httplib::Request& req, httplib::Response& res) {
                 explained(res, manager_.ExplainJob(req.matches[1]));
               });
  Route(s).Post("/v1/explain", [this, explained](const httplib::Request& req,
                                                 httplib::Response& res) {
    auto body = ParseJson(req.body);
    if (!body.ok()) return ReplyError(res, body.status());
    const Json::Value& b = *body;
    if (!b.isObject() || !b.get("script", "").isString() ||
        !b.get("args", Json::arrayValue).isArray()) {
      return ReplyError(res, InvalidArgumentError("'script' must be a string and 'args' a list"));
    }
    JobInput input;
    for (const auto& a : b.get("args", Json::arrayValue)) input.args.push_back(a.asString());
    const std::string script = b.get("script", "").asString();
    if (!script.empty()) input.script = script;
    input.stdin_name = b.get("name", "").asString();
    input.cwd = manager_.home_dir();
    explained(res, manager_.Explain(input));
  });
}

ApiServer::~ApiServer() { StopDashboard(); }

void ApiServer::StopDashboard() {
  std::lock_guard lock(dashboard_mu_);
  if (dashboard_) dashboard_->Stop();
}

bool ApiServer::dashboard_serving() {
  // Not under dashboard_mu_: a stop holds it while its connections close,
  // and the daemon's loop asks this every poll.
  const DashboardServer* d = dashboard_made_.load();
  return d != nullptr && d->serving();
}

ApiServer::RouteAdder ApiServer::Route(httplib::Server& server) {
  // The dashboard's own server has its own login (dashboard_auth.h).
  return RouteAdder{server, site_ != nullptr && &server == server_.get() ? this : nullptr};
}

void ApiServer::RouteAdder::Get(const std::string& pattern, Handler handler) {
  server.Get(pattern, Admitted(std::move(handler)));
}

void ApiServer::RouteAdder::Post(const std::string& pattern, Handler handler) {
  server.Post(pattern, Admitted(std::move(handler)));
}

ApiServer::RouteAdder::Handler ApiServer::RouteAdder::Admitted(Handler handler) const {
  if (site == nullptr) return handler;
  return [api = site, handler = std::move(handler)](const httplib::Request& req,
                                                    httplib::Response& res) {
    struct Forget {
      ~Forget() { SetWorkingFor({}); }  // the user is forgotten with the answer, or a throw
    } forget;
    if (Status st = api->Admit(req); !st.ok()) return ReplyError(res, st);
    handler(req, res);
  };
}

Status ApiServer::Admit(const httplib::Request& req) {
  SetWorkingFor({});
  SKY_ASSIGN_OR_RETURN(Viewer viewer, site_->Admit(req.method, req.target, req.body,
                                                   req.get_header_value(kMungeHeader.data())));
  // Its Slurm commands run as the user who asks; a job's own, as its owner.
  const std::string name = viewer.name;
  SetWorkingFor({std::move(viewer), name});
  return OkStatus();
}

Status ApiServer::AdminsOnly(std::string_view what) const {
  if (site_ == nullptr || (CurrentViewer() && CurrentViewer()->admin)) return OkStatus();
  return PermissionDeniedError(
      fmt::format("{}: a site's skyslurmd does this for its admin group only", what));
}

Status ApiServer::BindTcp(const std::string& address) {
  const auto colon = address.rfind(':');
  const std::string host = address.substr(0, colon);
  const int port = std::atoi(address.c_str() + colon + 1);
  if (colon == std::string::npos || !server_->bind_to_port(host, port)) {
    return UnavailableError(fmt::format("cannot listen on {}: {}", address, std::strerror(errno)));
  }
  return OkStatus();
}

Status ApiServer::Bind(const std::string& socket_path) {
  ::unlink(socket_path.c_str());
  server_->set_address_family(AF_UNIX);
  // The folder (0700) is the gate; the socket itself is private too.
  const mode_t old = ::umask(077);
  const bool ok = server_->bind_to_port(socket_path, 80);
  ::umask(old);
  if (!ok) return UnavailableError("cannot listen on " + socket_path);
  // Debian's cpp-httplib is a compiled library whose listen() backlog is 5
  // (CPPHTTPLIB_LISTEN_BACKLOG only reaches the header): a burst of more
  // clients than that while the accept loop is busy got EAGAIN from
  // connect() ("no answer: Connection" in daemon_bench at 100 jobs/s).
  // listen() again on the same socket raises it; the socket is found by its
  // path, which httplib does not expose.
  for (int fd = 0; fd < 4096; ++fd) {
    sockaddr_un addr{};
    socklen_t len = sizeof(addr);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    if (addr.sun_family != AF_UNIX || socket_path != addr.sun_path) continue;
    if (::listen(fd, SOMAXCONN) != 0) {
      return UnavailableError("cannot listen on " + socket_path + ": " + std::strerror(errno));
    }
    break;
  }
  return OkStatus();
}

void ApiServer::Serve() { server_->listen_after_bind(); }

void ApiServer::Stop() {
  StopDashboard();
  server_->stop();
}

}  // namespace skyslurm::daemon
