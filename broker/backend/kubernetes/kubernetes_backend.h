// A Kubernetes cluster as a backend: reached over its API (kube/api_client.h)
// with the user's kubeconfig context, never kubectl. A job becomes a
// ConfigMap, a headless Service and an Indexed Job (kube/manifests.h) in
// the configured namespace, named by the job's number on this cluster
// (skyslurmd's, or the next free one); its sky id is a label, so a retried
// submission finds it. Probes list nodes and unfinished pods (in pages);
// estimates come from that view (kube/start_model.h), never a dry run.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "broker/backend/backend.h"
#include "broker/config/settings.h"
#include "broker/kube/api_client.h"
#include "broker/kube/informer.h"

namespace skyslurm::backend {

class KubernetesBackend : public Backend {
 public:
  // `exec_runner` runs the context's exec credential plugin, if it has one.
  // `watch`: keep nodes, pods and skyslurm's Jobs current from watches
  // (kube/informer.h) so that a probe or a queue read asks no one (the
  // daemon); else every call lists (a command's one decision).
  KubernetesBackend(std::string name, config::ClusterSettings settings, kube::KubeContext context,
                    CommandRunner* exec_runner, bool watch = false);
  ~KubernetesBackend() override;

  const std::string& name() const override { return name_; }
  Capabilities capabilities() const override;
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override;
  Result<cluster::Inventory> Probe(std::chrono::milliseconds timeout) override;
  // "Kubernetes v1.32.0", then the probe.
  CheckAnswer Check(std::chrono::milliseconds timeout) override;
  Result<StartEstimate> EstimateStart(const translate::TranslatedJob& job,
                                      std::chrono::milliseconds timeout) override;
  Result<JobKey> Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) override;
  std::optional<cluster::QueuedJob> AsQueued(const SubmitSpec& spec,
                                             const JobKey& key) const override;
  // The skyslurm Jobs of the namespace. A job whose pod has been unable to
  // pull its image for image_pull_timeout is deleted here and answered as
  // failed (a real cluster would leave it pending forever).
  Result<std::vector<JobInfo>> Queue(std::chrono::milliseconds timeout) override;
  // Deletes the Job (its pods with it: Background propagation), its Service
  // and ConfigMap. With only_if_pending, a job with a running pod is left.
  Status Cancel(const std::string& job_id, bool only_if_pending,
                std::chrono::milliseconds timeout) override;
  // The pods' logs, rank 0 first; once every pod has ended, the other ranks'
  // after it, each under a "==> rank N (pod) <==" line.
  Result<std::string> Output(const std::string& job_id, std::chrono::milliseconds timeout) override;

  const std::string& namespace_name() const { return namespace_; }
  kube::ApiClient& api() { return *api_; }

 private:
  std::string NamespacePath(std::string_view resource) const;
  // One past the highest number held by a Job or a ConfigMap of skyslurm's
  // in the namespace (a scan: the counter's first value).
  Result<long> NextNativeId(std::chrono::milliseconds timeout);
  // A job number never given before in the namespace, at least `floor`:
  // taken from the namespace's counter (ConfigMap skyslurm-job-numbers), updated
  // under its resourceVersion, so that submitters of every user and daemon
  // share it and a number whose job was deleted (its pods perhaps still
  // terminating, still selected by their job's label) is never used again.
  Result<long> ClaimNumber(long floor, std::chrono::milliseconds timeout);
  // The pods of the job numbered `job_id`.
  Result<kube::ListResult> PodsOf(const std::string& job_id, std::chrono::milliseconds timeout);
  // The last probe when it is younger than a few seconds, else a new one.
  Result<cluster::Inventory> RecentInventory(std::chrono::milliseconds timeout);
  // An informer's objects when it is current, else a list of `path` decoded
  // as the informer decodes (an error when the server does not answer).
  template <typename T>
  Result<kube::ObjectsOf<T>> Current(kube::Informer<T>* informer, const std::string& path,
                                     const typename kube::Informer<T>::Decode& decode,
                                     std::chrono::milliseconds timeout);

  std::string name_;
  config::ClusterSettings settings_;
  std::string namespace_;
  std::unique_ptr<kube::ApiClient> api_;
  // With `watch`: every node and pod of the cluster (their facts, for the
  // inventory); skyslurm's own Jobs and pods in the namespace (for the queue).
  std::unique_ptr<kube::Informer<kube::NodeFacts>> nodes_;
  std::unique_ptr<kube::Informer<kube::PodFacts>> pods_;
  std::unique_ptr<kube::Informer<Json::Value>> jobs_, managed_pods_;
  std::mutex mu_;
  // The counter as last written or read (kept: one round trip a claim while
  // no other submitter writes it).
  std::mutex counter_mu_;
  std::string counter_version_;
  long counter_next_ = 0;
  std::optional<cluster::Inventory> last_;
  std::chrono::steady_clock::time_point last_at_{};
};

// What every Kubernetes cluster offers.
Capabilities KubernetesCapabilities();

}  // namespace skyslurm::backend
