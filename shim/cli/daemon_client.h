// The client side of skyslurmd's API (docs/api.md), for `skyslurm` and the
// shim: finds the user's daemon socket, starts the daemon when it is not
// running (detached, with --log-file <state dir>/skyslurmd.log), and sends
// JSON requests. Where the site runs skyslurmd for everyone (skyslurm.yaml:
// site, docs/site.md), it asks the site's replicas instead, each request
// with a MUNGE credential of its own, the next replica when one does not
// answer; no daemon of the user's is started.
#pragma once

#include <json/json.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/config/settings.h"
#include "broker/daemon/daemon_paths.h"
#include "broker/util/status.h"

namespace skyslurm::cli {

// A replica's answer: its status and body.
struct SiteAnswer {
  int status = 0;
  std::string body;
};
using httplib_result_t = Result<SiteAnswer>;

class DaemonClient {
 public:
  // `slurm_bin_dir`: handed to a daemon this client starts ("" = PATH).
  DaemonClient(const config::Environment& env, const config::LoadedConfig& config,
               std::string slurm_bin_dir = "");

  // Whether the user's own daemon answers now (a listener that is not the
  // user's is none: EnsureRunning then refuses, saying why).
  bool Alive();
  // Starts the daemon unless one answers; waits until it does, or until
  // the daemon started has left twice while no other held its lock (it
  // cannot start: the error says so at once, with the last line it wrote).
  Status EnsureRunning(std::chrono::milliseconds wait = std::chrono::seconds(30));

  // A request; a non-2xx answer is an error carrying the daemon's message.
  Result<Json::Value> Get(const std::string& path);
  // A GET answered within `timeout` or not at all (a progress line's look).
  Result<Json::Value> GetQuick(const std::string& path, std::chrono::seconds timeout);
  Result<Json::Value> Post(const std::string& path, const Json::Value& body,
                           std::chrono::seconds timeout = std::chrono::seconds(120));

  const daemon::DaemonPaths& paths() const { return paths_; }
  // Whether this client asks a site's replicas (skyslurm.yaml: site).
  bool site() const { return !site_.empty(); }

 private:
  Result<Json::Value> Call(const std::string& method, const std::string& path,
                           const Json::Value* body, std::chrono::seconds timeout);
  // Starts `args` as a daemon of its own session (it outlives this command);
  // answers the read end of a pipe that hangs up when the daemon exits.
  Result<int> Spawn(const std::vector<std::string>& args);
  // Whether no skyslurmd holds the state's lock (one may be exiting).
  bool LockIsFree() const;

  // A site's replicas: the request at each in turn, from the last that
  // answered; Unavailable when none does.
  httplib_result_t CallSite(const std::string& method, const std::string& path,
                            const std::string& body, std::chrono::seconds timeout);

  daemon::DaemonPaths paths_;
  std::vector<std::string> site_;  // host:port of each replica
  std::string site_user_;
  std::size_t answered_ = 0;  // the replica that answered last
  std::string refused_;       // why the last look refused the listener ("" if it did not)
  std::string slurm_bin_dir_;
};

// The skyslurmd program next to this one (installed: ../sbin/skyslurmd;
// build tree: ../broker/skyslurmd), or $SKYSLURMD.
std::string SkyslurmdPath();

// The client of the user's daemon (started when it is not running), with
// the configuration and the command line's settings `flags`; nullopt after
// printing why not on stderr.
std::optional<DaemonClient> ConnectToDaemon(const std::map<std::string, std::string>& flags);

}  // namespace skyslurm::cli
