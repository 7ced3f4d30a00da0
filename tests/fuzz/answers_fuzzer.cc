// libFuzzer target: any bytes as what a cluster's commands and servers
// answer: sinfo, squeue and sacct (JSON and text), sbatch --test-only, the
// login node's facts, a Kubernetes API server's nodes and pods, a
// kubeconfig and an exec plugin's credential, a SkyPilot task YAML.
#include <cstddef>
#include <cstdint>
#include <string>

#include "broker/backend/slurm/slurm_accounting.h"
#include "broker/backend/slurm/slurm_backend.h"
#include "broker/backend/slurm/slurm_rest.h"
#include "broker/backend/slurm/squeue.h"
#include "broker/cluster/description.h"
#include "broker/config/login_session.h"
#include "broker/daemon/slurm_front/slurm_json.h"
#include "broker/kube/facts.h"
#include "broker/kube/kubeconfig.h"
#include "broker/task/task_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using namespace skyslurm;
  std::string version;
  (void)cluster::ParseSinfoJson(text, &version);
  (void)backend::ParseSqueueJson(text);
  (void)backend::ParseSqueueActive(text);
  (void)backend::ParseSacctNodeUses(text);
  (void)backend::ParseTestOnly(text);
  (void)backend::ParseLoginFacts(text);
  (void)backend::OfferedRestVersions(text);
  (void)config::ParseSessionUntil(text);
  static const daemon::IdMap ids = {{"59", 3959423035}, {"60", 3959423036}};
  static const daemon::Unsettled held = {"59"};
  const std::string home = R"({"meta":{"Slurm":{"release":"22.05.8"}},"errors":[],"jobs":[]})";
  (void)daemon::MergeJobsJson({{home, nullptr, nullptr}, {text, &ids, &held}});
  (void)kube::ReadNodeFacts(text);
  (void)kube::ReadPodFacts(text);
  (void)kube::ParseKubeconfig(text, "/fuzz/kubeconfig", "");
  (void)kube::ParseExecCredential(text);
  (void)task::ParseTask(text, "fuzz-task.yaml");
  return 0;
}
