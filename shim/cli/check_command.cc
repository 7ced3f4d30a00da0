#include "shim/cli/check_command.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <future>

#include "broker/backend/backend.h"
#include "broker/config/login_session.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

int RunCheck() {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm check: %s\n", ws.status().message().c_str());
    return 2;
  }
  struct Row {
    std::string name, access, verdict, detail;
    bool ok = false;
  };
  std::vector<std::future<Row>> checks;
  for (std::size_t i = 0; i < ws->handles.size(); ++i) {
    const place::ClusterHandle& h = ws->handles[i];
    const cluster::ClusterEntry& entry = ws->registry.clusters()[i];
    checks.push_back(std::async(std::launch::async, [&h, &entry]() {
      Row row;
      row.name = h.name;
      row.access = cluster::AccessName(entry);
      if (entry.access == cluster::ClusterEntry::Access::kSsh && entry.ssh) {
        row.access =
            fmt::format("ssh {}@{}:{}", entry.ssh->user, entry.ssh->hostname, entry.ssh->port);
      }
      if (!h.excluded.empty()) {
        row.verdict = "excluded";
        row.detail = h.excluded;
        row.ok = true;
        return row;
      }
      std::string session_note;
      if (entry.session) {
        row.access += " via " + entry.session->jump;
        const auto until = config::SessionUntil(*entry.session, std::chrono::system_clock::now());
        if (until) {
          session_note = fmt::format("session until {:%Y-%m-%d %H:%M %Z}; ",
                                     fmt::localtime(std::chrono::system_clock::to_time_t(*until)));
        } else if (h.settings.one_time_code) {
          row.verdict = "needs login";
          row.detail = config::NeedsLoginReason(h.name);
          return row;
        }
      }
      if (h.backend == nullptr) {
        row.ok = h.offline.has_value();
        row.verdict = row.ok ? "offline" : "unusable";
        row.detail = row.ok ? "described by " + entry.description_file : h.unavailable;
        return row;
      }
      const backend::CheckAnswer answer = h.backend->Check(std::chrono::seconds(15));
      row.ok = answer.ok();
      row.verdict = answer.verdict;
      row.access = answer.access_note + row.access;
      row.detail = session_note + answer.detail;
      return row;
    }));
  }
  bool all_ok = true;
  std::printf("%-10s %-12s %-34s %s\n", "CLUSTER", "STATUS", "ACCESS", "DETAIL");
  for (auto& f : checks) {
    Row row = f.get();
    all_ok = all_ok && row.ok;
    std::printf("%-10s %-12s %-34s %s\n", row.name.c_str(), row.verdict.c_str(), row.access.c_str(),
                row.detail.c_str());
  }
  return all_ok ? 0 : 1;
}

}  // namespace skyslurm::cli
