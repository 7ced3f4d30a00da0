#include "broker/config/paths.h"

#include <gtest/gtest.h>

namespace skyslurm::config {
namespace {

TEST(PathsTest, DefaultsFollowHomeAndXdg) {
  auto p = ResolvePaths(Environment({{"HOME", "/home/alice"}, {"USER", "alice"}}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->home, "/home/alice");
  EXPECT_EQ(p->user, "alice");
  EXPECT_EQ(p->user_config, "/home/alice/.config/skyslurm/skyslurm.yaml");
  EXPECT_EQ(p->site_config, "/etc/skyslurm/skyslurm.yaml");
  EXPECT_EQ(p->clusters_file, "/home/alice/.slurm/config");
  EXPECT_EQ(p->state_dir, "/home/alice/.local/state/skyslurm");
}

TEST(PathsTest, XdgAndSkyslurmVariablesWin) {
  auto p = ResolvePaths(Environment({{"HOME", "/h"},
                                     {"XDG_CONFIG_HOME", "/xdg"},
                                     {"XDG_STATE_HOME", "/state"},
                                     {"SKYSLURM_SITE_CONFIG", "/tmp/site.yaml"}}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->user_config, "/xdg/skyslurm/skyslurm.yaml");
  EXPECT_EQ(p->site_config, "/tmp/site.yaml");
  EXPECT_EQ(p->state_dir, "/state/skyslurm");
  auto q = ResolvePaths(Environment({{"HOME", "/h"}, {"SKYSLURM_CONFIG", "~/my.yaml"},
                                     {"SKYSLURM_CLUSTERS_FILE", "~/clusters"}}));
  EXPECT_EQ(q->user_config, "/h/my.yaml");
  EXPECT_EQ(q->clusters_file, "/h/clusters");
}

TEST(PathsTest, WithoutHomeThePasswordDatabaseAnswers) {
  auto p = ResolvePaths(Environment());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->home.empty());
}

TEST(PathsTest, ExpandHome) {
  EXPECT_EQ(ExpandHome("~", "/h"), "/h");
  EXPECT_EQ(ExpandHome("~/x", "/h"), "/h/x");
  EXPECT_EQ(ExpandHome("/abs", "/h"), "/abs");
  EXPECT_EQ(ExpandHome("~bob/x", "/h"), "~bob/x");
}

}  // namespace
}  // namespace skyslurm::config
