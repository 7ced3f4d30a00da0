// A site's skyslurmd (`skyslurmd --site`): its own file,
// /etc/skyslurm/site.yaml, documented key by key in docs/site.md. The
// clusters themselves are configured as for everyone
// (/etc/skyslurm/skyslurm.yaml); this file says where the site keeps its
// state, where this replica listens, who its admins are, and by what trust
// it acts as each user on each cluster.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "broker/config/settings.h"
#include "broker/util/status.h"

namespace skyslurm::config {

// How the site acts as a user on a cluster.
enum class SiteTrust {
  // The cluster's controller is reached from the site's hosts, which share
  // its munge key: its commands run as the user through skyslurmd-runas.
  kLocal,
};

struct SiteSettings {
  std::string file;      // where it was read from
  std::string database;  // postgresql://... (or a SQLite file: one replica only)
  std::string listen;    // host:port this replica serves its API on
  // This replica's name in the jobs' leases (default: the host name and
  // the port it listens on).
  std::string replica;
  std::chrono::milliseconds lease{10000};  // how long a job's lease lasts unrenewed
  // Start estimates (sbatch --test-only, as each user) asked of one cluster
  // per second at most, by each replica.
  int estimates_per_second = 10;
  std::string admin_group;                 // its members see and act on every job
  std::string munge_socket;                // "" = munged's default
  std::string runas = "/usr/libexec/skyslurm/skyslurmd-runas";
  std::string state_dir = "/var/lib/skyslurm";  // its working folder
  // The key what the store keeps sealed (a job's environment, a task's
  // secrets) is sealed with: the same file on every replica; made (0600)
  // by the first replica to start when missing.
  std::string secret_key = "/var/lib/skyslurm/site.key";
  // Clusters the site acts on, by name; a cluster of skyslurm.yaml not named
  // here is left out of the site's placements.
  std::map<std::string, SiteTrust> trust;
};

inline constexpr std::string_view kSiteSettingsFile = "/etc/skyslurm/site.yaml";

// The keys of site.yaml, with what each means (docs/site.md's table).
const std::vector<SettingKey>& SiteSettingKeys();

// Reads `text` (the file `file`): errors name the file, the line and the key.
Result<SiteSettings> ParseSiteSettings(std::string_view text, const std::string& file);
Result<SiteSettings> ReadSiteSettings(const std::string& file);

// A duration as site.yaml writes it: 10s, 500ms, 2m, 1h, or seconds bare.
Result<std::chrono::milliseconds> ParseSiteDuration(std::string_view text);

}  // namespace skyslurm::config
