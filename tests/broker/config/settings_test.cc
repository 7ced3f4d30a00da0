#include "broker/config/settings.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace skyslurm::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char kSite[] = R"(# site policy
home: alpha
on_broker_error: fail
clusters_denied: [delta]
accelerators:
  H100: [hopper]
clusters:
  beta:
    gpu_aliases: { H100: nvidia_h100_80gb_hbm3 }
    partitions: { gpu: h100-cluster }
    modules: { cuda/12.1: cuda/12.4 }
    accounts: { proj-a: beta-proj-a }
    qos: { normal: standard }
    preference: 2
  gamma:
    modules:
      cuda: CUDA
      cuda/11.8: cuda-toolkit/12.4
    workdir: /scratch/alice
)";

TEST(SettingsTest, ReadsEveryKey) {
  Settings s;
  ASSERT_TRUE(MergeSettingsYaml(kSite, "site.yaml", false, &s).ok());
  EXPECT_EQ(s.home, "alpha");
  EXPECT_EQ(s.on_broker_error, OnBrokerError::kFail);
  EXPECT_FALSE(s.Allowed("delta"));
  EXPECT_TRUE(s.Allowed("beta"));
  const ClusterSettings beta = s.For("beta");
  EXPECT_EQ(beta.gpu_aliases.at("H100"), "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(beta.partitions.at("gpu"), "h100-cluster");
  EXPECT_EQ(beta.modules.versions.at("cuda/12.1"), "cuda/12.4");
  EXPECT_EQ(beta.accounts.at("proj-a"), "beta-proj-a");
  EXPECT_EQ(beta.qos.at("normal"), "standard");
  EXPECT_EQ(beta.preference, 2);
  const ClusterSettings gamma = s.For("gamma");
  EXPECT_EQ(gamma.modules.renames.at("cuda"), "CUDA");
  EXPECT_EQ(gamma.modules.versions.at("cuda/11.8"), "cuda-toolkit/12.4");
  EXPECT_EQ(gamma.workdir, "/scratch/alice");
  EXPECT_EQ(s.For("unknown").preference, 0);
  auto catalog = s.Catalog();
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->Canonical("Hopper"), "H100");
}

// The dashboard listens on loopback; only the site may open it wider.
TEST(SettingsTest, OnlyTheSiteFileSetsWhereTheDashboardListens) {
  Settings s;
  EXPECT_EQ(s.dashboard_address, "127.0.0.1");
  ASSERT_TRUE(MergeSettingsYaml("dashboard_address: 10.0.0.5\n", "site", false, &s).ok());
  EXPECT_EQ(s.dashboard_address, "10.0.0.5");
  EXPECT_EQ(MergeSettingsYaml("dashboard_address: 0.0.0.0\n", "user", true, &s).message(),
            "user:1: dashboard_address: only the site file may set it");
  EXPECT_EQ(s.dashboard_address, "10.0.0.5");
}

TEST(SettingsTest, UserFileMergesOnTopButCannotLoosenPolicy) {
  Settings s;
  ASSERT_TRUE(
      MergeSettingsYaml("routing: off\nclusters_allowed: [alpha, beta]\n", "site", false, &s).ok());
  ASSERT_TRUE(MergeSettingsYaml("routing: on\nclusters_allowed: [beta, gamma]\n"
                                "clusters:\n  beta:\n    preference: 5\n",
                                "user", true, &s)
                  .ok());
  EXPECT_FALSE(s.routing);
  EXPECT_TRUE(s.Allowed("beta"));
  EXPECT_FALSE(s.Allowed("alpha"));
  EXPECT_FALSE(s.Allowed("gamma"));
  EXPECT_EQ(s.For("beta").preference, 5);
}

TEST(SettingsTest, UnknownKeysAreErrorsWithTheLine) {
  Settings s;
  EXPECT_EQ(MergeSettingsYaml("home: a\nhoem: b\n", "s.yaml", false, &s).message(),
            "s.yaml:2: unknown key 'hoem' (did you mean 'home'?)");
  EXPECT_EQ(
      MergeSettingsYaml("clusters:\n  beta:\n    gpu_alias: {}\n", "s.yaml", false, &s).message(),
      "s.yaml:3: unknown key 'gpu_alias' under clusters.beta (did you mean 'gpu_aliases'?)");
  EXPECT_EQ(MergeSettingsYaml("completely_wrong: 1\n", "s.yaml", false, &s).message(),
            "s.yaml:1: unknown key 'completely_wrong'");
}

TEST(SettingsTest, BadValuesAreErrorsWithTheLine) {
  Settings s;
  EXPECT_EQ(MergeSettingsYaml("routing: maybe\n", "s", false, &s).message(),
            "s:1: 'routing' must be on or off, not 'maybe'");
  EXPECT_EQ(MergeSettingsYaml("on_broker_error: panic\n", "s", false, &s).message(),
            "s:1: on_broker_error must be 'home' or 'fail', not 'panic'");
  EXPECT_EQ(MergeSettingsYaml("clusters:\n  b:\n    preference: high\n", "s", false, &s).message(),
            "s:3: preference must be a whole number, not 'high'");
  EXPECT_THAT(MergeSettingsYaml("clusters:\n  b:\n    modules: {cuda/12.1: CUDA}\n", "s", false, &s)
                  .message(),
              HasSubstr("s:3: modules: map a name to a name"));
  EXPECT_THAT(MergeSettingsYaml("accelerators: {X1: [y]}\n", "s", false, &s).message(),
              HasSubstr("s:1: unknown accelerator 'X1'"));
  EXPECT_THAT(MergeSettingsYaml("home: [a\n", "s", false, &s).message(),
              HasSubstr("not valid YAML"));
  EXPECT_THAT(MergeSettingsYaml("- a\n", "s", false, &s).message(), HasSubstr("must be a mapping"));
  EXPECT_TRUE(MergeSettingsYaml("", "s", false, &s).ok());
  // Issue 17: two clusters pinned to one global id index would share ids.
  EXPECT_EQ(MergeSettingsYaml("clusters:\n  a:\n    job_id_index: 5\n  b:\n    job_id_index: 5\n",
                              "s", false, &s)
                .message(),
            "s:5: job_id_index 5 is a's already: each cluster needs its own");
}

// A Kubernetes cluster's root may be a claim (its --container-mounts
// volumes); anything else must be an absolute path.
TEST(SettingsTest, APathRootIsAnAbsolutePathOrAClaim) {
  Settings s;
  ASSERT_TRUE(MergeSettingsYaml("clusters:\n  k:\n    kind: kubernetes\n    paths: {scratch: "
                                "pvc:scratch-claim/%u, data: /mnt/data}\n",
                                "s", false, &s)
                  .ok());
  EXPECT_EQ(s.clusters.at("k").paths.at("scratch"), "pvc:scratch-claim/%u");
  for (const char* bad : {"pvc:", "pvc:/x", "scratch", "/"}) {
    EXPECT_THAT(MergeSettingsYaml(fmt::format("clusters:\n  k:\n    paths: {{s: '{}'}}\n", bad),
                                  "s", false, &s)
                    .message(),
                HasSubstr("or on Kubernetes pvc:CLAIM[/SUBPATH]"))
        << bad;
  }
}

// No shell reads the file: '/scratch/$USER' would be one folder for every
// user, so a '$' in a path is refused with its line and the way to say it.
TEST(SettingsTest, ADollarInAPathIsRefusedWithTheWayToSayIt) {
  Settings s;
  EXPECT_EQ(
      MergeSettingsYaml("clusters:\n  b:\n    workdir: /scratch/$USER\n", "s", false, &s).message(),
      "s:3: workdir: '/scratch/$USER' has a '$', which is not expanded here (no shell reads "
      "this file): write %u for the user's login name and ~ for the home, as in /scratch/%u");
  EXPECT_THAT(
      MergeSettingsYaml("clusters:\n  b:\n    paths:\n      scratch: /s/${USER}\n", "s", false, &s)
          .message(),
      HasSubstr("s:4: paths.scratch: '/s/${USER}' has a '$'"));
  for (const char* key : {"slurm_conf", "modulepath", "kubeconfig", "ledger"}) {
    EXPECT_THAT(
        MergeSettingsYaml(fmt::format("clusters:\n  b:\n    {}: $HOME/x\n", key), "s", false, &s)
            .message(),
        HasSubstr(fmt::format("s:3: {}: '$HOME/x' has a '$'", key)));
  }
  EXPECT_TRUE(
      MergeSettingsYaml("clusters:\n  b:\n    workdir: /scratch/%u\n", "s", false, &s).ok());
}

TEST(SettingsTest, EnvironmentAndFlags) {
  Settings s;
  ASSERT_TRUE(
      ApplyOverrides({{"home", "beta"}, {"clusters_denied", "x,y"}}, "environment", &s).ok());
  EXPECT_EQ(s.home, "beta");
  EXPECT_THAT(s.clusters_denied, ElementsAre("x", "y"));
  EXPECT_EQ(ApplyOverrides({{"routing", "sometimes"}}, "environment", &s).message(),
            "environment: routing: must be on or off, not 'sometimes'");
}

TEST(SettingsTest, FailoverDurationsAndCounts) {
  Settings s;
  ASSERT_TRUE(MergeSettingsYaml("migrate_after: 2m\nmigrate_gain: 90\nmax_moves: 5\n"
                                "cluster_dead_after: 15s\nidle_exit: 1h\n",
                                "f.yaml", false, &s)
                  .ok());
  EXPECT_EQ(s.failover.migrate_after, 120);
  EXPECT_EQ(s.failover.migrate_gain, 90);
  EXPECT_EQ(s.failover.max_moves, 5);
  EXPECT_EQ(s.failover.cluster_dead_after, 15);
  EXPECT_EQ(s.failover.idle_exit, 3600);
  ASSERT_TRUE(ApplyOverrides({{"poll_interval", "1s"}}, "environment", &s).ok());
  EXPECT_EQ(s.failover.poll_interval, 1);
  EXPECT_EQ(MergeSettingsYaml("max_moves: 2m\n", "f.yaml", false, &s).message(),
            "f.yaml:1: 'max_moves' must be a whole number, not '2m'");
  EXPECT_EQ(ApplyOverrides({{"migrate_after", "soon"}}, "environment", &s).message(),
            "environment: migrate_after: 'migrate_after' must be a duration (90, 90s, 2m, 1h), "
            "not 'soon'");
  EXPECT_EQ(ApplyOverrides({{"poll_interval", "0"}}, "environment", &s).message(),
            "environment: poll_interval: 'poll_interval' must be at least 1s");
}

TEST(SettingsTest, SyncLimitAndSharedFilesystems) {
  Settings s;
  EXPECT_EQ(s.sync_limit, std::uint64_t{1} << 30);  // 1 GiB by default
  ASSERT_TRUE(
      MergeSettingsYaml("sync_limit: 500M\nshared_fs: [alpha, beta]\n", "site.yaml", false, &s)
          .ok());
  EXPECT_EQ(s.sync_limit, 500u << 20);
  EXPECT_TRUE(s.ShareFilesystem("alpha", "beta"));
  EXPECT_TRUE(s.ShareFilesystem("beta", "alpha"));
  EXPECT_FALSE(s.ShareFilesystem("alpha", "gamma"));
  ASSERT_TRUE(MergeSettingsYaml("shared_fs: [[gamma, delta]]\n", "user.yaml", true, &s).ok());
  EXPECT_TRUE(s.ShareFilesystem("gamma", "delta"));
  EXPECT_TRUE(s.ShareFilesystem("alpha", "beta"));  // groups add up
  ASSERT_TRUE(ApplyOverrides({{"sync_limit", "2G"}}, "environment", &s).ok());
  EXPECT_EQ(s.sync_limit, std::uint64_t{2} << 30);
  ASSERT_TRUE(ApplyOverrides({{"sync_limit", "0"}}, "environment", &s).ok());
  EXPECT_EQ(s.sync_limit, 0u);
  EXPECT_THAT(MergeSettingsYaml("sync_limit: lots\n", "site.yaml", false, &s).message(),
              HasSubstr("site.yaml:1: sync_limit: 'lots' is not a size"));
  EXPECT_THAT(MergeSettingsYaml("shared_fs: alpha\n", "site.yaml", false, &s).message(),
              HasSubstr("site.yaml:1: 'shared_fs' must be a list"));
}

// Issue 15: an elastic cluster's keys, and the policy for elastic clusters,
// which a user's file may only tighten.
TEST(SettingsTest, ElasticClustersAndTheirPolicy) {
  Settings s;
  EXPECT_EQ(s.elastic.overflow_after, 900);  // 15 min by default
  EXPECT_EQ(s.elastic.spot, SpotUse::kAllow);
  ASSERT_TRUE(MergeSettingsYaml("overflow: {after: 10m}\nspot: avoid\ncurrency: \"€\"\n"
                                "clusters:\n  delta:\n    boot_time: 3m\n    ledger: /var/l.csv\n"
                                "    suspend_time: 5m\n    spot: [spot]\n"
                                "    cost: {cloud: 4, spot: 1.5, default: 3}\n"
                                "  onprem:\n    cost: 0.25\n",
                                "site.yaml", false, &s)
                  .ok());
  EXPECT_EQ(s.elastic.overflow_after, 600);
  EXPECT_EQ(s.elastic.spot, SpotUse::kAvoid);
  EXPECT_EQ(s.elastic.currency, "€");
  const ClusterSettings d = s.For("delta");
  EXPECT_EQ(d.boot_time, 180);
  EXPECT_EQ(d.ledger, "/var/l.csv");
  EXPECT_EQ(d.suspend_time, 300);
  EXPECT_THAT(d.spot, ElementsAre("spot"));
  EXPECT_TRUE(d.SaysElastic());
  EXPECT_EQ(d.PriceIn("cloud"), 4.0);
  EXPECT_EQ(d.PriceIn("spot"), 1.5);
  EXPECT_EQ(d.PriceIn("other"), 3.0);
  EXPECT_EQ(s.For("onprem").PriceIn("any"), 0.25);
  EXPECT_FALSE(s.For("onprem").SaysElastic());
  EXPECT_FALSE(s.For("alpha").PriceIn("gpu").has_value());  // free
  EXPECT_EQ(s.For("alpha").suspend_time, 600);

  // The user waits longer, never less; chooses spot only while the site allows.
  ASSERT_TRUE(
      MergeSettingsYaml("overflow: {after: 5m}\nspot: require\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.elastic.overflow_after, 600);
  EXPECT_EQ(s.elastic.spot, SpotUse::kAvoid);
  ASSERT_TRUE(MergeSettingsYaml("overflow: {after: 1h}\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.elastic.overflow_after, 3600);
  Settings allowing;  // the site says nothing: the user chooses
  ASSERT_TRUE(
      MergeSettingsYaml("spot: require\noverflow: {after: 2m}\n", "user.yaml", true, &allowing)
          .ok());
  EXPECT_EQ(allowing.elastic.spot, SpotUse::kRequire);
  EXPECT_EQ(allowing.elastic.overflow_after, 120);

  // overflow.worth: none by default; a user values a wait less than the
  // site, never more; where the site says nothing, the user chooses.
  EXPECT_FALSE(s.elastic.overflow_worth.has_value());
  ASSERT_TRUE(MergeSettingsYaml("overflow: {worth: 6}\n", "s.yaml", false, &s).ok());
  EXPECT_EQ(s.elastic.overflow_worth, 6.0);
  ASSERT_TRUE(MergeSettingsYaml("overflow: {worth: 10}\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.elastic.overflow_worth, 6.0);
  ASSERT_TRUE(MergeSettingsYaml("overflow: {worth: 2.5}\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.elastic.overflow_worth, 2.5);
  ASSERT_TRUE(MergeSettingsYaml("overflow: {worth: 10}\n", "user.yaml", true, &allowing).ok());
  EXPECT_EQ(allowing.elastic.overflow_worth, 10.0);
  EXPECT_EQ(MergeSettingsYaml("overflow: {worth: lots}\n", "s.yaml", false, &s).message(),
            "s.yaml:1: overflow.worth must be a price per GPU-hour (a number, 0 or more), not "
            "'lots'");

  EXPECT_EQ(MergeSettingsYaml("overflow: {afer: 5m}\n", "s.yaml", false, &s).message(),
            "s.yaml:1: unknown key overflow.afer (known: after, worth)");
  EXPECT_EQ(MergeSettingsYaml("spot: sometimes\n", "s.yaml", false, &s).message(),
            "s.yaml:1: spot must be allow, avoid or require, not 'sometimes'");
  EXPECT_EQ(MergeSettingsYaml("clusters:\n  d:\n    boot_time: 0\n", "s.yaml", false, &s).message(),
            "s.yaml:3: boot_time must be a duration above 0 (300, 300s, 5m, 1h), not '0'");
  EXPECT_EQ(
      MergeSettingsYaml("clusters:\n  d:\n    cost: {spot: -1}\n", "s.yaml", false, &s).message(),
      "s.yaml:3: cost.spot must be a price per GPU-hour (a number, 0 or more), not '-1'");
  EXPECT_EQ(MergeSettingsYaml("clusters:\n  d:\n    cost: cheap\n", "s.yaml", false, &s).message(),
            "s.yaml:3: cost must be a price per GPU-hour (a number, 0 or more), not 'cheap'");
}

TEST(SettingsTest, BudgetsAndPricesAreTheSitesAUserMayOnlyLowerABudget) {
  Settings s;
  EXPECT_FALSE(s.elastic.user_budget.any());
  ASSERT_TRUE(MergeSettingsYaml("budget:\n  user: {day: 50, month: 400}\n  site: {month: 8000}\n"
                                "clusters:\n  delta:\n    cost: {cloud: 4, spot: 1.5}\n",
                                "site.yaml", false, &s)
                  .ok());
  EXPECT_EQ(s.elastic.user_budget.day, 50.0);
  EXPECT_EQ(s.elastic.user_budget.month, 400.0);
  EXPECT_FALSE(s.elastic.site_budget.day.has_value());
  EXPECT_EQ(s.elastic.site_budget.month, 8000.0);
  // Lower, yes; higher, no; a limit the site left open, yes.
  ASSERT_TRUE(MergeSettingsYaml("budget: {user: {day: 20, month: 900}, site: {day: 100}}\n",
                                "user.yaml", true, &s)
                  .ok());
  EXPECT_EQ(s.elastic.user_budget.day, 20.0);
  EXPECT_EQ(s.elastic.user_budget.month, 400.0);
  EXPECT_EQ(s.elastic.site_budget.day, 100.0);
  // A price the site set is not the user's to change; one it did not set is.
  EXPECT_EQ(
      MergeSettingsYaml("clusters:\n  delta:\n    cost: 0\n", "user.yaml", true, &s).message(),
      "user.yaml:3: clusters.delta.cost is set by the site (a user's file cannot change a price)");
  EXPECT_EQ(s.For("delta").PriceIn("cloud"), 4.0);
  ASSERT_TRUE(MergeSettingsYaml("clusters:\n  other:\n    cost: 2\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.For("other").PriceIn("x"), 2.0);

  EXPECT_EQ(s.tie_tolerance, 60);
  ASSERT_TRUE(MergeSettingsYaml("tie_tolerance: 5s\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.tie_tolerance, 5);

  EXPECT_FALSE(s.run_times_from_history);
  ASSERT_TRUE(MergeSettingsYaml("run_times: history\n", "s.yaml", false, &s).ok());
  EXPECT_TRUE(s.run_times_from_history);
  ASSERT_TRUE(MergeSettingsYaml("run_times: limits\n", "user.yaml", true, &s).ok());
  EXPECT_FALSE(s.run_times_from_history);
  EXPECT_EQ(MergeSettingsYaml("run_times: guess\n", "s.yaml", false, &s).message(),
            "s.yaml:1: run_times must be limits or history, not 'guess'");
  EXPECT_FALSE(s.calibrate_estimates);
  ASSERT_TRUE(MergeSettingsYaml("estimates: calibrated\n", "s.yaml", false, &s).ok());
  EXPECT_TRUE(s.calibrate_estimates);
  ASSERT_TRUE(MergeSettingsYaml("estimates: model\n", "user.yaml", true, &s).ok());
  EXPECT_FALSE(s.calibrate_estimates);
  EXPECT_EQ(MergeSettingsYaml("estimates: wild\n", "s.yaml", false, &s).message(),
            "s.yaml:1: estimates must be model or calibrated, not 'wild'");

  EXPECT_EQ(MergeSettingsYaml("budget: {team: {day: 1}}\n", "s.yaml", false, &s).message(),
            "s.yaml:1: unknown key budget.team (known: user, site)");
  EXPECT_EQ(MergeSettingsYaml("budget: {user: {week: 1}}\n", "s.yaml", false, &s).message(),
            "s.yaml:1: unknown key budget.user.week (known: day, month)");
  EXPECT_EQ(MergeSettingsYaml("budget: {user: {day: lots}}\n", "s.yaml", false, &s).message(),
            "s.yaml:1: budget.user.day must be an amount in the currency (0 or more), not 'lots'");
  EXPECT_EQ(MergeSettingsYaml("budget: 5\n", "s.yaml", false, &s).message(),
            "s.yaml:1: 'budget' must be a mapping (user: {day: 50, month: 400}, site: ...)");
}

TEST(SettingsTest, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("1073741824"), 1073741824u);
  EXPECT_EQ(*ParseByteSize("64k"), 64u << 10);
  EXPECT_EQ(*ParseByteSize("1.5 GiB"), 3u << 29);
  EXPECT_EQ(*ParseByteSize("2TB"), std::uint64_t{2} << 40);
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("1X").ok());
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_EQ(DescribeBytes(0), "0 bytes");
  EXPECT_EQ(DescribeBytes(1536), "1.5 KiB");
  EXPECT_EQ(DescribeBytes(std::uint64_t{1} << 30), "1 GiB");
}

TEST(SettingsTest, ASessionLastsNoLongerThanTheSiteAllows) {
  Settings s;
  EXPECT_EQ(s.session_lifetime, 12 * 3600);
  ASSERT_TRUE(MergeSettingsYaml("session_lifetime: 8h\n", "site.yaml", false, &s).ok());
  EXPECT_EQ(s.session_lifetime, 8 * 3600);
  ASSERT_TRUE(MergeSettingsYaml("session_lifetime: 1h\n", "user.yaml", true, &s).ok());
  EXPECT_EQ(s.session_lifetime, 3600);
  EXPECT_EQ(
      MergeSettingsYaml("session_lifetime: 9h\n", "user.yaml", true, &s).message(),
      "user.yaml:1: session_lifetime: the site allows sessions of 28800 s at most, not 32400 s");
  ASSERT_TRUE(
      MergeSettingsYaml("clusters:\n  epsilon:\n    one_time_code: true\n", "u.yaml", true, &s)
          .ok());
  EXPECT_TRUE(s.For("epsilon").one_time_code);
  EXPECT_FALSE(s.For("beta").one_time_code);
  EXPECT_FALSE(
      MergeSettingsYaml("clusters:\n  e:\n    one_time_code: maybe\n", "u.yaml", true, &s).ok());
}

TEST(SettingsTest, KeyTableNamesEnvironmentVariables) {
  for (const auto& key : SettingKeys()) {
    if (!key.env.empty()) {
      EXPECT_TRUE(key.env.starts_with("SKYSLURM_")) << key.key;
    }
  }
}

TEST(LoadConfigTest, SiteUserEnvironmentAndClustersFile) {
  const auto dir = std::filesystem::temp_directory_path() / "skyslurm-loadconfig-test";
  std::filesystem::create_directories(dir / ".slurm");
  std::ofstream(dir / "site.yaml") << "home: alpha\nclusters_denied: [delta]\n";
  std::ofstream(dir / "user.yaml") << "clusters:\n  beta:\n    preference: 3\n";
  std::ofstream(dir / ".slurm/config") << "Host beta\n  HostName 127.0.0.1\n  Port 7110\n";
  Environment env({{"HOME", dir.string()},
                   {"SKYSLURM_SITE_CONFIG", (dir / "site.yaml").string()},
                   {"SKYSLURM_CONFIG", (dir / "user.yaml").string()},
                   {"SKYSLURM_HOME", "gamma"}});
  auto loaded = LoadConfig(env);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.home, "gamma");  // environment over files
  EXPECT_EQ(loaded->settings.For("beta").preference, 3);
  EXPECT_FALSE(loaded->settings.Allowed("delta"));
  ASSERT_EQ(loaded->ssh_hosts.size(), 1u);
  EXPECT_EQ(loaded->ssh_hosts[0].port, 7110);
  EXPECT_EQ(loaded->files_read.size(), 2u);
  auto flagged = LoadConfig(env, {{"home", "beta"}});
  EXPECT_EQ(flagged->settings.home, "beta");  // flags over environment
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace skyslurm::config
