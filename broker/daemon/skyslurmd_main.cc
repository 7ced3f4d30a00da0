// skyslurmd: the per-user daemon that tracks routed jobs and fails them over
// (docs/architecture.md, docs/api.md). It runs in the foreground (systemd
// --user, logging to the journal through stderr), or started on demand by
// `skyslurm`/the shim, which detach it with --log-file <state dir>/skyslurmd.log.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "broker/config/settings.h"
#include "broker/config/site_settings.h"
#include "broker/daemon/api/api_server.h"
#include "broker/daemon/api/site_access.h"
#include "broker/daemon/daemon_log.h"
#include "broker/daemon/daemon_paths.h"
#include "broker/daemon/jobs/job_manager.h"
#include "broker/place/planner.h"
#include "broker/place/spending.h"
#include "broker/place/workspace.h"
#include "broker/store/job_store.h"
#include "skyslurm/version.h"

namespace {

std::mutex g_mu;
std::condition_variable g_wake;
std::atomic<bool> g_stop{false};

int Fail(const std::string& message) {
  skyslurm::daemon::LogError(message);
  return 1;
}

using namespace skyslurm;

struct DaemonFlags {
  bool version = false;
  bool on_demand = false;
  bool site = false;
  std::string site_file{config::kSiteSettingsFile};
  std::string listen;
  std::string slurm_bin_dir;
  daemon::LogOptions log;
};

// The command line; an exit code when it says to leave at once.
std::optional<int> ParseFlags(int argc, char** argv, DaemonFlags& flags) {
  CLI::App app{"skyslurmd: tracks skyslurm's routed jobs across Slurm clusters", "skyslurmd"};
  std::size_t log_max_mb = 10;
  app.add_flag("-V,--version", flags.version, "Print the version and exit");
  app.add_flag("--on-demand", flags.on_demand,
               "Started by a client: exit after idle_exit seconds with nothing to watch");
  app.add_flag("--site", flags.site,
               "Serve a whole site: state in site.yaml's database, users known by MUNGE, "
               "every job run as its user (docs/site.md)");
  app.add_option("--site-config", flags.site_file,
                 "The site's file (default /etc/skyslurm/site.yaml)");
  app.add_option("--listen", flags.listen, "With --site: host:port to serve on (else site.yaml's)");
  app.add_option("--slurm-bin-dir", flags.slurm_bin_dir,
                 "The folder of the home cluster's real Slurm commands (default: PATH)");
  app.add_option("--log-level", flags.log.level,
                 "trace, debug, info (the default: every decision), warning, error or off");
  app.add_option("--log-file", flags.log.file,
                 "Log to this file, rotated by size, instead of stderr (systemd's journal)");
  app.add_option("--log-max-size", log_max_mb, "Rotate the log file at this many MB (default 10)")
      ->check(CLI::PositiveNumber);
  app.add_option("--log-files", flags.log.max_files, "Rotated log files kept (default 5)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (flags.version) {
    std::printf("skyslurmd %s (built against Slurm %s)\n", kVersion, kSlurmBuildVersion);
    return 0;
  }
  flags.log.max_bytes = log_max_mb * 1024 * 1024;
  return std::nullopt;
}

// One daemon per user: the lock's descriptor, or -1 when another daemon
// holds it (two clients started one each). The state folder (the database,
// the lock, the log) is the user's own: made private as the store and the
// audit log make it.
Result<int> TakeLock(const std::string& state_dir, const std::string& lock) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  ::chmod(state_dir.c_str(), 0700);
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return InternalError("cannot open " + lock + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  // The lock file says which process holds it.
  if (::ftruncate(fd, 0) == 0) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    (void)!::write(fd, pid.data(), pid.size());
  }
  return fd;
}

// Probes are refreshed in the background each poll (5 s at least), so a
// cluster that frees up is seen within a poll; they stay valid for two, so
// that a submission never waits for the refresh that is about to come.
// Under load the last view is used while a fresh one is on its way, for as
// long as a cluster counts as alive without answering.
backend::CacheOptions CacheFor(const config::FailoverSettings& failover) {
  backend::CacheOptions cache;
  cache.probe_ttl = 2 * std::chrono::seconds(std::max(5, failover.poll_interval));
  cache.estimate_ttl = std::chrono::seconds(2);
  cache.max_stale = std::chrono::seconds(std::max(5, failover.cluster_dead_after));
  return cache;
}

// A look at the queues each poll until stopped (a signal, the API's
// shutdown) or, started on demand, idle for idle_exit seconds.
void WatchUntilStopped(daemon::JobManager& manager, daemon::ApiServer& server, int poll,
                       int idle_exit, bool on_demand) {
  std::time_t idle_since = std::time(nullptr);
  while (!g_stop) {
    {
      std::unique_lock lock(g_mu);
      // Short waits so that a signal (which cannot notify) is seen soon.
      for (int i = 0; i < poll * 4 && !g_stop; ++i) {
        g_wake.wait_for(lock, std::chrono::milliseconds(250));
      }
    }
    if (g_stop) break;
    try {
      manager.Tick();
      server.dashboard_data().SampleGpus();
    } catch (const std::exception& e) {
      // A bug in one look at the queues must not take the daemon down: the
      // state is on disk and the next look starts afresh.
      daemon::LogError(std::string("one look at the queues failed: ") + e.what());
    }
    const std::time_t now = std::time(nullptr);
    // A dashboard served keeps it up (until skyslurm dashboard --stop).
    if (manager.LiveJobs() > 0 || server.last_request() > idle_since ||
        server.dashboard_serving()) {
      idle_since = now;
    }
    if (on_demand && idle_exit > 0 &&
        now - std::max(idle_since, server.last_request()) >= idle_exit) {
      daemon::LogInfo("nothing to watch for " + std::to_string(idle_exit) + " s: exiting");
      break;
    }
  }
}

// A probe abandoned past its deadline may still run in libssh: give it a
// moment, then leave without the libraries' exit handlers (which would
// tear OpenSSL down under it).
int Leave() {
  for (int i = 0; i < 40 && place::TasksStillRunning() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  daemon::LogInfo("stopped");
  if (place::TasksStillRunning() > 0) {
    std::fflush(nullptr);
    _exit(0);
  }
  return 0;
}

// Serves the API and watches the jobs of the workspace's store until stopped.
int Serve(place::Workspace& ws, store::JobStore& store, const daemon::DaemonPaths& paths,
          bool on_demand) {
  const int poll = ws.config.settings.failover.poll_interval;
  const int idle_exit = ws.config.settings.failover.idle_exit;
  place::CacheBudgets(ws, std::chrono::seconds(std::max(5, poll)));  // bills: once a poll
  daemon::ManagerOptions manager_options;
  manager_options.log = daemon::LogInfo;
  manager_options.routed_marker = paths.routed_marker;
  daemon::JobManager manager(store, ws, manager_options);
  // Settle what a crash left half done before taking anything new.
  try {
    manager.Tick();
  } catch (const std::exception& e) {
    daemon::LogError(std::string("the first look at the queues failed: ") + e.what());
  }
  daemon::ApiServer server(manager, {.address = ws.config.settings.dashboard_address});
  server.OnShutdown([] {
    g_stop = true;
    g_wake.notify_all();
  });
  if (Status st = server.Bind(paths.socket); !st.ok()) return Fail(st.message());
  daemon::LogInfo("serving " + paths.socket + " (state " + paths.database + ")");
  std::signal(SIGTERM, [](int) { g_stop = true; });
  std::signal(SIGINT, [](int) { g_stop = true; });
  std::thread http([&] { server.Serve(); });
  WatchUntilStopped(manager, server, poll, idle_exit, on_demand);
  server.Stop();
  http.join();
  ::unlink(paths.socket.c_str());
  return Leave();
}

// As daemons do: its working folder is its state folder, never the folder
// of the command that started it (which may be removed later: every
// command it runs would then fail in it), and a umask of its own. The
// user's umask, which it was started with, stays the one the user's jobs
// get: sbatch takes SLURM_UMASK when it is set (the job's own environment
// may still name another).
Status BecomeDaemon(const std::string& state_dir) {
  if (::chdir(state_dir.c_str()) != 0) {
    return UnavailableError(fmt::format("cannot work in {}: {}", state_dir, std::strerror(errno)));
  }
  const mode_t users = ::umask(077);
  ::setenv("SLURM_UMASK", fmt::format("{:04o}", users & 0777).c_str(), /*overwrite=*/0);
  return OkStatus();
}

// A site's replica: serves `site.listen` for every user MUNGE names, drives
// the jobs whose lease it holds, and renews those leases a few times a
// lease, apart from the looks at the queues (a slow look must not let them
// lapse).
int ServeSite(place::Workspace& ws, store::JobStore& store, const config::SiteSettings& site) {
  const int poll = ws.config.settings.failover.poll_interval;
  place::CacheBudgets(ws, std::chrono::seconds(std::max(5, poll)));
  daemon::ManagerOptions manager_options;
  manager_options.log = daemon::LogInfo;
  manager_options.replica = site.replica;
  manager_options.lease = site.lease;
  daemon::JobManager manager(store, ws, manager_options);
  std::thread renew([&] {
    while (!g_stop) {
      if (auto renewed = store.RenewLeases(site.replica, site.lease); !renewed.ok()) {
        daemon::LogError("cannot renew this replica's leases: " + renewed.status().message());
      }
      std::unique_lock lock(g_mu);
      g_wake.wait_for(lock, site.lease / 4, [] { return g_stop.load(); });
    }
  });
  try {
    manager.Tick();  // settles what this replica's jobs were left with
  } catch (const std::exception& e) {
    daemon::LogError(std::string("the first look at the queues failed: ") + e.what());
  }
  daemon::SiteAccess access(store, {{site.munge_socket, 0}, site.admin_group});
  daemon::ApiServer server(manager, {.address = ws.config.settings.dashboard_address}, &access);
  server.OnShutdown([] {
    g_stop = true;
    g_wake.notify_all();
  });
  std::signal(SIGTERM, [](int) { g_stop = true; });
  std::signal(SIGINT, [](int) { g_stop = true; });
  Status bound = server.BindTcp(site.listen);
  if (bound.ok()) {
    daemon::LogInfo(fmt::format("serving the site on {} as replica {} (state {}, lease {} ms)",
                                site.listen, site.replica, store.engine(), site.lease.count()));
    std::thread http([&] { server.Serve(); });
    WatchUntilStopped(manager, server, poll, 0, false);
    server.Stop();
    http.join();
  }
  g_stop = true;
  g_wake.notify_all();
  renew.join();
  if (!bound.ok()) return Fail(bound.message());
  return Leave();
}

// `skyslurmd --site`: the site's file, its clusters (skyslurm.yaml, those
// with a trust only), its store, its sealing key; then serves.
int RunSite(const DaemonFlags& flags) {
  auto site = config::ReadSiteSettings(flags.site_file);
  if (!site.ok()) return Fail(site.status().message());
  if (!flags.listen.empty()) {
    const std::string port = site->listen.substr(site->listen.rfind(':') + 1);
    if (site->replica.ends_with(":" + port)) {
      site->replica = site->replica.substr(0, site->replica.size() - port.size()) +
                      flags.listen.substr(flags.listen.rfind(':') + 1);
    }
    site->listen = flags.listen;
  }
  auto env = config::Environment::FromProcess();
  auto loaded = config::LoadConfig(env);
  if (!loaded.ok()) return Fail(loaded.status().message());
  // The site acts only where it has a trust to act as the user: every
  // other cluster, however configured, is left out.
  if (site->trust.empty()) {
    return Fail(site->file +
                ": name the clusters the site acts on (clusters: {alpha: {trust: local}})");
  }
  std::vector<std::string> trusted;
  for (const auto& [name, trust] : site->trust) {
    const auto& allowed = loaded->settings.clusters_allowed;
    if (allowed.empty() || std::find(allowed.begin(), allowed.end(), name) != allowed.end()) {
      trusted.push_back(name);
    }
  }
  if (trusted.empty()) return Fail("clusters_allowed leaves none of site.yaml's clusters");
  loaded->settings.clusters_allowed = trusted;
  std::error_code ec;
  std::filesystem::create_directories(site->state_dir, ec);
  ::chmod(site->state_dir.c_str(), 0700);
  if (Status st = BecomeDaemon(site->state_dir); !st.ok()) return Fail(st.message());
  auto store = store::JobStore::Open(site->database);
  if (!store.ok()) return Fail(store.status().message());
  (*store)->DriveAs(site->replica, site->lease);
  // What the store keeps sealed is sealed with the site's own key, the
  // same on every replica (one replica opens what another sealed).
  auto seal = SecretSeal::FromKeyFile(site->secret_key);
  if (!seal.ok()) return Fail(seal.status().message());
  daemon::UseSecretSeal(std::make_shared<const SecretSeal>(std::move(*seal)));
  backend::CacheOptions cache = CacheFor(loaded->settings.failover);
  // Each user's estimates are their own: a site asks many more of a
  // controller than one user does, as many as its admins allow.
  cache.estimates_per_second = site->estimates_per_second;
  auto ws = place::OpenWorkspace(env, std::move(*loaded), {}, flags.slurm_bin_dir, cache,
                                 /*watch=*/true, site->runas);
  if (!ws.ok()) return Fail(ws.status().message());
  return ServeSite(*ws, **store, *site);
}

}  // namespace

int main(int argc, char** argv) {
  DaemonFlags flags;
  if (auto leave = ParseFlags(argc, argv, flags)) return *leave;
  // To stderr until this daemon holds the lock: a second one, started by a
  // racing client, must never write (or rotate) the first one's log file.
  if (Status st = daemon::SetUpLog({.level = flags.log.level}); !st.ok()) {
    std::fprintf(stderr, "skyslurmd: %s\n", st.message().c_str());
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Its own sbatch calls are never to be routed again.
  ::unsetenv("SKYSLURM_ANY_CLUSTER");
  if (flags.site) {
    if (!flags.log.file.empty()) {
      if (Status st = daemon::SetUpLog(flags.log); !st.ok()) return Fail(st.message());
    }
    return RunSite(flags);
  }

  auto env = config::Environment::FromProcess();
  auto loaded = config::LoadConfig(env);
  if (!loaded.ok()) return Fail(loaded.status().message());
  const daemon::DaemonPaths paths = daemon::ResolveDaemonPaths(env, loaded->paths);
  if (Status st = daemon::EnsurePrivateDir(paths.run_dir); !st.ok()) return Fail(st.message());
  auto lock_fd = TakeLock(loaded->paths.state_dir, paths.lock);
  if (!lock_fd.ok()) return Fail(lock_fd.status().message());
  if (*lock_fd < 0) {
    daemon::LogInfo("another skyslurmd holds " + paths.lock);
    return 0;
  }
  if (!flags.log.file.empty()) {
    if (Status st = daemon::SetUpLog(flags.log); !st.ok()) return Fail(st.message());
  }
  if (Status st = BecomeDaemon(loaded->paths.state_dir); !st.ok()) return Fail(st.message());
  auto store = store::JobStore::Open(paths.database);
  if (!store.ok()) return Fail(store.status().message());
  // A task's secrets are kept in the store sealed with the user's own key.
  auto seal = SecretSeal::FromKeyFile(
      (std::filesystem::path(loaded->paths.state_dir) / "secret.key").string());
  if (!seal.ok()) return Fail(seal.status().message());
  daemon::UseSecretSeal(std::make_shared<const SecretSeal>(std::move(*seal)));
  const backend::CacheOptions cache = CacheFor(loaded->settings.failover);
  auto ws = place::OpenWorkspace(env, std::move(*loaded), {}, flags.slurm_bin_dir, cache,
                                 /*watch=*/true);
  if (!ws.ok()) return Fail(ws.status().message());
  return Serve(*ws, **store, paths, flags.on_demand);
}
