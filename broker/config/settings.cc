#include "broker/config/settings.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "broker/util/strings.h"

namespace skyslurm::config {
namespace {

// The kinds of cluster the configuration accepts: the factory table's
// built-in backends, then any added (AddClusterKind).
struct Kinds {
  std::mutex mu;
  std::vector<std::string> names = {"slurm", "kubernetes"};
};

Kinds& KindTable() {
  static Kinds* kinds = new Kinds;
  return *kinds;
}

bool KnownKind(const std::string& kind) {
  const std::vector<std::string> kinds = ClusterKinds();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

// "slurm or kubernetes", "slurm, kubernetes or lsf".
std::string KindList() {
  const std::vector<std::string> kinds = ClusterKinds();
  std::string out;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i];
  }
  return out;
}

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

Status Bad(std::string_view file, const YAML::Node& node, const std::string& what) {
  return InvalidArgumentError(fmt::format("{}:{}: {}", file, LineOf(node), what));
}

// The closest key, for "did you mean".
std::string Closest(std::string_view key, const std::vector<SettingKey>& keys) {
  std::vector<std::string_view> names;
  for (const auto& k : keys) names.push_back(k.key);
  return Nearest(key, names);
}

Status UnknownKey(std::string_view file, const YAML::Node& node, const std::string& key,
                  const std::vector<SettingKey>& keys, std::string_view where) {
  std::string message = fmt::format("unknown key '{}'{}", key, where);
  if (std::string close = Closest(key, keys); !close.empty()) {
    message += fmt::format(" (did you mean '{}'?)", close);
  }
  return Bad(file, node, message);
}

Result<std::string> Scalar(std::string_view file, const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return Bad(file, node, fmt::format("'{}' must be a single value", key));
  return node.Scalar();
}

// A path: no shell reads this file, so a '$' would stay one, and
// '/scratch/$USER' would be one folder that every user shares. The hint
// says what the key does expand.
Result<std::string> PathValue(std::string_view file, const YAML::Node& node, std::string_view key) {
  SKY_ASSIGN_OR_RETURN(std::string path, Scalar(file, node, key));
  if (path.find('$') == std::string::npos) return path;
  std::string_view hint = "write the path itself";
  if (key == "workdir") {
    hint = "write %u for the user's login name and ~ for the home, as in /scratch/%u";
  } else if (key.starts_with("paths.")) {
    hint = "write %u for the user's login name, as in /scratch/%u";
  } else if (key == "slurm_conf" || key == "kubeconfig") {
    hint = "write ~ for the home, or the path itself";
  }
  return Bad(file, node,
             fmt::format("{}: '{}' has a '$', which is not expanded here (no shell reads this "
                         "file): {}",
                         key, path, hint));
}

Result<bool> Boolean(std::string_view file, const YAML::Node& node, std::string_view key) {
  SKY_ASSIGN_OR_RETURN(std::string v, Scalar(file, node, key));
  const std::string lower = Lower(v);
  if (lower == "on" || lower == "true" || lower == "yes" || lower == "1") return true;
  if (lower == "off" || lower == "false" || lower == "no" || lower == "0") return false;
  return Bad(file, node, fmt::format("'{}' must be on or off, not '{}'", key, v));
}

Result<std::vector<std::string>> List(std::string_view file, const YAML::Node& node,
                                      std::string_view key) {
  std::vector<std::string> out;
  if (node.IsScalar()) return SplitList(node.Scalar());  // "a,b" is accepted too
  if (!node.IsSequence()) return Bad(file, node, fmt::format("'{}' must be a list", key));
  for (const auto& item : node) {
    SKY_ASSIGN_OR_RETURN(std::string v, Scalar(file, item, key));
    out.push_back(v);
  }
  return out;
}

Result<std::map<std::string, std::string>> StringMap(std::string_view file, const YAML::Node& node,
                                                     std::string_view key) {
  std::map<std::string, std::string> out;
  if (!node.IsMap()) return Bad(file, node, fmt::format("'{}' must be a mapping (a: b)", key));
  for (const auto& kv : node) {
    SKY_ASSIGN_OR_RETURN(std::string k, Scalar(file, kv.first, key));
    SKY_ASSIGN_OR_RETURN(std::string v, Scalar(file, kv.second, key));
    out[k] = v;
  }
  return out;
}

}  // namespace

Result<SubmitOutput> ParseSubmitOutput(std::string_view value) {
  if (value == "single-cluster") return SubmitOutput::kSingleCluster;
  if (value == "multi-cluster") return SubmitOutput::kMultiCluster;
  return InvalidArgumentError(
      fmt::format("submit_output must be 'single-cluster' or 'multi-cluster', not '{}'", value));
}

Result<SyncBack> ParseSyncBack(std::string_view value) {
  if (value == "auto") return SyncBack::kAuto;
  if (value == "always") return SyncBack::kAlways;
  if (value == "never") return SyncBack::kNever;
  return InvalidArgumentError(
      fmt::format("sync_back must be 'auto', 'always' or 'never', not '{}'", value));
}

namespace {

Result<OnBrokerError> ParseOnBrokerError(std::string_view value) {
  if (value == "home") return OnBrokerError::kHome;
  if (value == "fail") return OnBrokerError::kFail;
  return InvalidArgumentError(
      fmt::format("on_broker_error must be 'home' or 'fail', not '{}'", value));
}

// The failover keys: a name and where its value lives.
struct FailoverKey {
  std::string_view key;
  int FailoverSettings::*field;
  bool duration;  // seconds, or a count
};
const std::vector<FailoverKey>& FailoverKeys() {
  static const std::vector<FailoverKey> keys = {
      {"poll_interval", &FailoverSettings::poll_interval, true},
      {"migrate_after", &FailoverSettings::migrate_after, true},
      {"migrate_gain", &FailoverSettings::migrate_gain, true},
      {"max_moves", &FailoverSettings::max_moves, false},
      {"moves_per_cluster", &FailoverSettings::moves_per_cluster, false},
      {"cluster_dead_after", &FailoverSettings::cluster_dead_after, true},
      {"max_restarts", &FailoverSettings::max_restarts, false},
      {"idle_exit", &FailoverSettings::idle_exit, true},
  };
  return keys;
}
const FailoverKey* FindFailoverKey(std::string_view key) {
  for (const auto& k : FailoverKeys()) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

// "90", "90s", "2m", "1h" as seconds; a count is a plain whole number.
Status SetFailover(const FailoverKey& k, std::string_view value, FailoverSettings* f) {
  std::string v = Trim(value);
  int unit = 1;
  if (k.duration && !v.empty() &&
      std::string_view("smh").find(v.back()) != std::string_view::npos) {
    unit = v.back() == 's' ? 1 : v.back() == 'm' ? 60 : 3600;
    v.pop_back();
  }
  const bool digits = !v.empty() && v.size() <= 7 &&
                      std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    return InvalidArgumentError(
        k.duration
            ? fmt::format("'{}' must be a duration (90, 90s, 2m, 1h), not '{}'", k.key, value)
            : fmt::format("'{}' must be a whole number, not '{}'", k.key, value));
  }
  f->*k.field = std::stoi(v) * unit;
  if (k.key == "poll_interval" && f->poll_interval < 1) {
    return InvalidArgumentError("'poll_interval' must be at least 1s");
  }
  return OkStatus();
}

// A duration value ("300", "300s", "5m", "1h") in seconds, at least `least`.
Result<int> Seconds(std::string_view file, const YAML::Node& node, const std::string& key,
                    int least) {
  SKY_ASSIGN_OR_RETURN(std::string s, Scalar(file, node, key));
  FailoverSettings scratch;
  const FailoverKey as_duration{key, &FailoverSettings::idle_exit, true};
  if (Status st = SetFailover(as_duration, s, &scratch); !st.ok() || scratch.idle_exit < least) {
    return Bad(file, node,
               fmt::format("{} must be a duration{} (300, 300s, 5m, 1h), not '{}'", key,
                           least > 0 ? " above 0" : "", s));
  }
  return scratch.idle_exit;
}

// A price: a number of at least 0 ("2.5", "0").
Result<double> Price(std::string_view file, const YAML::Node& node, const std::string& key) {
  SKY_ASSIGN_OR_RETURN(std::string s, Scalar(file, node, key));
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && v >= 0 && v < 1e9) return v;
  } catch (const std::exception&) {
  }
  return Bad(
      file, node,
      fmt::format("{} must be a price per GPU-hour (a number, 0 or more), not '{}'", key, s));
}

// budget: {user: {day: 50, month: 400}, site: {day: 500, month: 8000}}. A
// user's file may only lower a limit (or set one where the site has none).
Status MergeBudget(std::string_view file, const YAML::Node& node, bool user_level,
                   ElasticPolicy* policy) {
  if (!node.IsMap()) {
    return Bad(file, node, "'budget' must be a mapping (user: {day: 50, month: 400}, site: ...)");
  }
  for (const auto& who : node) {
    const std::string whose = who.first.Scalar();
    if (whose != "user" && whose != "site") {
      return Bad(file, who.first, fmt::format("unknown key budget.{} (known: user, site)", whose));
    }
    if (!who.second.IsMap()) {
      return Bad(file, who.second,
                 fmt::format("budget.{} must be a mapping (day: 50, month: 400)", whose));
    }
    ElasticPolicy::Limits& limits = whose == "user" ? policy->user_budget : policy->site_budget;
    for (const auto& period : who.second) {
      const std::string when = period.first.Scalar();
      if (when != "day" && when != "month") {
        return Bad(file, period.first,
                   fmt::format("unknown key budget.{}.{} (known: day, month)", whose, when));
      }
      const std::string key = fmt::format("budget.{}.{}", whose, when);
      SKY_ASSIGN_OR_RETURN(std::string text, Scalar(file, period.second, key));
      double amount = -1;
      try {
        std::size_t used = 0;
        amount = std::stod(text, &used);
        if (used != text.size()) amount = -1;
      } catch (const std::exception&) {
      }
      if (!(amount >= 0 && amount < 1e12)) {
        return Bad(
            file, period.second,
            fmt::format("{} must be an amount in the currency (0 or more), not '{}'", key, text));
      }
      std::optional<double>& limit = when == "day" ? limits.day : limits.month;
      limit = user_level && limit ? std::min(*limit, amount) : amount;
    }
  }
  return OkStatus();
}

Result<SpotUse> ParseSpot(std::string_view file, const YAML::Node& node) {
  SKY_ASSIGN_OR_RETURN(std::string s, Scalar(file, node, "spot"));
  if (s == "allow") return SpotUse::kAllow;
  if (s == "avoid") return SpotUse::kAvoid;
  if (s == "require") return SpotUse::kRequire;
  return Bad(file, node, fmt::format("spot must be allow, avoid or require, not '{}'", s));
}

// Policy: a user may narrow what the site allows, never widen it.
void Restrict(std::vector<std::string>* allowed, const std::vector<std::string>& more) {
  if (allowed->empty()) {
    *allowed = more;
    return;
  }
  std::erase_if(*allowed, [&](const std::string& c) {
    return std::find(more.begin(), more.end(), c) == more.end();
  });
  if (allowed->empty()) allowed->push_back("");  // nothing left: allow none
}

// A cluster's `paths`: named roots, each an absolute path (%u the user's
// login name) or, for a Kubernetes cluster's volumes, pvc:CLAIM[/SUBPATH].
Status MergePathRoots(std::string_view file, const YAML::Node& v, ClusterSettings* c) {
  const std::string key = "paths";
  SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
  for (auto& [root, pattern] : m) {
    if (pattern.find('$') != std::string::npos) {
      SKY_RETURN_IF_ERROR(PathValue(file, v[root], "paths." + root).status());
    }
    // A Kubernetes cluster's root may be a PersistentVolumeClaim.
    const bool claim = pattern.starts_with("pvc:") && pattern.size() > 4 && pattern[4] != '/';
    if (!claim &&
        (!pattern.starts_with("/") || pattern.find_first_not_of('/') == std::string::npos)) {
      return Bad(file, v,
                 fmt::format("paths: {} must be an absolute path other than / (%u for the "
                             "user's login name), or on Kubernetes pvc:CLAIM[/SUBPATH], not "
                             "'{}'",
                             root, pattern));
    }
    c->paths[root] = pattern;
  }
  return OkStatus();
}

Status MergeCluster(std::string_view file, const std::string& name, const YAML::Node& node,
                    bool user_level, ClusterSettings* c) {
  c->name = name;
  if (node.IsNull()) return OkStatus();
  if (!node.IsMap()) return Bad(file, node, fmt::format("clusters.{} must be a mapping", name));
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "gpu_aliases") {
      SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
      for (auto& [a, b] : m) c->gpu_aliases[a] = b;
    } else if (key == "partitions") {
      SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
      for (auto& [a, b] : m) c->partitions[a] = b;
    } else if (key == "modules") {
      SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
      for (auto& [from, to] : m) {
        const bool from_versioned = from.find('/') != std::string::npos;
        const bool to_versioned = to.find('/') != std::string::npos;
        if (from_versioned != to_versioned) {
          return Bad(file, v,
                     fmt::format("modules: map a name to a name ('cuda: CUDA') or a module to a "
                                 "module ('cuda/12.1: CUDA/12.2'), not '{}: {}'",
                                 from, to));
        }
        (from_versioned ? c->modules.versions : c->modules.renames)[from] = to;
      }
    } else if (key == "accounts") {
      SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
      for (auto& [a, b] : m) c->accounts[a] = b;
    } else if (key == "qos") {
      SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
      for (auto& [a, b] : m) c->qos[a] = b;
    } else if (key == "preference") {
      SKY_ASSIGN_OR_RETURN(std::string s, Scalar(file, v, key));
      try {
        std::size_t used = 0;
        c->preference = std::stoi(s, &used);
        if (used != s.size()) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        return Bad(file, v, fmt::format("preference must be a whole number, not '{}'", s));
      }
    } else if (key == "job_id_index") {
      SKY_ASSIGN_OR_RETURN(std::string s, Scalar(file, v, key));
      int index = 0;
      try {
        std::size_t used = 0;
        index = std::stoi(s, &used);
        if (used != s.size()) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        index = 0;
      }
      if (index < 1 || index > 63) {
        return Bad(file, v,
                   fmt::format("job_id_index must be a whole number from 1 to 63, not '{}'", s));
      }
      c->job_id_index = index;
    } else if (key == "workdir") {
      SKY_ASSIGN_OR_RETURN(c->workdir, PathValue(file, v, key));
    } else if (key == "paths") {
      SKY_RETURN_IF_ERROR(MergePathRoots(file, v, c));
    } else if (key == "slurm_conf") {
      SKY_ASSIGN_OR_RETURN(c->slurm_conf, PathValue(file, v, key));
    } else if (key == "modulepath") {
      SKY_ASSIGN_OR_RETURN(c->modulepath, PathValue(file, v, key));
    } else if (key == "description") {
      SKY_ASSIGN_OR_RETURN(c->description, Scalar(file, v, key));
    } else if (key == "kind") {
      SKY_ASSIGN_OR_RETURN(c->kind, Scalar(file, v, key));
      if (!KnownKind(c->kind)) {
        return Bad(file, v, fmt::format("kind must be {}, not '{}'", KindList(), c->kind));
      }
    } else if (key == "context") {
      SKY_ASSIGN_OR_RETURN(c->context, Scalar(file, v, key));
    } else if (key == "kubeconfig") {
      SKY_ASSIGN_OR_RETURN(c->kubeconfig, PathValue(file, v, key));
    } else if (key == "namespace") {
      SKY_ASSIGN_OR_RETURN(c->namespace_name, Scalar(file, v, key));
    } else if (key == "images") {
      SKY_ASSIGN_OR_RETURN(auto m, StringMap(file, v, key));
      for (auto& [a, b] : m) c->images[a] = b;
    } else if (key == "default_image") {
      SKY_ASSIGN_OR_RETURN(c->default_image, Scalar(file, v, key));
    } else if (key == "image_pull_timeout") {
      SKY_ASSIGN_OR_RETURN(c->image_pull_timeout, Seconds(file, v, key, 1));
    } else if (key == "boot_time") {
      SKY_ASSIGN_OR_RETURN(c->boot_time, Seconds(file, v, key, 1));
    } else if (key == "suspend_time") {
      SKY_ASSIGN_OR_RETURN(c->suspend_time, Seconds(file, v, key, 0));
    } else if (key == "ledger") {
      SKY_ASSIGN_OR_RETURN(c->ledger, PathValue(file, v, key));
    } else if (key == "spot") {
      SKY_ASSIGN_OR_RETURN(c->spot, List(file, v, key));
    } else if (key == "cost") {
      // Budgets are counted in the site's prices: a user may name a price
      // only where the site names none (an estimate of their own).
      if (user_level && c->cost_by_site) {
        return Bad(file, kv.first,
                   fmt::format("clusters.{}.cost is set by the site (a user's file cannot change "
                               "a price)",
                               name));
      }
      if (!user_level) c->cost_by_site = true;
      // One price for the cluster, or one per partition (default: the rest).
      if (v.IsMap()) {
        for (const auto& p : v) {
          SKY_ASSIGN_OR_RETURN(std::string partition, Scalar(file, p.first, key));
          SKY_ASSIGN_OR_RETURN(double price, Price(file, p.second, "cost." + partition));
          if (partition == "default") {
            c->cost_default = price;
          } else {
            c->cost[partition] = price;
          }
        }
      } else {
        SKY_ASSIGN_OR_RETURN(double price, Price(file, v, key));
        c->cost_default = price;
      }
    } else if (key == "gpu_labels") {
      if (!v.IsSequence()) return Bad(file, v, "gpu_labels must be a list of node label keys");
      for (const auto& item : v) {
        SKY_ASSIGN_OR_RETURN(std::string label, Scalar(file, item, key));
        c->gpu_labels.push_back(label);
      }
    } else if (key == "one_time_code") {
      SKY_ASSIGN_OR_RETURN(c->one_time_code, Boolean(file, v, key));
    } else if (key == "access") {
      SKY_ASSIGN_OR_RETURN(c->access, Scalar(file, v, key));
      if (c->access != "ssh" && c->access != "rest") {
        return Bad(file, v, fmt::format("access must be ssh or rest, not '{}'", c->access));
      }
    } else {
      return UnknownKey(file, kv.first, key, ClusterSettingKeys(),
                        fmt::format(" under clusters.{}", name));
    }
  }
  return OkStatus();
}

}  // namespace

const std::vector<SettingKey>& SettingKeys() {
  static const std::vector<SettingKey> keys = {
      {"home", "SKYSLURM_HOME", "--home", "the home cluster (where jobs go when routing is off)"},
      {"routing", "SKYSLURM_ROUTING", "--routing",
       "on/off; off makes the shim always run the real command (a user cannot turn on what the "
       "site turned off)"},
      {"on_broker_error", "SKYSLURM_ON_BROKER_ERROR", "--on-broker-error",
       "home or fail: what the shim does when it cannot decide"},
      {"submit_output", "SKYSLURM_SUBMIT_OUTPUT", "--submit-output",
       "single-cluster (default): a routed sbatch prints 'Submitted batch job <id>' (<id> with "
       "--parsable) as one cluster's sbatch does; multi-cluster: '... <id> on cluster <c>' "
       "(<id>;<c>), as sbatch -M does"},
      {"sync_back", "SKYSLURM_SYNC_BACK", "--sync-back",
       "auto (default), always or never: what a job wrote in its copied folder on another "
       "cluster comes back when it ends; auto: when a program read sbatch's answer (a workflow "
       "engine), not a terminal (--sky-sync-back=PATTERN takes only those files, =none nothing)"},
      {"real_bin_dir", "SKYSLURM_REAL_BIN_DIR", "--real-bin-dir",
       "the folder of the real sbatch/salloc/srun (default: PATH, skipping the shim)"},
      {"clusters_allowed", "SKYSLURM_CLUSTERS_ALLOWED", "--clusters-allowed",
       "only these clusters receive jobs (comma-separated in the environment)"},
      {"clusters_denied", "SKYSLURM_CLUSTERS_DENIED", "--clusters-denied",
       "these clusters never receive jobs"},
      {"site", "", "",
       "the site's skyslurmd replicas (host:port, a YAML list): skyslurm and the shim hand "
       "routed jobs to the first that answers, never start a daemon of the user's (site file "
       "only)"},
      {"site_user", "", "",
       "the site daemon's user, the only one that may decode the shim's MUNGE credentials "
       "(default skyslurm)"},
      {"poll_interval", "SKYSLURM_POLL_INTERVAL", "--poll-interval",
       "skyslurmd: how often every cluster's queue is read (default 5s)"},
      {"migrate_after", "SKYSLURM_MIGRATE_AFTER", "--migrate-after",
       "skyslurmd: a job pends this long (and past its estimate) before a move is weighed "
       "(default 120s)"},
      {"migrate_gain", "SKYSLURM_MIGRATE_GAIN", "--migrate-gain",
       "skyslurmd: another cluster must start the job at least this much sooner (default 300s)"},
      {"max_moves", "SKYSLURM_MAX_MOVES", "--max-moves", "skyslurmd: moves per job (default 3)"},
      {"moves_per_cluster", "SKYSLURM_MOVES_PER_CLUSTER", "--moves-per-cluster",
       "skyslurmd: moves into one cluster per minute (default 10)"},
      {"cluster_dead_after", "SKYSLURM_CLUSTER_DEAD_AFTER", "--cluster-dead-after",
       "skyslurmd: a cluster unreachable this long has its pending jobs re-placed (default 20s)"},
      {"max_restarts", "SKYSLURM_MAX_RESTARTS", "--max-restarts",
       "skyslurmd: restarts of a managed job after node failure or preemption (default 3)"},
      {"idle_exit", "SKYSLURM_IDLE_EXIT", "--idle-exit",
       "skyslurmd: started on demand, it exits after this long with nothing to watch "
       "(default 600s; 0 = never)"},
      {"sync_limit", "SKYSLURM_SYNC_LIMIT", "--sync-limit",
       "the most a job's folder copied to another cluster may hold (default 1G; 0 = no limit)"},
      {"sync_bwlimit", "SKYSLURM_SYNC_BWLIMIT", "--sync-bwlimit",
       "the bandwidth a copy of a job's folder may use, per second (10M; default: any)"},
      {"shared_fs", "", "",
       "clusters that mount one filesystem at the same paths: [alpha, beta] (or a list of "
       "such lists); a job moving among them is not copied"},
      {"paths", "", "",
       "rewrite_script: true rewrites the script's own paths under a named root for the "
       "cluster the job goes to (default: listed as caveats)"},
      {"overflow", "", "",
       "after: use an elastic cluster only when no other starts the job within this (default "
       "15m; a user may only lengthen the site's); worth: what an hour of a job's wait is worth "
       "per GPU it asks for, an elastic cluster only when the wait it saves is worth its cost "
       "(default: not weighed; a user may only lower the site's)"},
      {"spot", "", "",
       "allow (default), avoid (spot partitions only when nothing else can run the job) or "
       "require (no on-demand partition of an elastic cluster); a user may choose only while "
       "the site allows"},
      {"tie_tolerance", "", "",
       "start estimates this close to the earliest count as a tie, decided by preference, the "
       "home cluster, cost (default 60s)"},
      {"run_times", "", "",
       "limits (default): start estimates take the jobs ahead to run their whole time limits, "
       "as Slurm plans; history: the share of them their users' jobs of the same limit lately "
       "ended on that cluster ran"},
      {"estimates", "", "",
       "model (default): start estimates as the pending-work model lays them out; calibrated: "
       "each cluster's estimated waits taken at the ratio of real to estimated waits of the "
       "latest jobs skyslurmd placed there"},
      {"session_lifetime", "", "",
       "how long a session `skyslurm login` opens to a cluster that asks for a one-time code "
       "lasts (default 12h; the site's value is the longest a user may set)"},
      {"currency", "", "", "how prices are shown (default $)"},
      {"budget", "", "",
       "what elastic clusters may bill per UTC day and month: user: {day: 50, month: 400} for "
       "each user, site: {...} for all together; a job that would exceed one is refused (a "
       "user may only lower a limit)"},
      {"accelerators", "", "", "extra spellings of canonical accelerator names"},
      {"clusters", "", "", "per-cluster settings (see the next table)"},
  };
  return keys;
}

const std::vector<SettingKey>& ClusterSettingKeys() {
  static const std::vector<SettingKey> keys = {
      {"gpu_aliases", "", "", "canonical GPU name -> this cluster's GRES type"},
      {"partitions", "", "", "a home partition -> this cluster's partition"},
      {"modules", "", "", "module renames (cuda: CUDA) and exact maps (cuda/12.1: CUDA/12.2)"},
      {"accounts", "", "", "home account -> this cluster's account"},
      {"qos", "", "", "home QoS -> this cluster's QoS"},
      {"preference", "", "", "a whole number; higher wins a tie between estimates"},
      {"job_id_index", "", "",
       "1-63: the index this cluster's routed jobs carry above bit 26 of their ids (default: "
       "derived from the cluster's name)"},
      {"workdir", "", "", "where jobs run on this cluster (default: the remote home)"},
      {"paths", "", "",
       "named roots of this cluster's filesystems (home: /home/%u, scratch: ...); paths under "
       "one are mapped to the target's root of the same name"},
      {"slurm_conf", "", "", "reach this cluster's controller directly with this SLURM_CONF"},
      {"modulepath", "", "", "with slurm_conf: the MODULEPATH of this cluster"},
      {"description", "", "", "a cluster description file, instead of asking the cluster"},
      {"access", "", "",
       "ssh (default) or rest: submit and cancel through slurmrestd, started "
       "as you over the SSH connection"},
      {"one_time_code", "", "",
       "true: its bastion (ProxyJump) asks for a one-time code; used only through a session "
       "`skyslurm login <cluster>` opened, ruled out while there is none"},
      {"kind", "", "", "slurm (default) or kubernetes"},
      {"context", "", "", "kubernetes: the kubeconfig context (default: the cluster's name)"},
      {"kubeconfig", "", "",
       "kubernetes: the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"},
      {"namespace", "", "", "kubernetes: where jobs go (default: the context's namespace)"},
      {"images", "", "", "kubernetes: a module the script loads -> the image it runs in"},
      {"default_image", "", "",
       "kubernetes: the image of a job that names none and loads no mapped module"},
      {"gpu_labels", "", "",
       "kubernetes: node label keys carrying the GPU type, before the usual ones"},
      {"image_pull_timeout", "", "",
       "kubernetes: a pod unable to pull its image this long fails the job (default 300s)"},
      {"boot_time", "", "",
       "elastic: how long a powered-down node takes to boot, when the ledger has no boot to "
       "measure (e.g. 3m)"},
      {"ledger", "", "",
       "elastic: the provider's ledger of node power-ups (node,requested,ready,down[,partition])"},
      {"suspend_time", "", "",
       "elastic: how long an idle node stays up, and billed, after its last job (its "
       "SuspendTime; default 10m)"},
      {"spot", "", "", "elastic: the partitions whose nodes are spot: [spot]"},
      {"cost", "", "",
       "the price of a GPU-hour here: a number, or per partition {cloud: 4.0, spot: 1.2, "
       "default: ...}; none: free (a user may not change a price the site set)"},
  };
  return keys;
}

std::optional<double> ClusterSettings::PriceIn(const std::string& partition) const {
  if (auto it = cost.find(partition); it != cost.end()) return it->second;
  return cost_default;
}

ClusterSettings Settings::For(const std::string& cluster) const {
  auto it = clusters.find(cluster);
  if (it != clusters.end()) return it->second;
  ClusterSettings c;
  c.name = cluster;
  return c;
}

bool Settings::Allowed(const std::string& cluster) const {
  if (std::find(clusters_denied.begin(), clusters_denied.end(), cluster) != clusters_denied.end()) {
    return false;
  }
  return clusters_allowed.empty() || std::find(clusters_allowed.begin(), clusters_allowed.end(),
                                               cluster) != clusters_allowed.end();
}

bool Settings::ShareFilesystem(const std::string& a, const std::string& b) const {
  if (a == b) return true;
  for (const auto& group : shared_fs) {
    const bool has_a = std::find(group.begin(), group.end(), a) != group.end();
    const bool has_b = std::find(group.begin(), group.end(), b) != group.end();
    if (has_a && has_b) return true;
  }
  return false;
}

Result<std::uint64_t> ParseByteSize(std::string_view text) {
  const std::string t = Trim(std::string(text));
  std::size_t digits = 0;
  bool dot = false;
  while (digits < t.size() &&
         (std::isdigit(static_cast<unsigned char>(t[digits])) || (t[digits] == '.' && !dot))) {
    dot = dot || t[digits] == '.';
    ++digits;
  }
  auto bad = [&] {
    return InvalidArgumentError(
        fmt::format("'{}' is not a size (bytes, or a number with K, M, G or T)", text));
  };
  if (digits == 0) return bad();
  double number = 0;
  try {
    number = std::stod(t.substr(0, digits));
  } catch (...) {
    return bad();
  }
  std::string unit = Trim(t.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB")) unit.erase(unit.size() - 2);
  if (unit.size() == 2 && unit[1] == 'B') unit.erase(1);
  if (unit == "B") unit.clear();
  static constexpr std::string_view kUnits = "KMGT";
  double scale = 1;
  if (!unit.empty()) {
    const std::size_t at = unit.size() == 1 ? kUnits.find(unit[0]) : std::string_view::npos;
    if (at == std::string_view::npos) return bad();
    for (std::size_t i = 0; i <= at; ++i) scale *= 1024;
  }
  const double bytes = number * scale;
  if (bytes > 1.8e19) return bad();
  return static_cast<std::uint64_t>(bytes);
}

std::string DescribeBytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} bytes", bytes);
  std::string s = fmt::format("{:.1f}", v);
  if (s.ends_with(".0")) s.erase(s.size() - 2);
  return s + " " + kUnits[u];
}

Result<catalog::AcceleratorCatalog> Settings::Catalog() const {
  catalog::AcceleratorCatalog catalog;
  for (const auto& [canonical, spellings] : accelerators) {
    for (const auto& spelling : spellings) {
      SKY_RETURN_IF_ERROR(catalog.AddAlias(canonical, spelling).WithContext("accelerators"));
    }
  }
  return catalog;
}

namespace {

Status MergeAccelerators(std::string_view file, const YAML::Node& v, Settings* s) {
  if (!v.IsMap()) return Bad(file, v, "'accelerators' must map a canonical name to spellings");
  catalog::AcceleratorCatalog check;
  for (const auto& a : v) {
    const std::string canonical = a.first.Scalar();
    if (check.Find(canonical) == nullptr) {
      return Bad(file, a.first, fmt::format("unknown accelerator '{}'", canonical));
    }
    SKY_ASSIGN_OR_RETURN(auto spellings, List(file, a.second, canonical));
    auto& dst = s->accelerators[canonical];
    dst.insert(dst.end(), spellings.begin(), spellings.end());
  }
  return OkStatus();
}

// One group ([alpha, beta]) or several ([[alpha, beta], [gamma, delta]]).
Status MergeSharedFs(std::string_view file, const std::string& key, const YAML::Node& v,
                     Settings* s) {
  if (!v.IsSequence()) return Bad(file, v, "'shared_fs' must be a list of clusters");
  const bool groups = v.size() > 0 && v[0].IsSequence();
  std::vector<std::vector<std::string>> found;
  if (groups) {
    for (const auto& g : v) {
      SKY_ASSIGN_OR_RETURN(auto list, List(file, g, key));
      found.push_back(std::move(list));
    }
  } else {
    SKY_ASSIGN_OR_RETURN(auto list, List(file, v, key));
    found.push_back(std::move(list));
  }
  for (auto& g : found) s->shared_fs.push_back(std::move(g));
  return OkStatus();
}

Status MergePaths(std::string_view file, const YAML::Node& v, Settings* s) {
  if (!v.IsMap()) return Bad(file, v, "'paths' must be a mapping (rewrite_script: true)");
  for (const auto& p : v) {
    const std::string sub = p.first.Scalar();
    if (sub != "rewrite_script") {
      return Bad(file, p.first,
                 fmt::format("unknown key paths.{} (known: rewrite_script; a cluster's "
                             "roots go under clusters.<name>.paths)",
                             sub));
    }
    SKY_ASSIGN_OR_RETURN(s->rewrite_script_paths, Boolean(file, p.second, "paths.rewrite_script"));
  }
  return OkStatus();
}

// A user may value a wait less than the site does (burst less), never more;
// and wait longer before bursting than the site says, never less. Where the
// site says nothing, the user chooses.
Status MergeOverflow(std::string_view file, const YAML::Node& v, bool user_level, Settings* s) {
  if (!v.IsMap()) return Bad(file, v, "'overflow' must be a mapping (after: 15m, worth: 4)");
  ElasticPolicy& e = s->elastic;
  for (const auto& o : v) {
    const std::string sub = o.first.Scalar();
    if (sub == "worth") {
      SKY_ASSIGN_OR_RETURN(double worth, Price(file, o.second, "overflow.worth"));
      if (!user_level) {
        e.overflow_worth = worth;
        e.overflow_worth_by_site = true;
      } else {
        e.overflow_worth = e.overflow_worth_by_site ? std::min(*e.overflow_worth, worth) : worth;
      }
    } else if (sub == "after") {
      SKY_ASSIGN_OR_RETURN(int after, Seconds(file, o.second, "overflow.after", 0));
      if (!user_level) {
        e.overflow_after = after;
        e.overflow_after_by_site = true;
      } else {
        e.overflow_after = e.overflow_after_by_site ? std::max(e.overflow_after, after) : after;
      }
    } else {
      return Bad(file, o.first, fmt::format("unknown key overflow.{} (known: after, worth)", sub));
    }
  }
  return OkStatus();
}

Status MergeClusters(std::string_view file, const YAML::Node& v, bool user_level, Settings* s) {
  if (v.IsNull()) return OkStatus();
  if (!v.IsMap()) return Bad(file, v, "'clusters' must map cluster names to settings");
  for (const auto& c : v) {
    const std::string name = c.first.Scalar();
    ClusterSettings& cs = s->clusters[name];
    SKY_RETURN_IF_ERROR(MergeCluster(file, name, c.second, user_level, &cs));
    // A cluster's global job ids are its own only while its index is
    // (job/global_id.h): one index for two would give one id to two jobs.
    for (const auto& [other, os] : s->clusters) {
      if (cs.job_id_index != 0 && other != name && os.job_id_index == cs.job_id_index) {
        return Bad(file, c.second,
                   fmt::format("job_id_index {} is {}'s already: each cluster needs its own",
                               cs.job_id_index, other));
      }
    }
  }
  return OkStatus();
}

// A value parsed from its scalar by `parse` (Result<T>(std::string)), its
// error told at the value's line.
template <typename T, typename Parse>
Status SetParsed(std::string_view file, const YAML::Node& v, const std::string& key, Parse parse,
                 T* into) {
  SKY_ASSIGN_OR_RETURN(std::string value, Scalar(file, v, key));
  auto parsed = parse(value);
  if (!parsed.ok()) return Bad(file, v, parsed.status().message());
  *into = *parsed;
  return OkStatus();
}

// One of the file's top-level keys into the settings. A user's file may
// narrow what the site allows, never widen it.
Status MergeKey(std::string_view file, const YAML::Node& key_node, const YAML::Node& v,
                bool user_level, Settings* s) {
  const std::string key = key_node.Scalar();
  if (key == "home") {
    SKY_ASSIGN_OR_RETURN(s->home, Scalar(file, v, key));
  } else if (key == "routing") {
    SKY_ASSIGN_OR_RETURN(bool on, Boolean(file, v, key));
    s->routing = user_level ? (s->routing && on) : on;
  } else if (key == "on_broker_error") {
    return SetParsed(file, v, key, ParseOnBrokerError, &s->on_broker_error);
  } else if (key == "submit_output") {
    return SetParsed(file, v, key, ParseSubmitOutput, &s->submit_output);
  } else if (key == "sync_back") {
    return SetParsed(file, v, key, ParseSyncBack, &s->sync_back);
  } else if (key == "dashboard_address") {
    // Where the dashboard listens is the site's to open beyond loopback.
    if (user_level) return Bad(file, v, "dashboard_address: only the site file may set it");
    SKY_ASSIGN_OR_RETURN(s->dashboard_address, Scalar(file, v, key));
  } else if (key == "real_bin_dir") {
    SKY_ASSIGN_OR_RETURN(s->real_bin_dir, PathValue(file, v, key));
  } else if (key == "clusters_allowed") {
    SKY_ASSIGN_OR_RETURN(auto list, List(file, v, key));
    if (user_level) {
      Restrict(&s->clusters_allowed, list);
    } else {
      s->clusters_allowed = list;
    }
  } else if (key == "clusters_denied") {
    SKY_ASSIGN_OR_RETURN(auto list, List(file, v, key));
    for (auto& c : list) s->clusters_denied.push_back(c);
  } else if (key == "site" || key == "site_user") {
    if (user_level) return Bad(file, v, fmt::format("{} is set by the site's file only", key));
    if (key == "site") {
      SKY_ASSIGN_OR_RETURN(s->site, List(file, v, key));
    } else {
      SKY_ASSIGN_OR_RETURN(s->site_user, Scalar(file, v, key));
    }
  } else if (const FailoverKey* fk = FindFailoverKey(key)) {
    SKY_ASSIGN_OR_RETURN(std::string value, Scalar(file, v, key));
    if (Status st = SetFailover(*fk, value, &s->failover); !st.ok()) {
      return Bad(file, v, st.message());
    }
  } else if (key == "accelerators") {
    return MergeAccelerators(file, v, s);
  } else if (key == "sync_limit" || key == "sync_bwlimit") {
    SKY_ASSIGN_OR_RETURN(std::string value, Scalar(file, v, key));
    auto bytes = ParseByteSize(value);
    if (!bytes.ok()) return Bad(file, v, key + ": " + bytes.status().message());
    (key == "sync_limit" ? s->sync_limit : s->sync_bwlimit) = *bytes;
  } else if (key == "shared_fs") {
    return MergeSharedFs(file, key, v, s);
  } else if (key == "paths") {
    return MergePaths(file, v, s);
  } else if (key == "overflow") {
    return MergeOverflow(file, v, user_level, s);
  } else if (key == "spot") {
    SKY_ASSIGN_OR_RETURN(SpotUse spot, ParseSpot(file, v));
    if (!user_level || s->elastic.spot == SpotUse::kAllow) s->elastic.spot = spot;
  } else if (key == "currency") {
    SKY_ASSIGN_OR_RETURN(s->elastic.currency, Scalar(file, v, key));
  } else if (key == "tie_tolerance") {
    SKY_ASSIGN_OR_RETURN(s->tie_tolerance, Seconds(file, v, key, 0));
  } else if (key == "session_lifetime") {
    SKY_ASSIGN_OR_RETURN(int lifetime, Seconds(file, v, key, 1));
    if (!user_level) {
      s->session_lifetime = s->session_lifetime_cap = lifetime;
    } else if (s->session_lifetime_cap == 0 || lifetime <= s->session_lifetime_cap) {
      s->session_lifetime = lifetime;
    } else {
      return Bad(file, v,
                 fmt::format("session_lifetime: the site allows sessions of {} s at most, not {} s",
                             s->session_lifetime_cap, lifetime));
    }
  } else if (key == "run_times") {
    SKY_ASSIGN_OR_RETURN(std::string how, Scalar(file, v, key));
    if (how != "limits" && how != "history") {
      return Bad(file, v, fmt::format("run_times must be limits or history, not '{}'", how));
    }
    s->run_times_from_history = how == "history";
  } else if (key == "estimates") {
    SKY_ASSIGN_OR_RETURN(std::string how, Scalar(file, v, key));
    if (how != "model" && how != "calibrated") {
      return Bad(file, v, fmt::format("estimates must be model or calibrated, not '{}'", how));
    }
    s->calibrate_estimates = how == "calibrated";
  } else if (key == "budget") {
    return MergeBudget(file, v, user_level, &s->elastic);
  } else if (key == "clusters") {
    return MergeClusters(file, v, user_level, s);
  } else {
    return UnknownKey(file, key_node, key, SettingKeys(), "");
  }
  return OkStatus();
}

}  // namespace

Status MergeSettingsYaml(std::string_view yaml, std::string_view file, bool user_level,
                         Settings* s) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        fmt::format("{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.msg));
  }
  if (root.IsNull()) return OkStatus();
  if (!root.IsMap()) return Bad(file, root, "the file must be a mapping of keys to values");
  try {
    for (const auto& kv : root)
      SKY_RETURN_IF_ERROR(MergeKey(file, kv.first, kv.second, user_level, s));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}:{}: {}", file, e.mark.line + 1, e.msg));
  }
  return OkStatus();
}

Status ApplyOverrides(const std::map<std::string, std::string>& values, std::string_view source,
                      Settings* s) {
  for (const auto& entry : values) {
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    auto error = [&](const std::string& what) {
      return InvalidArgumentError(fmt::format("{}: {}: {}", source, key, what));
    };
    if (key == "home") {
      s->home = value;
    } else if (key == "routing") {
      if (value == "off" || value == "0" || value == "false" || value == "no") {
        s->routing = false;
      } else if (value != "on" && value != "1" && value != "true" && value != "yes") {
        return error(fmt::format("must be on or off, not '{}'", value));
      }
      // "on" never overrides a file that turned routing off.
    } else if (key == "on_broker_error") {
      auto parsed = ParseOnBrokerError(value);
      if (!parsed.ok()) return error(parsed.status().message());
      s->on_broker_error = *parsed;
    } else if (key == "submit_output") {
      auto parsed = ParseSubmitOutput(value);
      if (!parsed.ok()) return error(parsed.status().message());
      s->submit_output = *parsed;
    } else if (key == "sync_back") {
      auto parsed = ParseSyncBack(value);
      if (!parsed.ok()) return error(parsed.status().message());
      s->sync_back = *parsed;
    } else if (key == "real_bin_dir") {
      s->real_bin_dir = value;
    } else if (key == "sync_limit" || key == "sync_bwlimit") {
      auto bytes = ParseByteSize(value);
      if (!bytes.ok()) return error(bytes.status().message());
      (key == "sync_limit" ? s->sync_limit : s->sync_bwlimit) = *bytes;
    } else if (const FailoverKey* fk = FindFailoverKey(key)) {
      if (Status st = SetFailover(*fk, value, &s->failover); !st.ok()) return error(st.message());
    } else if (key == "clusters_allowed" || key == "clusters_denied") {
      const std::vector<std::string> list = SplitList(value);
      if (key == "clusters_allowed") {
        Restrict(&s->clusters_allowed, list);
      } else {
        s->clusters_denied.insert(s->clusters_denied.end(), list.begin(), list.end());
      }
    } else {
      return error("not a setting that can be given here");
    }
  }
  return OkStatus();
}

Result<LoadedConfig> LoadConfig(const Environment& env,
                                const std::map<std::string, std::string>& flags) {
  LoadedConfig loaded;
  SKY_ASSIGN_OR_RETURN(loaded.paths, ResolvePaths(env));
  for (const auto& [path, user_level] :
       {std::pair{loaded.paths.site_config, false}, std::pair{loaded.paths.user_config, true}}) {
    std::ifstream in(path);
    if (!in) continue;
    std::ostringstream text;
    text << in.rdbuf();
    SKY_RETURN_IF_ERROR(MergeSettingsYaml(text.str(), path, user_level, &loaded.settings));
    loaded.files_read.push_back(path);
  }
  loaded.files_submit_output = loaded.settings.submit_output;
  std::map<std::string, std::string> from_env;
  for (const auto& key : SettingKeys()) {
    if (key.env.empty()) continue;
    if (auto v = env.Get(key.env)) from_env[std::string(key.key)] = *v;
  }
  SKY_RETURN_IF_ERROR(ApplyOverrides(from_env, "environment", &loaded.settings));
  SKY_RETURN_IF_ERROR(ApplyOverrides(flags, "command line", &loaded.settings));
  SKY_ASSIGN_OR_RETURN(loaded.ssh_hosts, ReadSshConfig(loaded.paths.clusters_file,
                                                       {loaded.paths.home, loaded.paths.user}));
  return loaded;
}

std::vector<std::string> ClusterKinds() {
  Kinds& k = KindTable();
  std::lock_guard lock(k.mu);
  return k.names;
}

void AddClusterKind(const std::string& kind) {
  Kinds& k = KindTable();
  std::lock_guard lock(k.mu);
  if (std::find(k.names.begin(), k.names.end(), kind) == k.names.end()) k.names.push_back(kind);
}

}  // namespace skyslurm::config
