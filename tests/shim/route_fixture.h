// The fixture of the end-to-end routing tests: `sbatch --sky-any-cluster`
// typed as a new user would, the testbed's ready user (HOME a fresh copy of
// $TB/home: ~/.slurm/config, known_hosts, skyslurm.yaml naming alpha home)
// with the shim first on PATH; jobs it routed cancelled at the end.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/testbed.h"

namespace skyslurm::testing {

inline const std::string kShimBin = std::string(SKYSLURM_BINARY_DIR) + "/shim/bin";

class RouteTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    home_ = tmp_.File("home");
    // A fresh copy of the ready user's home (its own decision log, cache and
    // skyslurmd, which the routed sbatch starts).
    CopyReadyHome(tb_, home_);
  }
  void TearDown() override {
    for (const auto& [cluster, id] : cleanup_) {
      if (cluster == "kappa") {  // a Kubernetes job: its Job (and pods) deleted
        Exec({.argv = {"kubectl", "--kubeconfig=" + tb_.Path("kubeconfig"),
                       "--cache-dir=" + tmp_.File("kubectl-cache"), "delete", "job",
                       "skyslurm-" + id, "--wait=false", "--ignore-not-found"}});
      } else {
        RunOn(tb_, cluster, {"scancel", id});
      }
    }
    if (!home_.empty()) StopUserDaemon(home_);
  }

  CommandOutput Typed(std::vector<std::string> argv,
                      std::vector<std::pair<std::string, std::string>> env = {},
                      bool shim_first = true) {
    Command c;
    c.argv = {"/bin/sh", "-c", "exec \"$@\"", "sh"};
    c.argv.insert(c.argv.end(), argv.begin(), argv.end());
    const std::string path = std::getenv("PATH");
    c.env_set = {{"HOME", home_},
                 {"SLURM_CONF", tb_.SlurmConf("alpha")},
                 {"PATH", shim_first ? kShimBin + ":" + path : path}};
    c.env_set.insert(c.env_set.end(), env.begin(), env.end());
    c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                   "XDG_CONFIG_HOME", "XDG_STATE_HOME"};
    c.cwd = tmp_.path();
    c.timeout = std::chrono::seconds(120);
    return Exec(c);
  }

  std::string Script(const std::string& name, const std::string& text) {
    std::ofstream(tmp_.File(name)) << text;
    return name;
  }

  void FillAlpha() {
    for (const std::string& id : FillAlphaH100s(tb_)) cleanup_.emplace_back("alpha", id);
  }

  // "Submitted batch job N on cluster C" -> (C, N), cancelled at the end.
  std::pair<std::string, std::string> Submitted(const CommandOutput& out) {
    auto routed = RoutedTo(out);
    if (!routed.first.empty()) cleanup_.push_back(routed);
    return routed;
  }

  // The job's output: in `dir` here for alpha's jobs; a peer's jobs run in
  // the user's home there, read as the user reads it (ssh).
  std::string Output(const std::string& cluster, const std::string& id, const std::string& dir) {
    EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
    if (cluster == "alpha") return ReadFileWhenReady(dir + "/slurm-" + id + ".out");
    return ReadOnCluster(tb_, cluster, "slurm-" + id + ".out");
  }

  TempDir tmp_;
  std::string home_;
  std::vector<std::pair<std::string, std::string>> cleanup_;
};

}  // namespace skyslurm::testing
