#include "broker/cluster/registry.h"

#include <gtest/gtest.h>

namespace skyslurm::cluster {
namespace {

config::SshHost Host(const std::string& name, const std::string& jump = "") {
  config::SshHost h;
  h.name = name;
  h.hostname = name + ".example";
  h.proxy_jump = jump;
  return h;
}

// A Host that another Host jumps through is its bastion: no cluster to send
// jobs to, and the cluster behind it has a login session there.
TEST(ClusterRegistryTest, ABastionIsNoClusterAndItsClusterHasASession) {
  config::LoadedConfig config;
  config.settings.home = "alpha";
  config.paths.clusters_file = "/home/u/.slurm/config";
  config.paths.state_dir = "/home/u/.local/state/skyslurm";
  config.ssh_hosts = {Host("beta"), Host("epsilon-gw"), Host("epsilon", "epsilon-gw"),
                      Host("zeta", "me@far:2222")};
  const config::Environment env(
      std::map<std::string, std::string>{{"XDG_RUNTIME_DIR", "/nonexistent-run"}});
  auto registry = ClusterRegistry::FromConfig(config, env);
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  EXPECT_EQ(registry->Find("epsilon-gw"), nullptr);
  ASSERT_NE(registry->Find("beta"), nullptr);
  EXPECT_FALSE(registry->Find("beta")->session);
  const ClusterEntry* epsilon = registry->Find("epsilon");
  ASSERT_NE(epsilon, nullptr);
  ASSERT_TRUE(epsilon->session);
  EXPECT_EQ(epsilon->session->jump, "epsilon-gw");
  EXPECT_EQ(epsilon->session->clusters_file, "/home/u/.slurm/config");  // ssh -F: its Host block
  EXPECT_EQ(epsilon->session->socket,
            "/home/u/.local/state/skyslurm/run/sessions/epsilon.sock");  // no run folder there
  ASSERT_TRUE(registry->Find("zeta")->session);
  EXPECT_EQ(registry->Find("zeta")->session->clusters_file, "");  // user@host:port: ssh's own
}

// Named in the settings too, a jump host stays a cluster (a login node that
// is also the way to another).
TEST(ClusterRegistryTest, AJumpHostTheSettingsNameStaysACluster) {
  config::LoadedConfig config;
  config.settings.home = "alpha";
  config.ssh_hosts = {Host("beta"), Host("gamma", "beta")};
  auto registry = ClusterRegistry::FromConfig(config, config::Environment());
  ASSERT_TRUE(registry.ok());
  EXPECT_EQ(registry->Find("beta"), nullptr);
  config.settings.clusters["beta"].name = "beta";
  registry = ClusterRegistry::FromConfig(config, config::Environment());
  ASSERT_NE(registry->Find("beta"), nullptr);
}

}  // namespace
}  // namespace skyslurm::cluster
