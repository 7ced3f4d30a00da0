#include "shim/cli/sync_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "broker/cluster/registry.h"
#include "broker/config/login_session.h"
#include "broker/config/paths.h"
#include "broker/sync/rsync.h"
#include "broker/sync/workdir_plan.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"

namespace skyslurm::cli {

int RunSyncDown(const std::string& id, const std::string& dest_arg) {
  auto fail = [](const std::string& msg, int code = 1) {
    std::fprintf(stderr, "skyslurm: %s\n", msg.c_str());
    return code;
  };
  auto env = config::Environment::FromProcess();
  auto loaded = config::LoadConfig(env, GlobalSettingFlags());
  if (!loaded.ok()) return fail(loaded.status().message());
  DaemonClient client(env, *loaded);
  if (Status st = client.EnsureRunning(); !st.ok()) return fail(st.message());
  auto answer = client.Get("/v1/jobs/" + id);
  if (!answer.ok()) {
    return fail(answer.status().message(),
                answer.status().code() == StatusCode::kInvalidArgument ? 2 : 1);
  }
  const Json::Value& job = (*answer)["job"];
  const std::string sky_id = job["sky_id"].asString();
  // The copy the job runs (or ran) as: the current one, else the last.
  const Json::Value* copy = nullptr;
  for (const auto& c : (*answer)["copies"]) {
    if (c["cluster"] == job["cluster"] && c["native_id"] == job["native_id"]) copy = &c;
  }
  if (copy == nullptr && !(*answer)["copies"].empty()) {
    copy = &(*answer)["copies"][(*answer)["copies"].size() - 1];
  }
  if (copy == nullptr) return fail(fmt::format("{} has not reached a cluster yet", sky_id));
  const std::string cluster = (*copy)["cluster"].asString();
  const std::string remote_dir = (*copy)["workdir"].asString();
  const std::string source = (*copy)["source"].asString();
  if (remote_dir.empty() || source.empty()) {
    return fail(fmt::format(
        "{} ran on {} in a folder that was not copied from here (its files are where it ran: "
        "skyslurm status {} tells why)",
        sky_id, cluster, sky_id));
  }
  const std::string dest =
      dest_arg.empty()
          ? source
          : std::filesystem::absolute(config::ExpandHome(dest_arg, loaded->paths.home)).string();
  auto registry = cluster::ClusterRegistry::FromConfig(*loaded, env);
  if (!registry.ok()) return fail(registry.status().message());
  const cluster::ClusterEntry* entry = registry->Find(cluster);
  if (entry == nullptr || !entry->ssh) {
    return fail(fmt::format("{} is not reached over SSH ({}): its files cannot be fetched", cluster,
                            loaded->paths.clusters_file));
  }
  sync::RsyncRemote remote{entry->ssh->name, loaded->paths.clusters_file,
                           entry->ssh->strict_host_key_checking, loaded->settings.sync_bwlimit,
                           sync::SshControlDir()};
  if (entry->session) {
    auto proxy =
        config::SessionProxyCommand(*entry->session, loaded->settings.For(cluster).one_time_code,
                                    /*for_openssh=*/true);
    if (!proxy.ok()) return fail(proxy.status().message());
    remote.proxy_command = *proxy;
  }
  LocalCommandRunner runner;
  auto got = sync::Pull(runner, remote, remote_dir, dest, {}, std::chrono::hours(2));
  if (!got.ok()) return fail(got.status().message());
  std::printf("%s: fetched %s:%s into %s: %s\n", sky_id.c_str(), cluster.c_str(),
              remote_dir.c_str(), sync::Tilde(dest, loaded->paths.home).c_str(),
              sync::DescribeStats(*got, true).c_str());
  return 0;
}

}  // namespace skyslurm::cli
