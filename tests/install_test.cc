// `cmake --install` lays out what users and admins rely on
// (docs/admin-guide.md): <prefix>/bin/skyslurm, <prefix>/sbin/skyslurmd,
// <prefix>/libexec/skyslurm/bin/{sbatch,salloc,srun,squeue,sacct,scontrol,scancel} ->
// ../skyslurm-shim and
// <prefix>/lib/skyslurm/skyslurm.so; and the installed files work as a new
// user types them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "broker/config/settings.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InstallTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    CommandOutput out = Exec({.argv = {SKYSLURM_CMAKE_COMMAND, "--install", SKYSLURM_BINARY_DIR},
                              .env_set = {{"DESTDIR", tmp_.File("root")}}});
    ASSERT_TRUE(out.success()) << out.out << out.err;
    prefix_ = tmp_.File("root") + SKYSLURM_INSTALL_PREFIX;
  }
  std::string At(const std::string& relative) const { return prefix_ + "/" + relative; }

  TempDir tmp_;
  std::string prefix_;
};

TEST_F(InstallTest, TheLayoutIsThePromisedOne) {
  for (const char* program : {"bin/skyslurm", "sbin/skyslurmd", "libexec/skyslurm/skyslurm-shim"}) {
    EXPECT_EQ(access(At(program).c_str(), X_OK), 0) << program;
  }
  for (const char* command :
       {"sbatch", "salloc", "srun", "squeue", "sacct", "scontrol", "scancel"}) {
    const fs::path link = At(std::string("libexec/skyslurm/bin/") + command);
    ASSERT_TRUE(fs::is_symlink(link)) << link;
    EXPECT_EQ(fs::read_symlink(link), "../skyslurm-shim");
  }
  // Literally lib/skyslurm, whatever the multiarch folder.
  EXPECT_TRUE(fs::is_regular_file(At("lib/skyslurm/skyslurm.so")));
  // The plugin hands invocations to the shim where this build installs it.
  EXPECT_THAT(ReadFile(At("lib/skyslurm/skyslurm.so")),
              HasSubstr(std::string(SKYSLURM_INSTALL_PREFIX) + "/libexec/skyslurm/bin"));
  // Nothing installed points back into the build tree.
  for (const char* file : {"bin/skyslurm", "sbin/skyslurmd", "libexec/skyslurm/skyslurm-shim",
                           "lib/skyslurm/skyslurm.so"}) {
    CommandOutput dynamic = Exec({.argv = {"readelf", "-d", At(file)}});
    EXPECT_THAT(dynamic.out, ::testing::Not(HasSubstr("RUNPATH"))) << file;
    EXPECT_THAT(dynamic.out, ::testing::Not(HasSubstr("RPATH"))) << file;
  }
  // Both name the Slurm release they were built against as Slurm spells it
  // (sbatch --version says "slurm-wlm 22.05.8"; once they printed 22.5.8).
  std::smatch m;
  const std::string sbatch_version = RunOn(tb_, "alpha", {"sbatch", "--version"}).out;
  ASSERT_TRUE(std::regex_search(sbatch_version, m, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << sbatch_version;
  const std::string built_against = "(built against Slurm " + m[0].str() + ")\n";
  EXPECT_THAT(Exec({.argv = {At("bin/skyslurm"), "--version"}}).out, ::testing::EndsWith(built_against));
  EXPECT_THAT(Exec({.argv = {At("sbin/skyslurmd"), "--version"}}).out, ::testing::EndsWith(built_against));
}

TEST_F(InstallTest, ThePackagedFilesDoWhatTheySay) {
  const std::string etc = At("etc");
  // The PATH hook puts the shim first only where the site turned routing on.
  // (Staged under DESTDIR: the hook is pointed at the staged shim folder, as
  // it points at <prefix>/libexec/skyslurm/bin once installed.)
  std::string hook_text = ReadFile(etc + "/profile.d/skyslurm.sh");
  const std::string baked = std::string(SKYSLURM_INSTALL_PREFIX) + "/libexec/skyslurm/bin";
  ASSERT_NE(hook_text.find("'" + baked + "'"), std::string::npos) << hook_text;
  hook_text.replace(hook_text.find("'" + baked + "'"), baked.size() + 2, "'" + At("libexec/skyslurm/bin") + "'");
  const std::string hook = tmp_.File("skyslurm.sh");
  WriteFile(hook, hook_text);
  auto path_after = [&](const std::string& site_text) {
    WriteFile(tmp_.File("site.yaml"), site_text);
    return Exec({.argv = {"/bin/sh", "-c", ". \"$1\" && printf %s \"$PATH\"", "sh", hook},
                 .env_set = {{"SKYSLURM_SITE_CONFIG", tmp_.File("site.yaml")}, {"PATH", "/usr/bin:/bin"}}})
        .out;
  };
  EXPECT_EQ(path_after("routing: on\n"), At("libexec/skyslurm/bin") + ":/usr/bin:/bin");
  EXPECT_EQ(path_after("routing: on  # the site opted in\n"), At("libexec/skyslurm/bin") + ":/usr/bin:/bin");
  EXPECT_EQ(path_after("#routing: on\n"), "/usr/bin:/bin");
  EXPECT_EQ(path_after("routing: off\n"), "/usr/bin:/bin");
  // The example configuration is valid as shipped and with its keys enabled.
  const std::string example = ReadFile(etc + "/skyslurm/skyslurm.yaml");
  config::Settings settings;
  EXPECT_TRUE(config::MergeSettingsYaml(example, "skyslurm.yaml", false, &settings).ok());
  std::string enabled;
  std::istringstream lines(example);
  for (std::string line; std::getline(lines, line);) {
    enabled += (line.starts_with("#") && !line.starts_with("# ") && line != "#" ? line.substr(1) : line) + "\n";
  }
  Status st = config::MergeSettingsYaml(enabled, "skyslurm.yaml", false, &settings);
  EXPECT_TRUE(st.ok()) << st.message() << "\n" << enabled;
  EXPECT_EQ(settings.failover.migrate_gain, 300);
  // The plugstack line names the installed plugin, commented out: admins opt in.
  EXPECT_THAT(ReadFile(etc + "/slurm/plugstack.conf.d/skyslurm.conf"),
              HasSubstr("\n#optional " + At("lib/skyslurm/skyslurm.so").substr(tmp_.File("root").size()) + "\n"));
  // The user unit runs the installed daemon.
  EXPECT_THAT(ReadFile(At("lib/systemd/user/skyslurmd.service")),
              HasSubstr("ExecStart=" + std::string(SKYSLURM_INSTALL_PREFIX) + "/sbin/skyslurmd\n"));
  // Man pages render without a warning; the completion is valid bash.
  for (const char* page : {"man1/skyslurm.1", "man5/skyslurm.yaml.5", "man8/skyslurmd.8", "man8/skyslurm_spank.8"}) {
    CommandOutput man = Exec({.argv = {"man", "-l", "--warnings", At(std::string("share/man/") + page)},
                              .env_set = {{"MANWIDTH", "80"}, {"MAN_DISABLE_SECCOMP", "1"}}});
    EXPECT_EQ(man.exit_code, 0) << page << man.err;
    EXPECT_EQ(man.err, "") << page;
  }
  CommandOutput completion = Exec({.argv = {"bash", "-c", "source \"$1\" && complete -p skyslurm sbatch", "bash",
                                            etc + "/bash_completion.d/skyslurm"}});
  EXPECT_EQ(completion.exit_code, 0) << completion.err;
  EXPECT_THAT(completion.out, HasSubstr("complete -F _skyslurm skyslurm"));
  EXPECT_THAT(completion.out, HasSubstr("_skyslurm_sbatch sbatch"));
  // With bash-completion, as a login shell loads it: --sky-* options are
  // ours, every other option still completes through Slurm's own
  // completion (slurm-client's, loaded on demand), for each command.
  const char* complete_words = R"sh(
    source /usr/share/bash-completion/bash_completion && source "$1" || exit 1
    words() {
      COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
      local f; f=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
      "$f" "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null
      echo "$* => ${COMPREPLY[*]} ($f)"
    }
    words sbatch --sky-m; words sbatch --parti; words srun --ntasks-per-n; words salloc --sky-a
    words sbatch --sky-any-cluster =; words sbatch --sky-any-cluster = alpha,g; words srun --sky-infra = b
    complete -p sbatch srun)sh";
  // Bash gives "--sky-any-cluster=b" as three words (COMP_WORDBREAKS has "=");
  // the clusters are the ready user's ~/.slurm/config hosts.
  CommandOutput delegated = Exec({.argv = {"bash", "-c", complete_words, "bash", etc + "/bash_completion.d/skyslurm"},
                                  .env_set = {{"HOME", tb_.Path("home")}}});
  EXPECT_EQ(delegated.out,
            "sbatch --sky-m => --sky-managed (_skyslurm_sbatch)\n"
            "sbatch --parti => --partition= (_skyslurm_sbatch)\n"
            "srun --ntasks-per-n => --ntasks-per-node= (_skyslurm_srun)\n"
            "salloc --sky-a => --sky-any-cluster (_skyslurm_salloc)\n"
            // Not epsilon-gw: epsilon's bastion.
            "sbatch --sky-any-cluster = => alpha beta gamma delta epsilon (_skyslurm_sbatch)\n"
            "sbatch --sky-any-cluster = alpha,g => alpha,gamma (_skyslurm_sbatch)\n"
            "srun --sky-infra = b => beta (_skyslurm_srun)\n"
            // Slurm's own completion options stay (sbatch completes file names).
            "complete -o filenames -F _skyslurm_sbatch sbatch\n"
            "complete -F _skyslurm_srun srun\n")
      << delegated.err;
}

// As the issue spells it: source $SKYSLURM_TESTBED_DIR/env;
// HOME=$SKYSLURM_TESTBED_DIR/home PATH=<prefix>/libexec/skyslurm/bin:$PATH
// sbatch --sky-any-cluster job.sh
TEST_F(InstallTest, TheReadyUserTypesSbatchWithTheInstalledShimFirst) {
  WriteFile(tmp_.File("job.sh"), "#!/bin/bash\n#SBATCH -t 5\n#SBATCH -o /dev/null\ntrue\n");
  Command c;
  c.argv = {"/bin/bash", "-c",
            "source \"$1/env\" && HOME=\"$1/home\" PATH=\"$2:$PATH\" sbatch --sky-any-cluster job.sh",
            "bash", tb_.dir, At("libexec/skyslurm/bin")};
  c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                 "SKYSLURM_ROUTER", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "SLURM_CONF"};
  c.cwd = tmp_.path();
  c.timeout = std::chrono::seconds(120);
  CommandOutput out = Exec(c);
  // The routed sbatch started the ready user's skyslurmd, from the install.
  const int daemon = UserDaemonPid(tb_.Path("home"));
  EXPECT_NE(daemon, 0);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/" + std::to_string(daemon) + "/exe").string(),
            At("sbin/skyslurmd"));
  StopUserDaemon(tb_.Path("home"));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto [cluster, id] = RoutedTo(out);
  ASSERT_FALSE(cluster.empty()) << out.out;
  EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
  // Without a sky option the installed shim is simply the real sbatch.
  EXPECT_EQ(Exec({.argv = {At("libexec/skyslurm/bin/sbatch"), "--version"},
                  .env_set = {{"SLURM_CONF", tb_.SlurmConf("alpha")}}})
                .out,
            RunOn(tb_, "alpha", {"sbatch", "--version"}).out);
}

}  // namespace
}  // namespace skyslurm::testing
