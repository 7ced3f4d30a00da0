#include "broker/backend/factory.h"

#include <fmt/format.h>

#include "broker/backend/slurm_local.h"
#include "broker/backend/slurm_ssh.h"

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

}  // namespace

std::shared_ptr<const JobTranslator> TranslatorFor(std::string_view kind) {
  static const auto slurm = std::make_shared<const SlurmTranslator>();
  (void)kind;  // Slurm's is the only kind described by a file
  return slurm;
}

MadeCluster MakeCluster(const cluster::ClusterEntry& entry, const config::ClusterSettings& settings,
                        const FactoryOptions& options) {
  MadeCluster made;
  std::shared_ptr<SlurmBackend> slurm;
  switch (entry.access) {
    case cluster::ClusterEntry::Access::kDescriptionFile: {
      auto d = cluster::ReadDescriptionFile(entry.description_file);
      if (d.ok()) {
        made.offline = std::move(*d);
      } else {
        made.unavailable = d.status().message();
      }
      break;
    }
    case cluster::ClusterEntry::Access::kLocal:
      slurm = std::make_shared<SlurmLocalBackend>(entry.name, entry.slurm_conf, entry.modulepath,
                                                  options.slurm_bin_dir);
      break;
    case cluster::ClusterEntry::Access::kSsh:
      if (entry.ssh) {
        auto peer = std::make_shared<SlurmSshBackend>(entry.name, ssh::TargetFromConfig(*entry.ssh));
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
