// What integration tests need to drive the real testbed (scripts/testbed/up):
// its files, each cluster's SLURM_CONF, and commands run against a cluster.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "broker/ssh/session_pool.h"
#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::testing {

// The clusters whose nodes are always up; delta, the cloud, boots its nodes
// when a job needs them (docs/testbed.md).
inline constexpr const char* kClusters[] = {"alpha", "beta", "gamma"};
inline constexpr const char* kCloudCluster = "delta";
// Slurm 24.11 behind the bastion epsilon-gw, which asks for a one-time code
// (scripts/testbed/epsilon): RunOn runs its own clients in its namespaces.
inline constexpr std::string_view kSecondReleaseCluster = "epsilon";

struct Testbed {
  std::string dir;                         // $SKYSLURM_TESTBED_DIR
  std::map<std::string, std::string> env;  // the exports of $dir/env

  // SLURM_CONF of a cluster, from the env file.
  std::string SlurmConf(std::string_view cluster) const;
  // The address of a cluster's login node: 127.0.0.1 for the home, a
  // peer's own in its network namespace (scripts/testbed/cut).
  std::string LoginHost(std::string_view cluster) const;
  // The SLURM_CONF of a session on a cluster's login node (a peer's names
  // its controller across the link: scripts/testbed/lib.sh).
  std::string LoginSlurmConf(std::string_view cluster) const;
  // $dir/<relative>.
  std::string Path(std::string_view relative) const;
};

// Reads the running testbed's env file (SKYSLURM_TESTBED_DIR, default
// /tmp/skyslurm-testbed). An error says how to bring it up.
Result<Testbed> LoadTestbed();

// The path of a script in the source tree's scripts/testbed/.
std::string TestbedScript(std::string_view name);

// The login nodes as the testbed's slurm-config describes them (skyuser1),
// by cluster name; fails the test when it cannot be read.
std::map<std::string, ssh::SshTarget> LoginTargets(const Testbed& tb);

// Runs argv with SLURM_CONF set to the cluster's.
CommandOutput RunOn(const Testbed& tb, std::string_view cluster, std::vector<std::string> argv,
                    std::chrono::seconds timeout = std::chrono::seconds(60));
// Runs the command here, failing the test on a spawn error.
CommandOutput Exec(Command command);
// Runs `remote_command` on a cluster's login node as skyuser1, with OpenSSH
// and the testbed's slurm-config, as the user would: beta and gamma have
// filesystems of their own (docs/testbed.md), so this is how a test looks
// at a peer's files.
CommandOutput SshAsUser(const Testbed& tb, std::string_view cluster,
                        const std::string& remote_command,
                        std::chrono::seconds timeout = std::chrono::seconds(60));
// A file as skyuser1 sees it on `cluster`'s login node (`path` absolute, or
// relative to the home there), once it exists and is not empty (output lands
// after the job's state says it ended), or "" with the test failed.
// (epsilon's are read where this machine keeps them.)
std::string ReadOnCluster(const Testbed& tb, std::string_view cluster, const std::string& path,
                          std::chrono::seconds timeout = std::chrono::seconds(10));

// A skyslurm.yaml naming alpha home and the always-up clusters reached
// here by their SLURM_CONF (no SSH), each with its module tree; gamma
// renames cuda to CUDA, as the ready user's does.
std::string LocalClustersConfig(const Testbed& tb);

// `skyslurm explain ARGS` in `dir` with only the file `config` (no site
// file, no clusters file) and HOME=dir.
Command ExplainCommand(const std::string& config, const std::string& dir,
                       const std::vector<std::string>& args);

// sbatch --parsable on `cluster`; returns the job id, or "" with the test
// failed (and sbatch's stderr shown).
std::string Submit(const Testbed& tb, std::string_view cluster,
                   const std::vector<std::string>& sbatch_args);

// Fills alpha's 16 H100s (two jobs of 8, sleeping 10 minutes) and waits up
// to 15 s each for them to run; returns their ids for the caller to cancel.
std::vector<std::string> FillAlphaH100s(const Testbed& tb);

// A routed submission's "Submitted batch job G\n" (or "G\n" with
// --parsable; or the multi-cluster form "... G on cluster C", "G;C") as
// (C, N): the cluster and its own id that the global id G names (the
// testbed's clusters' indices, derived from their names: job/global_id.h);
// ("", "") with the test failed (showing both streams) when it is not that.
std::pair<std::string, std::string> RoutedTo(const CommandOutput& out);
// The same for a global id alone.
std::pair<std::string, std::string> ClusterJobOf(std::string_view global_id);

// Polls the job's state until it ends (COMPLETED, FAILED, CANCELLED, ...) or
// the timeout passes; returns the last state seen.
std::string WaitForJobEnd(const Testbed& tb, std::string_view cluster, std::string_view job_id,
                          std::chrono::seconds timeout = std::chrono::seconds(60));
// The job's current state (squeue -t all; a heterogeneous job's first
// component's), "" when Slurm no longer knows it.
std::string JobState(const Testbed& tb, std::string_view cluster, std::string_view job_id);
// The fields of `scontrol show job -o` that a submission decides (name,
// partition, limits, sizes, folder, account, user, StdOut with the job's
// id as "ID"): equal for two submissions of the same job.
std::map<std::string, std::string> SubmissionRecord(const Testbed& tb, std::string_view cluster,
                                                    const std::string& job_id);

// Polls `path` until it exists and is not empty (job output lands after the
// job ends on a shared filesystem), then returns its content.
std::string ReadFileWhenReady(const std::string& path,
                              std::chrono::seconds timeout = std::chrono::seconds(10));
std::string ReadFile(const std::string& path);
// Writes `text` to `path`, replacing it; fails the test when it cannot.
void WriteFile(const std::string& path, std::string_view text);

// A directory under /tmp, world-writable so that test users' jobs can write
// into it, removed with its contents at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// A fixture for tests against the running testbed: tb_ is loaded in SetUp,
// which fails the test, saying how to bring the testbed up, when it is not.
// Fixtures with more to set up call WithTestbed::SetUp() first and return on
// HasFatalFailure().
template <typename Base>
class WithTestbed : public Base {
 protected:
  void SetUp() override {
    auto tb = LoadTestbed();
    ASSERT_TRUE(tb.ok()) << tb.status().message();
    tb_ = *tb;
  }
  Testbed tb_;
};
using TestbedTest = WithTestbed<::testing::Test>;

// A copy of the testbed's ready user's home at `home` (its ~/.slurm/config,
// keys, skyslurm.yaml), without any skyslurmd state it may hold: a test's
// own, empty, daemon state.
void CopyReadyHome(const Testbed& tb, const std::string& home);

// A TOTP code epsilon-gw accepts now for `user` (oathtool with the secret
// in $TB/otp/<user>): each call a later time step than the last one any
// test used (pam_oath refuses a code used before), waiting for the clock
// when the bastion's window of 4 steps ahead would be passed.
std::string OneTimeCode(const Testbed& tb, const std::string& user = "skyuser1");
// The skyslurmd of the user whose HOME is `home` (its pid from the lock file
// ~/.local/state/skyslurm/skyslurmd.lock), 0 when none runs.
int UserDaemonPid(const std::string& home);
// Whether the process runs (and is not a zombie).
bool ProcessAlive(int pid);
// Stops that daemon (SIGTERM) and waits until it is gone.
void StopUserDaemon(const std::string& home);

// PIDs of running (not zombie) processes whose environment carries the
// testbed's daemon marker SKYSLURM_TESTBED_DAEMON=<dir>.
std::vector<int> MarkedTestbedProcesses(const std::string& dir);

}  // namespace skyslurm::testing
