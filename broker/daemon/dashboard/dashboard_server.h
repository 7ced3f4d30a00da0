// The dashboard (docs/dashboard.md): the pages built into skyslurmd
// (dashboard_assets.h) and the part of its /v1 API they use (never
// submissions or Slurm commands), served over HTTP on 127.0.0.1 (or the
// address the site file allows) for one user's browser. Every request needs
// the session a one-time login token opened (dashboard_auth.h: its cookie),
// every API request also the session's second secret in a header; a Host
// header that names another host (DNS rebinding) is refused.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "broker/daemon/dashboard/dashboard_auth.h"
#include "broker/util/status.h"

namespace httplib {
class Server;
}

namespace skyslurm::daemon {

struct DashboardOptions {
  // Where it listens: loopback unless the site file says otherwise
  // (skyslurm.yaml: dashboard.address, site file only).
  std::string address = "127.0.0.1";
};

class DashboardServer {
 public:
  // `add_routes` registers the API the pages use on the dashboard's server
  // (the API server's, api/api_server.h); `touch` is told of each request
  // let through (the daemon then does not exit for idleness).
  DashboardServer(std::function<void(httplib::Server&)> add_routes, std::function<void()> touch,
                  DashboardOptions options);
  ~DashboardServer();

  // Listens on `port` (0: a free one) and serves in a thread of its own;
  // answers the port. Serving already: the same port (a different one
  // asked is an error).
  Result<int> Start(int port);
  void Stop();
  bool serving() const;
  const std::string& address() const { return options_.address; }
  // A URL with a new one-time login token.
  std::string NewLoginUrl();

 private:
  std::function<void(httplib::Server&)> add_routes_;
  std::function<void()> touch_;
  DashboardOptions options_;
  DashboardAuth auth_;
  mutable std::mutex mu_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> serving_{false};  // read by the daemon's loop without mu_
  void Routes(httplib::Server& s);
};

}  // namespace skyslurm::daemon
