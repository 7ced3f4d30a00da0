// skyslurmd's HTTP/JSON API (docs/api.md) on its UNIX socket: a thin layer
// over the job lifecycle (JobManager), the Slurm commands' front
// (SlurmFront) and the dashboard's data (DashboardData). Versioned under /v1;
// every error is {"error": message} with a status code that says whose
// fault it is. It also starts and stops the dashboard's own server.
#pragma once

#include <atomic>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "broker/daemon/api/site_access.h"
#include "broker/daemon/dashboard/dashboard_data.h"
#include "broker/daemon/dashboard/dashboard_server.h"
#include "broker/daemon/jobs/job_manager.h"
#include "broker/daemon/slurm_front/slurm_front.h"
#include "broker/util/latency_histogram.h"
#include "broker/util/status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace skyslurm::daemon {

class ApiServer {
 public:
  // `site`: a site's daemon, which answers each request for the user its
  // MUNGE credential names (site_access.h) on a TCP port; null: a user's
  // own, which answers only its user's processes on its socket.
  explicit ApiServer(JobManager& manager, DashboardOptions dashboard = {},
                     SiteAccess* site = nullptr);
  ~ApiServer();

  // Registers the /v1 routes on `server`: all of them (the socket's), or
  // those the dashboard's pages use (behind its login): never a submission
  // or a Slurm command.
  enum class Routes { kAll, kDashboard };
  void AddRoutes(httplib::Server& server, Routes routes);
  // A request arrived (the idle exit waits for the last one).
  void Touch() { last_request_ = std::time(nullptr); }
  // Whether the dashboard is being served (the daemon then never exits
  // for idleness); stops it.
  bool dashboard_serving();
  void StopDashboard();

  // Binds `socket_path` (an old socket file there is replaced; mode 0600).
  Status Bind(const std::string& socket_path);
  // A site's daemon: binds `address` (host:port).
  Status BindTcp(const std::string& address);
  // Serves until Stop(); blocks.
  void Serve();
  void Stop();
  // When the last request arrived (for the idle exit).
  std::time_t last_request() const { return last_request_.load(); }
  // POST /v1/shutdown asks the daemon's main loop to end.
  void OnShutdown(std::function<void()> f) { on_shutdown_ = std::move(f); }
  // The dashboard's data (its GPU samples are taken after each look at the
  // queues: DashboardData::SampleGpus).
  DashboardData& dashboard_data() { return dashboard_data_; }

 private:
  JobManager& manager_;
  SiteAccess* site_;
  SlurmFront front_;
  DashboardData dashboard_data_;
  std::unique_ptr<httplib::Server> server_;
  std::atomic<std::time_t> last_request_;
  std::function<void()> on_shutdown_;
  LatencyHistogram submissions_;  // accepted submissions' time (/metrics)
  std::atomic<std::int64_t> submissions_refused_{0};
  DashboardOptions dashboard_options_;
  std::mutex dashboard_mu_;
  std::unique_ptr<DashboardServer> dashboard_;  // made by the first POST /v1/dashboard
  std::atomic<const DashboardServer*> dashboard_made_{nullptr};
  void AddClientRoutes(httplib::Server& server);
  void AddJobRoutes(httplib::Server& server);
  void AddDashboardRoutes(httplib::Server& server);
  // GET /metrics, in Prometheus' text format (metrics.h).
  void AddMetricsRoute(httplib::Server& server);
  // POST /v1/adopt: a user's own store moved into a site's (adoption.h).
  void AddAdoptRoute(httplib::Server& server);
  // A site's daemon: who asks, by the MUNGE credential that binds the
  // request (its body read), set as this thread's viewer and acting user
  // for its answer; an error when they may not ask at all.
  Status Admit(const httplib::Request& req);
  // Registers routes on a server: on a site's API, each handler admits its
  // request first.
  struct RouteAdder {
    using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
    httplib::Server& server;
    ApiServer* site;  // null: the handlers as they are
    void Get(const std::string& pattern, Handler handler);
    void Post(const std::string& pattern, Handler handler);
    Handler Admitted(Handler handler) const;
  };
  RouteAdder Route(httplib::Server& server);
  // A site's daemon: what only its admins may do.
  Status AdminsOnly(std::string_view what) const;
};

}  // namespace skyslurm::daemon
