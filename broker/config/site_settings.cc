#include "broker/config/site_settings.h"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace skyslurm::config {
namespace {

Status Bad(const std::string& file, const YAML::Node& node, const std::string& what) {
  return InvalidArgumentError(fmt::format("{}:{}: {}", file, node.Mark().line + 1, what));
}

Result<std::string> Scalar(const std::string& file, const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return Bad(file, node, fmt::format("'{}' must be a single value", key));
  }
  return node.Scalar();
}

// host:port, the port a number.
Status CheckAddress(const std::string& file, const YAML::Node& node, const std::string& address) {
  const auto colon = address.rfind(':');
  int port = 0;
  const char* end = address.data() + address.size();
  if (colon == std::string::npos || colon == 0 ||
      std::from_chars(address.data() + colon + 1, end, port).ptr != end || port <= 0 ||
      port > 65535) {
    return Bad(file, node, fmt::format("listen must be host:port, not '{}'", address));
  }
  return OkStatus();
}

Status MergeTrust(const std::string& file, const YAML::Node& clusters, SiteSettings& s) {
  if (!clusters.IsMap()) return Bad(file, clusters, "clusters must map each cluster to its trust");
  for (const auto& entry : clusters) {
    const std::string name = entry.first.as<std::string>();
    const YAML::Node trust = entry.second.IsMap() ? entry.second["trust"] : YAML::Node();
    if (!trust) {
      return Bad(file, entry.second,
                 fmt::format("clusters.{}: say its trust (trust: local)", name));
    }
    SKY_ASSIGN_OR_RETURN(std::string how, Scalar(file, trust, "trust"));
    if (how != "local") {
      return Bad(file, trust,
                 fmt::format("clusters.{}.trust: '{}' is not a trust this version has; local (its "
                             "commands run here as the user) is",
                             name, how));
    }
    s.trust[name] = SiteTrust::kLocal;
  }
  return OkStatus();
}

}  // namespace

const std::vector<SettingKey>& SiteSettingKeys() {
  static const std::vector<SettingKey> keys = {
      {"database", "", "",
       "where the site keeps its state: postgresql://user@host:port/db?passfile=... (every "
       "replica the same), or a SQLite file for one replica"},
      {"listen", "", "--listen", "host:port this replica serves its API on"},
      {"replica", "", "", "this replica's name in the jobs' leases (default: host:port)"},
      {"lease", "", "",
       "how long a replica's hold on a job lasts unrenewed before another takes it over "
       "(default 10s)"},
      {"estimates_per_second", "", "",
       "start estimates (sbatch --test-only, as each user) a replica asks of one cluster per "
       "second at most (default 10): each user's are their own, so a busy site needs more"},
      {"admin_group", "", "", "a Unix group whose members see and act on every user's jobs"},
      {"munge_socket", "", "", "munged's socket (default: munged's own)"},
      {"runas", "", "",
       "skyslurmd-runas, the privileged step that runs Slurm's commands as a user (default "
       "/usr/libexec/skyslurm/skyslurmd-runas)"},
      {"state_dir", "", "", "the site daemon's working folder (default /var/lib/skyslurm)"},
      {"secret_key", "", "",
       "the key the store's sealed values (jobs' environments, tasks' secrets) are sealed "
       "with: the same file on every replica, the site daemon's user's only (default "
       "/var/lib/skyslurm/site.key, made when missing)"},
      {"clusters", "", "",
       "each cluster the site acts on and its trust: local (its controller reached here, "
       "sharing its munge key)"},
  };
  return keys;
}

Result<std::chrono::milliseconds> ParseSiteDuration(std::string_view text) {
  long long n = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || n <= 0 || rest == text.data()) {
    return InvalidArgumentError(fmt::format("'{}' is not a duration (10s, 500ms, 2m)", text));
  }
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  long long ms_per = 0;
  if (unit.empty() || unit == "s") ms_per = 1000;
  if (unit == "ms") ms_per = 1;
  if (unit == "m") ms_per = 60'000;
  if (unit == "h") ms_per = 3'600'000;
  if (ms_per == 0 || n > 1'000'000'000LL / ms_per) {
    return InvalidArgumentError(fmt::format("'{}' is not a duration (10s, 500ms, 2m)", text));
  }
  return std::chrono::milliseconds(n * ms_per);
}

Result<SiteSettings> ParseSiteSettings(std::string_view text, const std::string& file) {
  SiteSettings s;
  s.file = file;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}:{}: {}", file, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return InvalidArgumentError(fmt::format("{}: not a map of settings", file));
  for (const auto& entry : root) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    if (key == "clusters") {
      SKY_RETURN_IF_ERROR(MergeTrust(file, v, s));
      continue;
    }
    bool known = false;
    for (const auto& k : SiteSettingKeys()) known = known || k.key == key;
    if (!known) return Bad(file, entry.first, fmt::format("unknown key '{}'", key));
    SKY_ASSIGN_OR_RETURN(std::string value, Scalar(file, v, key));
    if (key == "database") s.database = value;
    if (key == "listen") s.listen = value;
    if (key == "replica") s.replica = value;
    if (key == "admin_group") s.admin_group = value;
    if (key == "munge_socket") s.munge_socket = value;
    if (key == "runas") s.runas = value;
    if (key == "state_dir") s.state_dir = value;
    if (key == "secret_key") s.secret_key = value;
    if (key == "estimates_per_second") {
      int n = 0;
      const char* end = value.data() + value.size();
      if (std::from_chars(value.data(), end, n).ptr != end || n < 1 || n > 10000) {
        return Bad(file, v, fmt::format("estimates_per_second must be 1 to 10000, not '{}'", value));
      }
      s.estimates_per_second = n;
    }
    if (key == "secret_key") s.secret_key = value;
    if (key == "estimates_per_second") {
      int n = 0;
      const char* end = value.data() + value.size();
      if (std::from_chars(value.data(), end, n).ptr != end || n < 1 || n > 10000) {
        return Bad(file, v, fmt::format("estimates_per_second must be 1 to 10000, not '{}'", value));
      }
      s.estimates_per_second = n;
    }
    if (key == "lease") {
      auto lease = ParseSiteDuration(value);
      if (!lease.ok()) return Bad(file, v, "lease: " + lease.status().message());
      if (*lease < std::chrono::seconds(1)) return Bad(file, v, "lease: 1s at least");
      s.lease = *lease;
    }
    if (key == "listen") SKY_RETURN_IF_ERROR(CheckAddress(file, v, value));
  }
  if (s.database.empty()) return InvalidArgumentError(fmt::format("{}: say the database", file));
  if (s.listen.empty()) return InvalidArgumentError(fmt::format("{}: say where to listen", file));
  if (s.replica.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    s.replica = fmt::format("{}:{}", host, s.listen.substr(s.listen.rfind(':') + 1));
  }
  return s;
}

Result<SiteSettings> ReadSiteSettings(const std::string& file) {
  std::ifstream in(file);
  if (!in) return NotFoundError(fmt::format("cannot read {}", file));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseSiteSettings(text.str(), file);
}

}  // namespace skyslurm::config
