#include "broker/backend/slurm/slurm_kind.h"

#include <fmt/format.h>

#include "broker/backend/slurm/slurm_backend.h"
#include "broker/backend/slurm/slurm_local.h"
#include "broker/backend/slurm/slurm_ssh.h"
#include "broker/backend/slurm/slurm_translator.h"

namespace skyslurm::backend {
namespace {

// Slurm's translation for a cluster known only by its description file.
class SlurmTranslator : public JobTranslator {
 public:
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return translate::TranslateForSlurm(request, target, context);
  }
};

MadeCluster MakeSlurmCluster(const cluster::ClusterEntry& entry,
                             const config::ClusterSettings& settings,
                             const FactoryOptions& options) {
  MadeCluster made;
  std::shared_ptr<SlurmBackend> slurm;
  if (entry.access == cluster::ClusterEntry::Access::kLocal) {
    auto local = std::make_shared<SlurmLocalBackend>(entry.name, entry.slurm_conf, entry.modulepath,
                                                     options.slurm_bin_dir);
    local->UseRest(settings.access == "rest");
    if (!options.run_as_helper.empty()) local->RunAsUsers(options.run_as_helper);
    slurm = local;
  } else if (entry.ssh) {
    ssh::SshTarget target = ssh::TargetFromConfig(*entry.ssh);
    target.session = entry.session;
    target.one_time_code = settings.one_time_code;
    auto peer = std::make_shared<SlurmSshBackend>(entry.name, std::move(target));
    peer->UseRest(settings.access == "rest");
    slurm = peer;
  } else {
    made.unavailable =
        fmt::format("{} is in skyslurm.yaml but not in {} (and has no slurm_conf or description)",
                    entry.name, options.clusters_file);
    return made;
  }
  if (!options.cache_dir.empty()) slurm->CacheModules(options.cache_dir, std::chrono::hours(1));
  made.backend = slurm;
  return made;
}

}  // namespace

BackendKind SlurmKind() {
  return {"slurm", SlurmCapabilities(), std::make_shared<const SlurmTranslator>(),
          MakeSlurmCluster};
}

}  // namespace skyslurm::backend
