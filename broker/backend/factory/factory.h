// The factory table: every kind of backend a cluster's `kind` can name in
// the configuration, and the one place that makes a cluster's backend from
// its registry entry and settings. Everything above it holds a Backend, its
// JobTranslator and its Capabilities, never a kind's class or name.
//
// A new kind of backend is a folder of its own under backend/ (its Backend,
// translator and BackendKind), one row in this table (factory.cc) and its
// name in the configuration's kind list (config/settings.cc); nothing else
// changes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "broker/backend/backend_kind.h"

namespace skyslurm::backend {

// The kind named, or null.
const BackendKind* FindBackendKind(std::string_view name);

// Adds a kind beyond the built-in ones (a test's backend) and makes its
// name one the configuration accepts; a kind of the same name is replaced.
void RegisterBackendKind(BackendKind kind);

// The cluster's backend (a live cluster), its description (a description
// file's), or why there is neither; its translator and capabilities always.
MadeCluster MakeCluster(const cluster::ClusterEntry& entry, const config::ClusterSettings& settings,
                        const FactoryOptions& options);

}  // namespace skyslurm::backend
