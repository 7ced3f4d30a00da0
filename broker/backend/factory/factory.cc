#include "broker/backend/factory/factory.h"

#include <fmt/format.h>

#include <mutex>

#include "broker/backend/kubernetes/kubernetes_kind.h"
#include "broker/backend/slurm/slurm_kind.h"

namespace skyslurm::backend {
namespace {

struct Table {
  std::mutex mu;
  std::vector<std::unique_ptr<const BackendKind>> kinds;
};

Table& Kinds() {
  // The built-in kinds, one row each.
  static Table* table = [] {
    auto* t = new Table;
    t->kinds.push_back(std::make_unique<const BackendKind>(SlurmKind()));
    t->kinds.push_back(std::make_unique<const BackendKind>(KubernetesKind()));
    return t;
  }();
  return *table;
}

}  // namespace

const BackendKind* FindBackendKind(std::string_view name) {
  Table& t = Kinds();
  std::lock_guard lock(t.mu);
  for (const auto& k : t.kinds) {
    if (k->name == name) return k.get();
  }
  return nullptr;
}

void RegisterBackendKind(BackendKind kind) {
  config::AddClusterKind(kind.name);
  Table& t = Kinds();
  std::lock_guard lock(t.mu);
  // Kept (never freed): a workspace made from the old row may still hold it.
  for (auto& k : t.kinds) {
    if (k->name == kind.name) {
      k.release();
      k = std::make_unique<const BackendKind>(std::move(kind));
      return;
    }
  }
  t.kinds.push_back(std::make_unique<const BackendKind>(std::move(kind)));
}

MadeCluster MakeCluster(const cluster::ClusterEntry& entry, const config::ClusterSettings& settings,
                        const FactoryOptions& options) {
  MadeCluster made;
  const BackendKind* kind = FindBackendKind(settings.kind);
  if (kind == nullptr) {
    // The configuration accepts only known kinds: a kind taken away since.
    kind = FindBackendKind(config::kDefaultKind);
    made.unavailable = fmt::format("{}: no backend of kind '{}'", entry.name, settings.kind);
    made.translator = kind->translator;
    return made;
  }
  if (entry.access == cluster::ClusterEntry::Access::kDescriptionFile) {
    auto d = cluster::ReadDescriptionFile(entry.description_file);
    if (d.ok()) {
      made.offline = std::move(*d);
    } else {
      made.unavailable = d.status().message();
    }
  } else {
    made = kind->make(entry, settings, options);
  }
  // A live cluster translates and answers for itself; otherwise its kind.
  if (made.translator == nullptr) {
    made.translator = made.backend != nullptr ? std::shared_ptr<const JobTranslator>(made.backend)
                                              : kind->translator;
  }
  made.capabilities = made.backend != nullptr ? made.backend->capabilities() : kind->capabilities;
  made.capabilities.kind = kind->name;  // the table's name, whatever the backend says
  return made;
}

}  // namespace skyslurm::backend
