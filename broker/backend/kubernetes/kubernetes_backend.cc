#include "broker/backend/kubernetes/kubernetes_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <map>
#include <set>

#include "broker/backend/kubernetes/inventory.h"
#include "broker/backend/kubernetes/job_status.h"
#include "broker/backend/kubernetes/job_translator.h"
#include "broker/backend/kubernetes/manifests.h"
#include "broker/backend/kubernetes/start_model.h"
#include "broker/kube/informer.h"
#include "broker/util/deadline.h"
#include "broker/util/json_mask.h"
#include "broker/util/strings.h"
#include "broker/util/timestamp.h"

namespace skyslurm::backend {
namespace {

using std::chrono::milliseconds;

const std::string kManagedSelector = std::string(kube::kManagedByLabel) + "=skyslurm";

// The namespace's job-number counter (data.next: the next number to give).
constexpr const char* kNumberCounter = "skyslurm-job-numbers";

// A job number in a label or a field, 0 when it is none.
long NumberOf(const Json::Value& v) {
  const std::string text = v.isString() ? v.asString() : "";
  if (text.empty() || text.size() > 15) return 0;
  long n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

Json::Value OwnerPatch(const Json::Value& job) {
  Json::Value owner(Json::objectValue);
  owner["apiVersion"] = "batch/v1";
  owner["kind"] = "Job";
  owner["name"] = job["metadata"]["name"];
  owner["uid"] = job["metadata"]["uid"];
  Json::Value patch(Json::objectValue);
  patch["metadata"]["ownerReferences"].append(owner);
  return patch;
}

// The facts of a node and a pod read from a list's cursor (the overloads
// named for std::function).
Result<kube::NodeFacts> NodeOf(JsonCursor& c) { return kube::ReadNodeFacts(c); }
Result<kube::PodFacts> PodOf(JsonCursor& c) { return kube::ReadPodFacts(c); }

int IndexOf(const Json::Value& pod) {
  const std::string index = pod["metadata"]["labels"][kube::kIndexLabel].asString();
  try {
    return std::stoi(index);
  } catch (...) {
    return 0;
  }
}

}  // namespace

KubernetesBackend::KubernetesBackend(std::string name, config::ClusterSettings settings,
                                     kube::KubeContext context, CommandRunner* exec_runner,
                                     bool watch)
    : name_(std::move(name)), settings_(std::move(settings)) {
  namespace_ = settings_.namespace_name.empty() ? context.namespace_name : settings_.namespace_name;
  api_ = std::make_unique<kube::ApiClient>(name_, std::move(context), exec_runner);
  if (watch) {
    nodes_ = std::make_unique<kube::Informer<kube::NodeFacts>>(*api_, "/api/v1/nodes", NodeOf);
    pods_ = std::make_unique<kube::Informer<kube::PodFacts>>(*api_, "/api/v1/pods", PodOf);
    jobs_ = std::make_unique<kube::Informer<Json::Value>>(
        *api_, kube::WithQuery(NamespacePath("jobs"), {{"labelSelector", kManagedSelector}}),
        kube::MaskedDecoder(kube::JobMask()));
    managed_pods_ = std::make_unique<kube::Informer<Json::Value>>(
        *api_, kube::WithQuery(NamespacePath("pods"), {{"labelSelector", kManagedSelector}}),
        kube::MaskedDecoder(kube::PodMask()));
  }
}

KubernetesBackend::~KubernetesBackend() = default;

template <typename T>
Result<kube::ObjectsOf<T>> KubernetesBackend::Current(
    kube::Informer<T>* informer, const std::string& path,
    const typename kube::Informer<T>::Decode& decode, milliseconds timeout) {
  if (informer != nullptr) {
    // The first look waits for the first list (it is that list).
    (void)informer->WaitSynced(std::min<milliseconds>(timeout, std::chrono::seconds(30)));
    if (auto objects = informer->Snapshot(std::chrono::seconds(5))) return std::move(*objects);
    if (informer->Watching()) {
      // A quiet watch: one cheap question says whether the server is still
      // there (a stopped one must not be answered for from the cache).
      auto ping = api_->Call("GET", "/version", nullptr,
                             std::min<milliseconds>(timeout, std::chrono::seconds(5)));
      if (!ping.ok()) return ping.status();
      informer->Heard();
      if (auto objects = informer->Snapshot(std::chrono::seconds(5))) return std::move(*objects);
    }
  }
  kube::ObjectsOf<T> objects;
  SKY_RETURN_IF_ERROR(api_->ListEach(path, timeout,
                                     [&](JsonCursor& item) -> Status {
                                       SKY_ASSIGN_OR_RETURN(T object, decode(item));
                                       objects.push_back(
                                           std::make_shared<const T>(std::move(object)));
                                       return OkStatus();
                                     })
                          .status());
  return objects;
}

namespace {
template <typename T>
std::vector<const T*> Pointers(const kube::ObjectsOf<T>& objects) {
  std::vector<const T*> out;
  out.reserve(objects.size());
  for (const auto& o : objects) out.push_back(o.get());
  return out;
}
}  // namespace

Capabilities KubernetesBackend::capabilities() const { return KubernetesCapabilities(); }

Capabilities KubernetesCapabilities() {
  Capabilities c;
  c.kind = "kubernetes";
  c.unsupported = {{"job arrays", "run on Slurm clusters only (for now)"},
                   {"heterogeneous jobs", "a Job's pods all have one shape"},
                   {"--dependency", "names Slurm job ids"},
                   {"salloc, srun allocations", "a pod runs a batch script, not a terminal"}};
  // A Job is named by the number skyslurmd gives it (the namespace's counter).
  c.own_job_ids = false;
  // From free nodes, pending pods and deadlines (start_model.h).
  c.estimates = Capabilities::Estimates::kOwnView;
  // The folder travels in the job's ConfigMap, unpacked in each pod.
  c.folders = Capabilities::Folders::kPacked;
  c.default_workdir = "its image's working directory";
  c.billing = false;
  c.arrays = false;
  c.client_commands = false;
  // Pods are not the user's Slurm jobs: a Slurm cluster wins a tie.
  c.overflow = true;
  c.skypilot_cloud = "k8s";
  return c;
}

translate::Translation KubernetesBackend::Translate(
    const job::Request& request, const cluster::Description& target,
    const translate::TranslateContext& context) const {
  return kube::TranslateForKubernetes(request, target, context);
}

std::string KubernetesBackend::NamespacePath(std::string_view resource) const {
  const bool batch = resource == "jobs";
  return fmt::format("/{}/namespaces/{}/{}", batch ? "apis/batch/v1" : "api/v1", namespace_,
                     resource);
}

Result<cluster::Inventory> KubernetesBackend::Probe(milliseconds timeout) {
  // Nodes and unfinished pods side by side, each on its own connection (or
  // both from the watches).
  auto pods = std::async(std::launch::async, [this, timeout] {
    return Current(
        pods_.get(),
        kube::WithQuery("/api/v1/pods",
                        {{"fieldSelector", "status.phase!=Succeeded,status.phase!=Failed"}}),
        PodOf, timeout);
  });
  auto nodes = Current(nodes_.get(), "/api/v1/nodes", NodeOf, timeout);
  auto listed_pods = pods.get();
  if (!nodes.ok()) return nodes.status();
  if (!listed_pods.ok()) return listed_pods.status();
  cluster::Inventory inv =
      kube::InventoryFromFacts(Pointers(*nodes), Pointers(*listed_pods),
                               {name_, namespace_, settings_.gpu_labels, std::time(nullptr)});
  std::lock_guard lock(mu_);
  last_ = inv;
  last_at_ = std::chrono::steady_clock::now();
  return inv;
}

Result<cluster::Inventory> KubernetesBackend::RecentInventory(milliseconds timeout) {
  {
    std::lock_guard lock(mu_);
    if (last_ && std::chrono::steady_clock::now() - last_at_ < std::chrono::seconds(5))
      return *last_;
  }
  return Probe(timeout);
}

CheckAnswer KubernetesBackend::Check(milliseconds timeout) {
  const Deadline deadline(timeout);
  auto version = api_->Call("GET", "/version", nullptr, timeout);
  if (!version.ok()) {
    return {.verdict =
                version.status().code() == StatusCode::kUnauthenticated ? "refused" : "unreachable",
            .detail = version.status().message()};
  }
  auto probe = Probe(deadline.left());
  if (!probe.ok()) {
    return {
        .verdict = probe.status().code() == StatusCode::kUnauthenticated ? "refused" : "no answer",
        .detail = probe.status().message()};
  }
  std::size_t usable = 0;
  for (const auto& n : probe->description.nodes) {
    if (n.usable()) ++usable;
  }
  return {.detail = fmt::format("Kubernetes {}; namespace {}; {}/{} nodes usable",
                                (*version)["gitVersion"].asString(), namespace_, usable,
                                probe->description.nodes.size())};
}

Result<StartEstimate> KubernetesBackend::EstimateStart(const translate::TranslatedJob& job,
                                                       milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(kube::JobShape shape, kube::ShapeOf(job));
  auto inv = RecentInventory(timeout);
  // The API server's trouble is no refusal of the job (backend.h).
  if (!inv.ok()) return UnavailableError(inv.status().message());
  auto start = kube::ModelStart(shape, *inv, std::time(nullptr));
  if (!start) {
    return UnavailableError(
        fmt::format("{}: no start in view: its nodes cannot hold {} pod(s) "
                    "of this shape",
                    name_, shape.pods));
  }
  StartEstimate e;
  e.start = start->start;
  e.partition = namespace_;
  for (const auto& n : start->nodes) e.nodes += (e.nodes.empty() ? "" : ",") + n;
  e.basis = start->basis;
  e.counts_work_ahead = true;
  return e;
}

// Past every number taken in the namespace: by a Job, or by a ConfigMap (the
// first object a submission makes, so its claim on the number; one left by a
// submission that died before its Job was made holds its number too).
Result<long> KubernetesBackend::NextNativeId(milliseconds timeout) {
  const Deadline deadline(timeout);
  const JsonMask labels = JsonMask::Of({"metadata.labels"});
  long highest = 0;
  for (const char* resource : {"jobs", "configmaps"}) {
    SKY_ASSIGN_OR_RETURN(kube::ListResult listed,
                         api_->ListAll(kube::WithQuery(NamespacePath(resource),
                                                       {{"labelSelector", kManagedSelector}}),
                                       deadline.left(), &labels));
    for (const auto& o : listed.items) {
      highest = std::max(highest, NumberOf(o["metadata"]["labels"][kube::kJobIdLabel]));
    }
  }
  return highest + 1;
}

Result<long> KubernetesBackend::ClaimNumber(long floor, milliseconds timeout) {
  const Deadline deadline(timeout);
  const std::string path = NamespacePath("configmaps") + "/" + kNumberCounter;
  std::lock_guard lock(counter_mu_);
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (counter_version_.empty()) {
      auto got = api_->Call("GET", path, nullptr, deadline.left());
      if (!got.ok() && got.status().code() == StatusCode::kNotFound) {
        // The namespace's first submission (or the counter was deleted):
        // it starts past every number in use.
        SKY_ASSIGN_OR_RETURN(long next, NextNativeId(deadline.left()));
        const long n = std::max(floor, next);
        Json::Value counter(Json::objectValue);
        counter["apiVersion"] = "v1";
        counter["kind"] = "ConfigMap";
        counter["metadata"]["name"] = kNumberCounter;
        counter["metadata"]["namespace"] = namespace_;
        counter["metadata"]["labels"][kube::kManagedByLabel] = "skyslurm";
        counter["data"]["next"] = std::to_string(n + 1);
        auto made = api_->Call("POST", NamespacePath("configmaps"), &counter, deadline.left());
        if (made.ok()) {
          counter_version_ = (*made)["metadata"]["resourceVersion"].asString();
          counter_next_ = n + 1;
          return n;
        }
        if (made.status().code() == StatusCode::kAlreadyExists) continue;  // a racing first
        return made.status();
      }
      if (!got.ok()) return got.status();
      counter_version_ = (*got)["metadata"]["resourceVersion"].asString();
      counter_next_ = NumberOf((*got)["data"]["next"]);
      if (counter_next_ <= 0) {  // garbled by hand: past every number in use
        SKY_ASSIGN_OR_RETURN(counter_next_, NextNativeId(deadline.left()));
      }
    }
    const long n = std::max(floor, counter_next_);
    Json::Value patch(Json::objectValue);
    patch["metadata"]["resourceVersion"] = counter_version_;  // only over what was read
    patch["data"]["next"] = std::to_string(n + 1);
    auto written =
        api_->Call("PATCH", path, &patch, deadline.left(), "application/merge-patch+json");
    if (written.ok()) {
      counter_version_ = (*written)["metadata"]["resourceVersion"].asString();
      counter_next_ = n + 1;
      return n;
    }
    counter_version_.clear();
    // Conflict (another submitter wrote it first) or gone: read it again.
    if (written.status().code() == StatusCode::kFailedPrecondition ||
        written.status().code() == StatusCode::kNotFound) {
      continue;
    }
    return written.status();
  }
  return UnavailableError(
      fmt::format("{}: no job number: the counter {} kept changing under other submitters", name_,
                  kNumberCounter));
}

Result<JobKey> KubernetesBackend::Submit(const SubmitSpec& spec, milliseconds timeout) {
  const Deadline deadline(timeout);
  SKY_ASSIGN_OR_RETURN(kube::JobShape shape, kube::ShapeOf(spec.job));
  const std::string by_sky_id = std::string(kube::kSkyIdLabel) + "=" + spec.sky_id;
  std::set<std::string> made_jobs;  // the numbers of this sky id's Jobs, on a retry
  if (!spec.first_attempt) {
    // A retry: the job this sky id already made, if any.
    SKY_ASSIGN_OR_RETURN(
        kube::ListResult found,
        api_->ListAll(kube::WithQuery(NamespacePath("jobs"), {{"labelSelector", by_sky_id}}),
                      deadline.left()));
    // Only a live one: a finished Job is an earlier attempt's (a restart's
    // predecessor), as Slurm's ended jobs are not in squeue.
    for (const Json::Value& j : found.items) {
      made_jobs.insert(j["metadata"]["labels"][kube::kJobIdLabel].asString());
      if (j["metadata"].isMember("deletionTimestamp")) continue;
      if (!IsLive(kube::StatusOf(j, {}).phase)) continue;
      return JobKey{name_, j["metadata"]["labels"][kube::kJobIdLabel].asString()};
    }
  }
  kube::ManifestInput in;
  in.shape = shape;
  in.script = spec.job.script;
  in.script_args = spec.job.script_args;
  in.sky_id = spec.sky_id;
  in.cluster = name_;
  in.namespace_name = namespace_;
  in.workdir = spec.workdir;
  in.folder_archive = spec.folder_archive;
  in.restartable = spec.restartable;
  if (spec.environment) {
    if (auto user = spec.environment->find("USER"); user != spec.environment->end())
      in.user = user->second;
  }
  in.env = spec.export_env;
  for (const auto& kv : spec.export_values) in.env.push_back(kv);
  if (spec.user_export) {
    for (const std::string& item : SplitList(*spec.user_export)) {
      const auto eq = item.find('=');
      if (eq != std::string::npos) in.env.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  }
  // The job's number: the one an earlier attempt of this submission claimed
  // (its ConfigMap made, its Job not), else a new one from the counter, at
  // least the one given.
  std::string id;
  if (!spec.first_attempt) {
    SKY_ASSIGN_OR_RETURN(
        kube::ListResult mine,
        api_->ListAll(kube::WithQuery(NamespacePath("configmaps"), {{"labelSelector", by_sky_id}}),
                      deadline.left()));
    for (const Json::Value& c : mine.items) {
      const std::string number = c["metadata"]["labels"][kube::kJobIdLabel].asString();
      // One a Job owns (or owned: deleted, its collector not done yet) is
      // not free, whatever the list of Jobs says now.
      if (c["metadata"].isMember("deletionTimestamp") ||
          c["metadata"].isMember("ownerReferences") || made_jobs.count(number) > 0) {
        continue;
      }
      id = number;  // no Job made with it
    }
  }
  if (id.empty()) {
    SKY_ASSIGN_OR_RETURN(long n,
                         ClaimNumber(NumberOf(Json::Value(spec.native_id)), deadline.left()));
    id = std::to_string(n);
  }
  for (int attempt = 0;; ++attempt) {
    in.native_id = id;
    const kube::Manifests m = kube::BuildManifests(in);
    auto made = api_->Call("POST", NamespacePath("configmaps"), &m.config_map, deadline.left());
    if (!made.ok() && made.status().code() == StatusCode::kAlreadyExists) {
      auto there = api_->Call("GET", NamespacePath("configmaps") + "/" + kube::ObjectName(id),
                              nullptr, deadline.left());
      const bool ours =
          there.ok() && (*there)["metadata"]["labels"][kube::kSkyIdLabel].asString() == spec.sky_id;
      if (!ours) {
        // Taken outside the counter (by a submitter of an older skyslurm, or
        // the counter was deleted): a number past every one in use.
        if (attempt >= 3) return made.status();
        SKY_ASSIGN_OR_RETURN(long next, NextNativeId(deadline.left()));
        SKY_ASSIGN_OR_RETURN(
            long n, ClaimNumber(std::max(next, NumberOf(Json::Value(id)) + 1), deadline.left()));
        id = std::to_string(n);
        continue;
      }
    } else if (!made.ok()) {
      return made.status();
    }
    if (!m.secret.isNull()) {
      auto secret = api_->Call("POST", NamespacePath("secrets"), &m.secret, deadline.left());
      if (!secret.ok() && secret.status().code() == StatusCode::kAlreadyExists) {
        // An earlier attempt's, or one left behind: this job's values, not its.
        secret = api_->Call("PUT", NamespacePath("secrets") + "/" + kube::ObjectName(id), &m.secret,
                            deadline.left());
      }
      if (!secret.ok()) return secret.status();
    }
    auto service = api_->Call("POST", NamespacePath("services"), &m.service, deadline.left());
    if (!service.ok() && service.status().code() != StatusCode::kAlreadyExists) {
      return service.status();
    }
    auto job = api_->Call("POST", NamespacePath("jobs"), &m.job, deadline.left());
    if (!job.ok() && job.status().code() == StatusCode::kAlreadyExists) {
      job = api_->Call("GET", NamespacePath("jobs") + "/" + kube::ObjectName(id), nullptr,
                       deadline.left());
    }
    if (!job.ok()) return job.status();
    // The ConfigMap, the Service and the Secret go with the Job (garbage
    // collection).
    const Json::Value owner = OwnerPatch(*job);
    for (const char* resource : {"configmaps", "services", "secrets"}) {
      if (std::string_view(resource) == "secrets" && m.secret.isNull()) continue;
      (void)api_->Call("PATCH", NamespacePath(resource) + "/" + kube::ObjectName(id), &owner,
                       deadline.left(), "application/merge-patch+json");
    }
    return JobKey{name_, id};
  }
}

std::optional<cluster::QueuedJob> KubernetesBackend::AsQueued(const SubmitSpec& spec,
                                                              const JobKey& key) const {
  // Listed by its pods' key (inventory.h), not its number.
  cluster::QueuedJob q = QueuedAsSubmitted(spec, key);
  q.job_id = namespace_ + "/" + kube::ObjectName(key.job_id);
  return q;
}

Result<std::vector<JobInfo>> KubernetesBackend::Queue(milliseconds timeout) {
  const Deadline deadline(timeout);
  auto pods_listed = std::async(std::launch::async, [this, timeout] {
    return Current(managed_pods_.get(),
                   kube::WithQuery(NamespacePath("pods"), {{"labelSelector", kManagedSelector}}),
                   kube::MaskedDecoder(kube::PodMask()), timeout);
  });
  auto jobs = Current(jobs_.get(),
                      kube::WithQuery(NamespacePath("jobs"), {{"labelSelector", kManagedSelector}}),
                      kube::MaskedDecoder(kube::JobMask()), timeout);
  auto pods = pods_listed.get();
  if (!jobs.ok()) return jobs.status();
  if (!pods.ok()) return pods.status();
  std::map<std::string, std::vector<Json::Value>> by_job;
  for (const auto& p : *pods) {
    const Json::Value& meta = (*p)["metadata"];
    by_job[meta["labels"][kube::kJobIdLabel].asString()].push_back(*p);
  }
  std::vector<JobInfo> out;
  const std::time_t now = std::time(nullptr);
  for (const auto& jp : *jobs) {
    const Json::Value& j = *jp;
    const Json::Value& meta = j["metadata"];
    if (meta.isMember("deletionTimestamp")) continue;  // being cancelled: gone for the queue
    const std::string id = meta["labels"][kube::kJobIdLabel].asString();
    kube::JobStatus s = kube::StatusOf(j, by_job[id]);
    JobInfo info;
    info.key = {name_, id};
    info.sky_id = meta["labels"][kube::kSkyIdLabel].asString();
    info.phase = s.phase;
    info.state = s.state;
    info.reason = s.reason;
    if (s.image_pull_stuck_since != 0 &&
        now - s.image_pull_stuck_since >= settings_.image_pull_timeout) {
      // Pending for ever on a real cluster: the job fails here, saying why.
      (void)Cancel(id, false, deadline.left());
      info.phase = JobPhase::kFailed;
      info.reason =
          fmt::format("{} for {} s (image_pull_timeout {} s): {}; the job was deleted", s.state,
                      now - s.image_pull_stuck_since, settings_.image_pull_timeout, s.reason);
    }
    info.partition = namespace_;
    info.user = meta["annotations"]["skyslurm.io/user"].asString();
    info.name = meta["annotations"]["skyslurm.io/job-name"].asString();
    info.submit_time = ParseRfc3339(meta["creationTimestamp"].asString()).value_or(0);
    info.start_time = s.start;
    info.end_time = s.end;
    info.exit_code = s.exit_code;
    out.push_back(std::move(info));
  }
  return out;
}

Status KubernetesBackend::Cancel(const std::string& job_id, bool only_if_pending,
                                 milliseconds timeout) {
  const Deadline deadline(timeout);
  const std::string name = kube::ObjectName(job_id);
  if (only_if_pending) {
    SKY_ASSIGN_OR_RETURN(kube::ListResult pods, PodsOf(job_id, deadline.left()));
    for (const auto& p : pods.items) {
      if (p["status"]["phase"].asString() != "Pending") return OkStatus();  // started: left
    }
  }
  Json::Value options(Json::objectValue);
  options["kind"] = "DeleteOptions";
  options["apiVersion"] = "v1";
  options["propagationPolicy"] = "Background";
  auto deleted =
      api_->Call("DELETE", NamespacePath("jobs") + "/" + name, &options, deadline.left());
  if (!deleted.ok()) return deleted.status();
  for (const char* resource : {"services", "configmaps"}) {
    auto gone =
        api_->Call("DELETE", NamespacePath(resource) + "/" + name, &options, deadline.left());
    if (!gone.ok() && gone.status().code() != StatusCode::kNotFound) return gone.status();
  }
  return OkStatus();
}

Result<kube::ListResult> KubernetesBackend::PodsOf(const std::string& job_id,
                                                   milliseconds timeout) {
  return api_->ListAll(
      kube::WithQuery(NamespacePath("pods"),
                      {{"labelSelector", std::string(kube::kJobIdLabel) + "=" + job_id}}),
      timeout);
}

Result<std::string> KubernetesBackend::Output(const std::string& job_id, milliseconds timeout) {
  const Deadline deadline(timeout);
  SKY_ASSIGN_OR_RETURN(kube::ListResult pods, PodsOf(job_id, deadline.left()));
  if (pods.items.empty()) {
    return NotFoundError(fmt::format("{}: job {} has no pods", name_, job_id));
  }
  std::stable_sort(
      pods.items.begin(), pods.items.end(),
      [](const Json::Value& a, const Json::Value& b) { return IndexOf(a) < IndexOf(b); });
  // While a pod still runs, rank 0 alone (as Slurm's batch output is the
  // batch step's): what `skyslurm logs -f` has shown stays the start of
  // what it is shown next. Once all have ended, every rank.
  bool live = false;
  for (const auto& p : pods.items) {
    const std::string phase = p["status"]["phase"].asString();
    live = live || (phase != "Succeeded" && phase != "Failed");
  }
  std::string out;
  for (const auto& p : pods.items) {
    if (live && IndexOf(p) != 0) continue;
    const std::string pod = p["metadata"]["name"].asString();
    auto log = api_->GetText(NamespacePath("pods") + "/" + pod + "/log", deadline.left());
    if (!log.ok()) {
      if (p["status"]["phase"].asString() == "Pending") continue;  // nothing written yet
      return log.status();
    }
    if (IndexOf(p) != 0) out += fmt::format("==> rank {} ({}) <==\n", IndexOf(p), pod);
    out += *log;
  }
  return out;
}

}  // namespace skyslurm::backend
