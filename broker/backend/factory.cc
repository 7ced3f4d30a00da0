#include "broker/backend/factory.h"

#include <fmt/format.h>

#include "broker/backend/kubernetes_backend.h"
#include "broker/backend/slurm_local.h"
#include "broker/backend/slurm_ssh.h"
#include "broker/config/paths.h"
#include "broker/kube/job_translator.h"
#include "broker/kube/kubeconfig.h"

namespace skyslurm::backend {
namespace {

// Slurm's translation for a cluster known only by its description file.
class SlurmTranslator : public JobTranslator {
 public:
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return translate::Translate(request, target, context);
  }
};

class KubernetesTranslator : public JobTranslator {
 public:
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return kube::TranslateForKubernetes(request, target, context);
  }
};

}  // namespace

std::shared_ptr<const JobTranslator> TranslatorFor(std::string_view kind) {
  static const auto slurm = std::make_shared<const SlurmTranslator>();
  static const auto kubernetes = std::make_shared<const KubernetesTranslator>();
  if (kind == "kubernetes") return kubernetes;
  return slurm;
}

MadeCluster MakeCluster(const cluster::ClusterEntry& entry, const config::ClusterSettings& settings,
                        const FactoryOptions& options) {
  MadeCluster made;
  std::shared_ptr<SlurmBackend> slurm;
  switch (entry.access) {
    case cluster::ClusterEntry::Access::kKubernetes: {
      const std::string context = settings.context.empty() ? entry.name : settings.context;
      const std::vector<std::string> files =
          settings.kubeconfig.empty()
              ? kube::KubeconfigFiles(options.kubeconfig_env, options.home)
              : kube::KubeconfigFiles(config::ExpandHome(settings.kubeconfig, options.home),
                                      options.home);
      auto loaded = kube::LoadContext(files, context);
      if (!loaded.ok()) {
        made.unavailable = loaded.status().message();
        made.translator = TranslatorFor("kubernetes");
        return made;
      }
      auto k8s = std::make_shared<KubernetesBackend>(entry.name, settings, std::move(*loaded),
                                                     options.exec_runner, options.watch);
      made.backend = k8s;
      made.translator = k8s;
      return made;
    }
    case cluster::ClusterEntry::Access::kDescriptionFile: {
      auto d = cluster::ReadDescriptionFile(entry.description_file);
      if (d.ok()) {
        made.offline = std::move(*d);
      } else {
        made.unavailable = d.status().message();
      }
      break;
    }
    case cluster::ClusterEntry::Access::kLocal: {
      auto local = std::make_shared<SlurmLocalBackend>(entry.name, entry.slurm_conf,
                                                       entry.modulepath, options.slurm_bin_dir);
      local->UseRest(settings.access == "rest");
      slurm = local;
      break;
    }
    case cluster::ClusterEntry::Access::kSsh:
      if (entry.ssh) {
        auto peer =
            std::make_shared<SlurmSshBackend>(entry.name, ssh::TargetFromConfig(*entry.ssh));
        peer->UseRest(settings.access == "rest");
        slurm = peer;
      } else {
        made.unavailable = fmt::format(
            "{} is in skyslurm.yaml but not in {} (and has no slurm_conf or description)",
            entry.name, options.clusters_file);
      }
      break;
  }
  if (slurm != nullptr) {
    if (!options.cache_dir.empty()) slurm->CacheModules(options.cache_dir, std::chrono::hours(1));
    made.backend = slurm;
    made.translator = slurm;
  } else {
    made.translator = TranslatorFor("slurm");
  }
  return made;
}

}  // namespace skyslurm::backend
