// site.yaml, as `skyslurmd --site` reads it: every key, its defaults, and
// errors that name the file, the line and the key.
#include "broker/config/site_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::config {
namespace {

using ::testing::HasSubstr;

TEST(SiteSettingsTest, ReadsEveryKey) {
  auto s = ParseSiteSettings(
      "database: postgresql://skyslurm@db:5432/site?passfile=/etc/skyslurm/pgpass\n"
      "listen: 0.0.0.0:7540\n"
      "replica: login1\n"
      "lease: 15s\n"
      "estimates_per_second: 40\n"
      "admin_group: hpcadmin\n"
      "munge_socket: /run/munge/munge.socket.2\n"
      "runas: /opt/skyslurm/runas\n"
      "state_dir: /srv/skyslurm\n"
      "secret_key: /srv/skyslurm/site.key\n"
      "clusters:\n"
      "  alpha: {trust: local}\n",
      "site.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->database, "postgresql://skyslurm@db:5432/site?passfile=/etc/skyslurm/pgpass");
  EXPECT_EQ(s->listen, "0.0.0.0:7540");
  EXPECT_EQ(s->replica, "login1");
  EXPECT_EQ(s->lease, std::chrono::seconds(15));
  EXPECT_EQ(s->estimates_per_second, 40);
  EXPECT_EQ(s->admin_group, "hpcadmin");
  EXPECT_EQ(s->munge_socket, "/run/munge/munge.socket.2");
  EXPECT_EQ(s->runas, "/opt/skyslurm/runas");
  EXPECT_EQ(s->state_dir, "/srv/skyslurm");
  EXPECT_EQ(s->secret_key, "/srv/skyslurm/site.key");
  ASSERT_EQ(s->trust.size(), 1u);
  EXPECT_EQ(s->trust.at("alpha"), SiteTrust::kLocal);
}

TEST(SiteSettingsTest, DefaultsAndTheReplicaNamedByHostAndPort) {
  auto s = ParseSiteSettings("database: /var/lib/skyslurm/site.db\nlisten: 127.0.0.1:7540\n", "f");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->lease, std::chrono::seconds(10));
  EXPECT_EQ(s->runas, "/usr/libexec/skyslurm/skyslurmd-runas");
  EXPECT_EQ(s->state_dir, "/var/lib/skyslurm");
  EXPECT_EQ(s->secret_key, "/var/lib/skyslurm/site.key");
  EXPECT_THAT(s->replica, ::testing::EndsWith(":7540"));
  EXPECT_TRUE(s->trust.empty());
}

TEST(SiteSettingsTest, ErrorsNameTheLineAndTheKey) {
  auto unknown = ParseSiteSettings("database: x\nlisten: h:1\nleese: 10s\n", "site.yaml");
  EXPECT_THAT(unknown.status().message(), HasSubstr("site.yaml:3: unknown key 'leese'"));
  auto lease = ParseSiteSettings("database: x\nlisten: h:1\nlease: soon\n", "site.yaml");
  EXPECT_THAT(lease.status().message(), HasSubstr("site.yaml:3: lease:"));
  auto short_lease = ParseSiteSettings("database: x\nlisten: h:1\nlease: 200ms\n", "site.yaml");
  EXPECT_THAT(short_lease.status().message(), HasSubstr("1s at least"));
  auto rate = ParseSiteSettings("database: x\nlisten: h:1\nestimates_per_second: 0\n", "s");
  EXPECT_THAT(rate.status().message(), HasSubstr("s:3: estimates_per_second must be 1 to 10000"));
  auto listen = ParseSiteSettings("database: x\nlisten: 7540\n", "site.yaml");
  EXPECT_THAT(listen.status().message(), HasSubstr("site.yaml:2: listen must be host:port"));
  auto trust =
      ParseSiteSettings("database: x\nlisten: h:1\nclusters:\n  beta: {trust: jwt}\n", "site.yaml");
  EXPECT_THAT(trust.status().message(), HasSubstr("site.yaml:4: clusters.beta.trust: 'jwt'"));
  auto no_trust =
      ParseSiteSettings("database: x\nlisten: h:1\nclusters:\n  beta: {}\n", "site.yaml");
  EXPECT_THAT(no_trust.status().message(), HasSubstr("clusters.beta: say its trust"));
  EXPECT_THAT(ParseSiteSettings("listen: h:1\n", "f").status().message(),
              HasSubstr("say the database"));
  EXPECT_THAT(ParseSiteSettings("database: x\n", "f").status().message(),
              HasSubstr("say where to listen"));
  EXPECT_THAT(ParseSiteSettings("database: [x\n", "site.yaml").status().message(),
              HasSubstr("site.yaml:"));
  EXPECT_EQ(ReadSiteSettings("/nonexistent/site.yaml").status().code(), StatusCode::kNotFound);
}

TEST(SiteSettingsTest, Durations) {
  EXPECT_EQ(*ParseSiteDuration("10s"), std::chrono::seconds(10));
  EXPECT_EQ(*ParseSiteDuration("10"), std::chrono::seconds(10));
  EXPECT_EQ(*ParseSiteDuration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(*ParseSiteDuration("2m"), std::chrono::minutes(2));
  EXPECT_EQ(*ParseSiteDuration("1h"), std::chrono::hours(1));
  for (const char* bad : {"", "s", "0s", "-1s", "10x", "10 s", "99999999999999h"}) {
    EXPECT_FALSE(ParseSiteDuration(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace skyslurm::config
