#include "broker/backend/kubernetes/kubernetes_kind.h"

#include "broker/backend/kubernetes/job_translator.h"
#include "broker/backend/kubernetes/kubernetes_backend.h"
#include "broker/config/paths.h"
#include "broker/kube/kubeconfig.h"

namespace skyslurm::backend {
namespace {

// Kubernetes' translation for a cluster whose context cannot be loaded.
class KubernetesTranslator : public JobTranslator {
 public:
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return kube::TranslateForKubernetes(request, target, context);
  }
};

MadeCluster MakeKubernetesCluster(const cluster::ClusterEntry& entry,
                                  const config::ClusterSettings& settings,
                                  const FactoryOptions& options) {
  MadeCluster made;
  const std::string context = settings.context.empty() ? entry.name : settings.context;
  const std::vector<std::string> files =
      settings.kubeconfig.empty()
          ? kube::KubeconfigFiles(options.kubeconfig_env, options.home)
          : kube::KubeconfigFiles(config::ExpandHome(settings.kubeconfig, options.home),
                                  options.home);
  auto loaded = kube::LoadContext(files, context);
  if (!loaded.ok()) {
    made.unavailable = loaded.status().message();
    return made;
  }
  auto k8s = std::make_shared<KubernetesBackend>(entry.name, settings, std::move(*loaded),
                                                 options.exec_runner, options.watch);
  made.backend = k8s;
  return made;
}

}  // namespace

BackendKind KubernetesKind() {
  return {"kubernetes", KubernetesCapabilities(), std::make_shared<const KubernetesTranslator>(),
          MakeKubernetesCluster};
}

}  // namespace skyslurm::backend
