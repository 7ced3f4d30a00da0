#include "broker/daemon/dashboard/dashboard_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "broker/place/elastic.h"
#include "broker/util/acting_user.h"

namespace skyslurm::daemon {
namespace {

// An elastic cluster's ledger (boot times measured), when its settings name one.
std::optional<std::vector<cloud::PowerUp>> LedgerOf(const config::ClusterSettings& settings) {
  if (settings.ledger.empty()) return std::nullopt;
  auto read = place::ReadLedger(settings.ledger);
  if (!read.ok()) return std::nullopt;
  return std::move(*read);
}

// The last probe's inventory, if one is at hand without asking the cluster.
std::optional<cluster::Inventory> LastInventory(const place::ClusterHandle& h) {
  if (h.backend == nullptr) return std::nullopt;
  auto at_once = h.backend->ProbeAtOnce();
  if (!at_once || !at_once->ok()) return std::nullopt;
  return std::move(**at_once);
}

}  // namespace

std::vector<ClusterCard> DashboardData::ClusterCards() {
  std::vector<ClusterCard> cards;
  const std::vector<JobManager::ClusterState> states = manager_.ClusterStates();
  const place::Workspace& ws = manager_.workspace();
  for (std::size_t i = 0; i < ws.handles.size(); ++i) {
    const place::ClusterHandle& h = ws.handles[i];
    const std::optional<cluster::Inventory> inventory = LastInventory(h);
    const auto ledger = inventory ? LedgerOf(h.settings) : std::nullopt;
    ClusterCard card = MakeClusterCard(h, inventory ? &*inventory : nullptr, ws.catalog,
                                       ledger ? &*ledger : nullptr);
    if (h.backend == nullptr) {
      card.error = h.excluded.empty() ? "not reachable from skyslurmd" : h.excluded;
    } else if (i < states.size() && states[i].looked) {
      const JobManager::ClusterState& v = states[i];
      card.reachable = v.reachable;
      card.answered = v.heard;
      card.since = v.since;
      card.error = v.error;
    }
    cards.push_back(std::move(card));
  }
  return cards;
}

int DashboardData::gpu_sample_every() const {
  return kPollsPerGpuSample * std::max(1, manager_.poll_interval());
}

void DashboardData::SampleGpus() {
  const std::time_t now = manager_.Now();
  if (last_gpu_sample_ != 0 && now - last_gpu_sample_ < gpu_sample_every()) return;
  std::vector<store::GpuSample> samples;
  const place::Workspace& ws = manager_.workspace();
  for (const place::ClusterHandle& h : ws.handles) {
    const std::optional<cluster::Inventory> inventory = LastInventory(h);
    if (!inventory) continue;  // not known now: a gap in its chart
    const ClusterCard card = MakeClusterCard(h, &*inventory, ws.catalog, nullptr);
    samples.push_back(GpuSampleOf(card, now));
  }
  if (samples.empty()) return;  // no probe answered yet (the first looks): the next one
  last_gpu_sample_ = now;
  const std::time_t keep_after =
      now - std::chrono::duration_cast<std::chrono::seconds>(kGpuSamplesKept).count();
  if (Status st = manager_.store().AddGpuSamples(samples, keep_after); !st.ok()) {
    manager_.Log("GPU samples not kept: " + st.message());
  }
}

std::vector<store::GpuSample> DashboardData::GpuHistory(std::time_t since) {
  return manager_.store().GpuSamplesSince(since).value_or(std::vector<store::GpuSample>{});
}

std::vector<TableRow> DashboardData::JobTable() {
  const std::time_t now = manager_.Now();
  const place::Workspace& ws = manager_.workspace();
  // The GPUs of each job in view, from the clusters' last probes.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::int64_t>> gpus;
  for (const place::ClusterHandle& h : ws.handles) {
    const std::optional<cluster::Inventory> inventory = LastInventory(h);
    if (!inventory) continue;
    for (const cluster::QueuedJob& j : inventory->jobs) {
      const std::int64_t per = j.gpus_per_node > 0 ? j.gpus_per_node : j.gpus_per_job;
      std::string gres;
      if (per > 0)
        gres = j.gpu_type.empty() ? std::to_string(per) : fmt::format("{}:{}", j.gpu_type, per);
      // An array's record may be one task ("609_3") or the pending rest ("609_[4-9]").
      const std::string id = j.job_id.substr(0, j.job_id.find('_'));
      auto& g = gpus[{h.name, id}];
      if (g.first.empty()) g.first = gres;
      g.second += j.TotalGpus() * j.tasks;
    }
  }
  // Every sky job of the store (brief: no inputs), for the rest of the
  // rows and for the sky jobs' waits, counted from their first submission
  // (a move does not start a job's wait again).
  std::map<std::string, store::SkyJob> sky_jobs;
  if (auto all = manager_.store().List(false, /*brief=*/true); all.ok()) {
    for (store::SkyJob& j : *all) {
      if (MaySee(j.owner)) sky_jobs.emplace(j.sky_id, std::move(j));  // a site's user: theirs
    }
  }
  auto sky_wait = [&](const store::SkyJob& j) -> std::int64_t {
    if (j.started != 0) return std::max<std::int64_t>(0, j.started - j.created);
    if (store::IsFinalState(j.state)) return 0;  // ended before it ever started
    return std::max<std::int64_t>(0, now - j.created);
  };
  std::vector<TableRow> rows;
  std::set<std::string> seen;
  for (const QueueRow& q : manager_.Queue(false)) {
    TableRow r;
    r.sky_id = q.sky_id;
    r.cluster = q.cluster;
    r.native_id = q.native_id;
    r.key = !q.sky_id.empty() && !q.reason.starts_with("stale copy")
                ? q.sky_id
                : fmt::format("{}:{}", q.cluster, q.native_id);
    if (std::uint64_t g = manager_.GlobalIdOf(q.cluster, q.native_id);
        g != 0 && !q.sky_id.empty()) {
      r.job_id = std::to_string(g);
    }
    r.name = q.name;
    r.user = q.user;
    r.state = q.state;
    r.reason = q.reason;
    r.since = q.since;
    r.tasks = q.tasks;
    if (auto g = gpus.find({q.cluster, q.native_id}); g != gpus.end()) {
      r.gres = g->second.first;
      r.gpus = g->second.second;
    }
    const bool pending = q.state == "PENDING" || q.state == "SUBMITTING";
    if (auto sky = sky_jobs.find(r.key); sky != sky_jobs.end()) {
      r.wait = sky_wait(sky->second);
    } else if (pending) {
      r.wait = q.since > 0 ? std::max<std::int64_t>(0, now - q.since) : 0;
    } else if (q.submitted > 0 && q.since >= q.submitted) {
      r.wait = q.since - q.submitted;  // running: from its submission to its start
    }
    seen.insert(r.key);
    rows.push_back(std::move(r));
  }
  // Every other sky job, ended ones too.
  {
    for (const auto& [id, j] : sky_jobs) {
      if (seen.contains(j.sky_id) || !j.parent.empty()) continue;
      TableRow r;
      r.key = r.sky_id = j.sky_id;
      r.cluster = j.cluster;
      r.native_id = j.native_id;
      if (j.global_id != 0) r.job_id = std::to_string(j.global_id);
      r.name = j.name;
      r.user = j.owner;
      r.state = j.state;
      r.reason = j.reason;
      r.since = j.started != 0 ? j.started : (j.submitted != 0 ? j.submitted : j.created);
      r.wait = sky_wait(j);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace skyslurm::daemon
