#include "shim/cli/site_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "broker/daemon/api/adoption.h"
#include "broker/daemon/daemon_paths.h"
#include "broker/util/secret_seal.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"

namespace skyslurm::cli {
namespace {

constexpr std::size_t kBatch = 50;  // jobs per request

int Error(const std::string& message) {
  std::fprintf(stderr, "skyslurm site adopt: %s\n", message.c_str());
  return 1;
}

// The user's own daemon's lock, taken: its daemon asked to stop (SIGTERM to
// the pid the lock file holds) and waited for, 30 s at most; -1 with
// `why` when it cannot be had.
int TakeOwnDaemonsLock(const std::string& lock, std::string& why) {
  const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return -2;  // no lock file: no daemon ever ran
  for (int i = 0; i < 300; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    if (i == 0) {
      std::ifstream in(lock);
      int pid = 0;
      if (in >> pid && pid > 1) ::kill(pid, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::close(fd);
  why = "your own skyslurmd did not stop within 30 s (" + lock + ")";
  return -1;
}

// Every job of the store, with what the site needs to drive it on.
Result<std::vector<daemon::AdoptedJob>> ReadStore(store::JobStore& db) {
  SKY_ASSIGN_OR_RETURN(std::vector<store::SkyJob> jobs, db.List(false));
  SKY_ASSIGN_OR_RETURN(std::vector<store::Intent> open, db.OpenIntents());
  std::vector<daemon::AdoptedJob> out;
  for (store::SkyJob& job : jobs) {
    daemon::AdoptedJob a;
    // Its input opened with the user's key (the site seals it with its own).
    auto input = daemon::JobInputFromText(job.input_json);
    if (!input.ok() && !store::IsFinalState(job.state)) {
      return input.status().WithContext(job.sky_id);
    }
    job.input_json = daemon::WriteJson(daemon::ToJson(input.ok() ? *input : daemon::JobInput{}));
    a.job = job;
    SKY_ASSIGN_OR_RETURN(a.copies, db.Copies(job.sky_id));
    SKY_ASSIGN_OR_RETURN(a.events, db.Events(job.sky_id));
    for (const auto& i : open) {
      if (i.sky_id == job.sky_id) a.intents.push_back(i);
    }
    out.push_back(std::move(a));
  }
  return out;
}

// The store's files moved aside, so that no daemon of the user's drives
// those jobs again.
Status SetAside(const std::string& database) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string from = database + suffix;
    std::error_code ec;
    if (!std::filesystem::exists(from, ec)) continue;
    std::filesystem::rename(from, database + ".adopted" + suffix, ec);
    if (ec) return InternalError(fmt::format("cannot move {} aside: {}", from, ec.message()));
  }
  return OkStatus();
}

}  // namespace

int RunSiteAdopt() {
  auto env = config::Environment::FromProcess();
  auto loaded = config::LoadConfig(env, GlobalSettingFlags());
  if (!loaded.ok()) return Error(loaded.status().message());
  if (loaded->settings.site.empty()) {
    return Error("skyslurm.yaml names no site to adopt your jobs (site: [host:port, ...])");
  }
  const daemon::DaemonPaths paths = daemon::ResolveDaemonPaths(env, loaded->paths);
  if (!std::filesystem::exists(paths.database)) {
    std::printf("skyslurm site adopt: no jobs of your own skyslurmd to adopt (%s)\n",
                paths.database.c_str());
    return 0;
  }
  std::string why;
  const int lock = TakeOwnDaemonsLock(paths.lock, why);
  if (lock == -1) return Error(why);
  int rc = 0;
  {
    auto seal = SecretSeal::FromKeyFile(
        (std::filesystem::path(loaded->paths.state_dir) / "secret.key").string());
    if (!seal.ok()) return Error(seal.status().message());
    daemon::UseSecretSeal(std::make_shared<const SecretSeal>(std::move(*seal)));
    auto db = store::JobStore::Open(paths.database);
    if (!db.ok()) return Error(db.status().message());
    auto jobs = ReadStore(**db);
    if (!jobs.ok()) return Error(jobs.status().message());
    DaemonClient site(env, *loaded);
    std::size_t adopted = 0, present = 0;
    for (std::size_t start = 0; start < jobs->size(); start += kBatch) {
      Json::Value body(Json::objectValue);
      body["jobs"] = Json::Value(Json::arrayValue);
      for (std::size_t i = start; i < std::min(jobs->size(), start + kBatch); ++i) {
        body["jobs"].append(daemon::AdoptedJobJson((*jobs)[i]));
      }
      auto answer = site.Post("/v1/adopt", body);
      if (!answer.ok()) {
        return Error(fmt::format("{} (of {} jobs, {} are the site's; adopt again to go on)",
                                 answer.status().message(), jobs->size(), adopted + present));
      }
      adopted += (*answer)["adopted"].size();
      present += (*answer)["present"].size();
    }
    db->reset();
    if (Status st = SetAside(paths.database); !st.ok()) rc = Error(st.message());
    std::printf(
        "skyslurm site adopt: %zu jobs are the site's now (%zu adopted, %zu there "
        "already); your own store is kept as %s.adopted\n",
        adopted + present, adopted, present, paths.database.c_str());
  }
  if (lock >= 0) ::close(lock);
  return rc;
}

}  // namespace skyslurm::cli
