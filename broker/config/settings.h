// skyslurm's settings: the site file (/etc/skyslurm/skyslurm.yaml), then the
// user's (~/.config/skyslurm/skyslurm.yaml), then environment variables and
// command-line flags, documented key by key in docs/configuration.md. Site
// policy (routing off, denied clusters) cannot be loosened by a user.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/config/environment.h"
#include "broker/config/paths.h"
#include "broker/config/ssh_config.h"
#include "broker/util/status.h"

namespace skyslurm::config {

// How a module is renamed or remapped on one cluster: `cuda: CUDA` renames
// (versions then matched by the usual rules), `cuda/12.1: cuda-toolkit/12.4`
// maps one exact module.
struct ModuleMap {
  std::map<std::string, std::string> renames;   // name -> name
  std::map<std::string, std::string> versions;  // name/version -> name/version
};

// The kind a cluster is unless its settings say otherwise.
inline constexpr std::string_view kDefaultKind = "slurm";
// The kinds a cluster's `kind` may name: the backends the factory table
// builds (backend/factory/factory.h): "slurm", "kubernetes", and any added.
std::vector<std::string> ClusterKinds();
// Accepts one more kind (a backend registered beyond the built-in ones).
void AddClusterKind(const std::string& kind);

struct ClusterSettings {
  std::string name;
  std::map<std::string, std::string> gpu_aliases;  // canonical -> this cluster's GRES type
  std::map<std::string, std::string> partitions;   // a home partition -> this cluster's
  ModuleMap modules;
  std::map<std::string, std::string> accounts;  // home account -> this cluster's
  std::map<std::string, std::string> qos;       // home QoS -> this cluster's
  int preference = 0;                           // higher wins a tie
  // The index (1-63) its routed jobs carry above bit 26 of their ids; 0:
  // derived from the name (job/global_id.h).
  int job_id_index = 0;
  std::string workdir;  // where jobs run there (default: the remote home)
  // Named roots of this cluster's filesystems ("home" -> "/home/%u",
  // "scratch" -> "/lustre/scratch/%u", ...; %u the user's login name there):
  // a path under the home's root of a name is the same place under the
  // target's root of that name (translate/path_roots.h).
  std::map<std::string, std::string> paths;
  std::string slurm_conf;   // reach its controller directly with this SLURM_CONF
  std::string modulepath;   // with slurm_conf: its module tree
  std::string description;  // a cluster description file (offline use)
  // "rest": submissions and cancels through slurmrestd, started as the user
  // over the cluster's SSH connection; "" or "ssh": its commands only.
  std::string access;
  // Its login node is reached through a bastion (ProxyJump) that asks for a
  // one-time code after the key: skyslurm uses it only through a session
  // `skyslurm login <cluster>` opened (ssh/login_session.h), never prompts
  // from the daemon, and rules it out, saying so, while there is none.
  bool one_time_code = false;
  // The kind of cluster, one of ClusterKinds(): "slurm" (default) or
  // "kubernetes"; its backend comes from the factory table
  // (backend/factory/factory.h).
  std::string kind = "slurm";
  // Whether it is reached as Slurm clusters are (its controller, a login
  // node, Slurm's commands), not by a client of its kind's own API.
  bool reached_as_slurm() const { return kind == "slurm"; }
  // Kubernetes: the kubeconfig context ("" = the cluster's name), the
  // kubeconfig file(s) ("" = $KUBECONFIG or ~/.kube/config), the namespace
  // ("" = the context's), the image a job runs in when it names none
  // (--sky-image, --container-image): by the modules its script loads
  // ("cuda/12.4" or "cuda"), else default_image; node label keys that carry
  // a GPU's type beyond the usual ones.
  std::string context;
  std::string kubeconfig;
  std::string namespace_name;
  std::map<std::string, std::string> images;
  std::string default_image;
  std::vector<std::string> gpu_labels;
  // Kubernetes: a pod that cannot pull its image this long fails the job
  // (seconds), as a real cluster would leave it in ImagePullBackOff forever.
  int image_pull_timeout = 300;

  // An elastic cluster (nodes powered up by Slurm's power saving and
  // billed, docs/cloud.md): how long a node takes to boot when its ledger
  // has no boot to measure (seconds; 0 = not said), the provider's ledger
  // of power-ups (cloud/ledger.h; "" = none), how long an idle node stays
  // up (and billed) after its last job (its SuspendTime), and which of its
  // partitions are spot (cheaper, taken back at the provider's will). A
  // cluster whose nodes Slurm powers down is elastic whether or not these
  // are said.
  int boot_time = 0;
  std::string ledger;
  int suspend_time = 600;
  std::vector<std::string> spot;
  // The price of a GPU-hour here (a node without GPUs counts as one):
  // `cost_default` for every partition but those in `cost`; nullopt: the
  // cluster costs nothing to use (on-premises, unless the site charges an
  // internal rate).
  std::optional<double> cost_default;
  std::map<std::string, double> cost;
  // Whether the site file set `cost` (a user's file may then not change it:
  // a price is what budgets are counted in).
  bool cost_by_site = false;
  // The price of a GPU-hour in `partition`, nullopt when none is set.
  std::optional<double> PriceIn(const std::string& partition) const;
  // Whether the settings make this cluster elastic (boot_time or ledger).
  bool SaysElastic() const { return boot_time > 0 || !ledger.empty(); }
};

// How jobs use elastic clusters (top-level `overflow`, `spot`).
enum class SpotUse { kAllow, kAvoid, kRequire };
struct ElasticPolicy {
  // An elastic cluster only when no other starts the job within this (s).
  int overflow_after = 900;
  bool overflow_after_by_site = false;  // a user's may then only be longer
  // What an hour of a job's wait is worth per GPU it asks for: an elastic
  // cluster only when the wait it saves is worth its expected cost.
  // nullopt: no such test. A user's may only lower the site's.
  std::optional<double> overflow_worth;
  bool overflow_worth_by_site = false;
  SpotUse spot = SpotUse::kAllow;
  std::string currency = "$";
  // What elastic clusters may bill per calendar day and month (UTC), in the
  // currency: each user's, and the site's all users together. nullopt: no
  // limit. A user's file may only lower them.
  struct Limits {
    std::optional<double> day, month;
    bool any() const { return day.has_value() || month.has_value(); }
  };
  Limits user_budget, site_budget;
};

enum class OnBrokerError { kHome, kFail };

// What a routed sbatch prints: as a single cluster's sbatch ("Submitted
// batch job <id>", "<id>" with --parsable; the default), or as Slurm's
// multi-cluster sbatch ("Submitted batch job <id> on cluster <c>",
// "<id>;<c>"). Either way <id> is the job's global id (job/global_id.h).
enum class SubmitOutput { kSingleCluster, kMultiCluster };
Result<SubmitOutput> ParseSubmitOutput(std::string_view value);

// Whether what a job wrote in its folder on another cluster (one that got a
// copy of the folder) comes back to the folder it was submitted from when
// it ends, with no --sky-sync-back: kAuto (the default) when sbatch's
// answer was read by a program (a workflow engine waits for the outputs
// there), not when it was printed to a person's terminal.
enum class SyncBack { kAuto, kAlways, kNever };
Result<SyncBack> ParseSyncBack(std::string_view value);

// skyslurmd's failover policy (docs/configuration.md). Durations in seconds.
struct FailoverSettings {
  int poll_interval = 5;        // between two looks at every cluster's queue
  int migrate_after = 120;      // a job pends this long before a move is weighed
  int migrate_gain = 300;       // another cluster must start it at least this much sooner
  int max_moves = 3;            // moves per job
  int moves_per_cluster = 10;   // moves into one cluster per minute (back-pressure)
  int cluster_dead_after = 20;  // unreachable this long: its pending jobs are re-placed
  int max_restarts = 3;         // restarts of a managed job after node failure/preemption
  int idle_exit = 600;          // a started-on-demand daemon with nothing to watch exits
};

struct Settings {
  std::string home;     // the home cluster
  bool routing = true;  // false: the shim always passes through
  // Where skyslurmd serves the dashboard (docs/dashboard.md): loopback
  // unless the site file (only it) names another address.
  std::string dashboard_address = "127.0.0.1";
  OnBrokerError on_broker_error = OnBrokerError::kHome;
  SubmitOutput submit_output = SubmitOutput::kSingleCluster;
  SyncBack sync_back = SyncBack::kAuto;
  std::string real_bin_dir;                   // where the real sbatch/salloc/srun are
  std::vector<std::string> clusters_allowed;  // empty: all
  std::vector<std::string> clusters_denied;
  // A site's skyslurmd replicas (host:port): the client's daemon, when
  // set, instead of the user's own (docs/site.md); and its user.
  std::vector<std::string> site;
  std::string site_user = "skyslurm";
  std::map<std::string, std::vector<std::string>> accelerators;  // canonical -> extra spellings
  std::map<std::string, ClusterSettings> clusters;
  FailoverSettings failover;
  // paths.rewrite_script: the script's own paths under a named root are
  // rewritten for the target (else only listed as caveats).
  bool rewrite_script_paths = false;
  // A job's folder copied to a peer may hold at most this many bytes (after
  // .gitignore/.skyignore); 0 = no limit.
  std::uint64_t sync_limit = std::uint64_t{1} << 30;
  // The bandwidth a copy may use, bytes per second (rsync --bwlimit); 0 = any.
  std::uint64_t sync_bwlimit = 0;
  // Groups of clusters that mount one filesystem at the same paths: a job
  // moving inside a group is not copied (shared_fs: [alpha, beta]).
  std::vector<std::vector<std::string>> shared_fs;
  // Estimates within this many seconds of the earliest count as a tie
  // (then preference, home, cost... decide; place/placement.h).
  int tie_tolerance = 60;
  // How long a session `skyslurm login` opens lasts (seconds). The site's
  // value is also the longest a user's file may ask for.
  int session_lifetime = 12 * 3600;
  int session_lifetime_cap = 0;  // the site's, 0 = none said
  // run_times: history: start estimates take the jobs ahead to run the share
  // of their time limits their users' jobs (of the same limit, where enough)
  // lately ended on that cluster ran (cluster/limit_use.h); limits (the
  // default): their whole limits, as Slurm plans.
  bool run_times_from_history = false;
  // estimates: calibrated: each cluster's estimated waits are taken at the
  // ratio of real to estimated waits of the jobs skyslurmd lately placed
  // there (place/estimate_calibration.h); model (the default): as
  // laid out.
  bool calibrate_estimates = false;
  // Elastic clusters: the site's policy, which a user's file may only
  // tighten (a longer overflow.after than the site's; spot only while the
  // site allows it).
  ElasticPolicy elastic;

  // The cluster's settings (defaults when it has none).
  ClusterSettings For(const std::string& cluster) const;
  // Whether policy lets jobs go to `cluster`.
  bool Allowed(const std::string& cluster) const;
  // Whether two clusters share their filesystem (one shared_fs group).
  bool ShareFilesystem(const std::string& a, const std::string& b) const;
  // The catalog with the site's and user's spellings added.
  Result<catalog::AcceleratorCatalog> Catalog() const;
};

// One row of the key table (docs/configuration.md): a top-level key, the
// environment variable and the `skyslurm` flag that set it too.
struct SettingKey {
  std::string_view key;
  std::string_view env;   // "" when only the file sets it
  std::string_view flag;  // "" likewise
  std::string_view help;
};
const std::vector<SettingKey>& SettingKeys();
// Keys allowed under clusters.<name>.
const std::vector<SettingKey>& ClusterSettingKeys();

// Parses one YAML document into `settings`, on top of what is there.
// `user_level`: a user file, which may only tighten site policy. Unknown
// keys and bad values are errors naming the file and line.
Status MergeSettingsYaml(std::string_view yaml, std::string_view file, bool user_level,
                         Settings* settings);

// Environment variables and flags (already parsed into key -> value) on top.
Status ApplyOverrides(const std::map<std::string, std::string>& values, std::string_view source,
                      Settings* settings);

// Everything a command needs to know about its configuration.
struct LoadedConfig {
  Paths paths;
  Settings settings;
  // submit_output as the files say it, before the loading process's own
  // environment: a daemon prints each client's job in the client's form
  // (its SKYSLURM_SUBMIT_OUTPUT, else this), never in its starter's.
  SubmitOutput files_submit_output = SubmitOutput::kSingleCluster;
  std::vector<SshHost> ssh_hosts;  // ~/.slurm/config
  std::vector<std::string> files_read;
};

// Site file, user file (both optional), environment (SKYSLURM_*), then the
// clusters file. `flags` are the command line's overrides.
// "1G", "500M", "64k", "1073741824", "1 GiB": bytes (powers of 1024).
Result<std::uint64_t> ParseByteSize(std::string_view text);
// 1073741824 -> "1 GiB", 1536 -> "1.5 KiB".
std::string DescribeBytes(std::uint64_t bytes);

Result<LoadedConfig> LoadConfig(const Environment& env,
                                const std::map<std::string, std::string>& flags = {});

}  // namespace skyslurm::config
