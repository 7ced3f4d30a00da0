// The packages that scripts/package.sh builds (build-pkg/, or
// $SKYSLURM_PACKAGE_DIR), as an admin meets them (docs/packaging.md):
//  - the .deb is installed on this machine with dpkg -i; then, using only the
//    installed files, the plugin is enabled on the testbed's clusters through
//    the packaged plugstack snippet, the site turns routing on in the
//    packaged configuration, and the main job (`sbatch --sky-any-cluster`
//    from a login shell, through the /etc/profile.d hook) lands on a peer;
//    dpkg -r keeps the conffiles (with the admin's edits) and removes the
//    rest, without breaking Slurm; dpkg --purge leaves nothing behind;
//  - the .rpm (not installable on Debian) is checked with rpm -qlp / -qRp.
// Label `package`: run by scripts/test.sh after scripts/package.sh. The .deb
// test installs and purges packages on this machine, so it runs only with
// SKYSLURM_PACKAGE_TEST=1 (and purges a skyslurm installed before it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

constexpr char kPlugin[] = "/usr/lib/skyslurm/skyslurm.so";
constexpr char kSnippet[] = "/etc/slurm/plugstack.conf.d/skyslurm.conf";
constexpr char kSiteConfig[] = "/etc/skyslurm/skyslurm.yaml";
constexpr char kShimDir[] = "/usr/libexec/skyslurm/bin";
constexpr char kRunas[] = "/usr/libexec/skyslurm/skyslurmd-runas";

std::string PackageDir() {
  const char* dir = std::getenv("SKYSLURM_PACKAGE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : SKYSLURM_DEFAULT_PACKAGE_DIR;
}

// The one file in `dir` whose name matches `pattern`; fails the test
// (saying how to build the packages) when there is not exactly one.
std::string OnePackage(const std::string& dir, const std::string& pattern) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (std::regex_match(entry.path().filename().string(), std::regex(pattern))) {
      found.push_back(entry.path().string());
    }
  }
  EXPECT_EQ(found.size(), 1u) << "no single " << pattern << " in " << dir
                              << ": build the packages first (scripts/package.sh)";
  return found.size() == 1 ? found[0] : std::string();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// The Slurm release as `sbatch --version` spells it ("slurm-wlm 22.05.8").
std::string SlurmRelease(const Testbed& tb) {
  std::smatch m;
  const std::string version = RunOn(tb, "alpha", {"sbatch", "--version"}).out;
  EXPECT_TRUE(std::regex_search(version, m, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << version;
  return m.size() > 0 ? m[0].str() : "";
}

// Debian's hardening (hardening=+all), as the ELF file shows it: position
// independent, full RELRO with immediate binding, stack protector and
// _FORTIFY_SOURCE's checked functions.
void ExpectHardened(const std::string& file) {
  const std::string header = Exec({.argv = {"readelf", "-h", "-l", "-d", "-W", file}}).out;
  EXPECT_THAT(header, HasSubstr("Type:                              DYN")) << file;
  EXPECT_THAT(header, HasSubstr("GNU_RELRO")) << file;
  EXPECT_THAT(header, HasSubstr("BIND_NOW")) << file;
  const std::string symbols = Exec({.argv = {"readelf", "--dyn-syms", "-W", file}}).out;
  EXPECT_THAT(symbols, HasSubstr("__stack_chk_fail")) << file;
  EXPECT_THAT(symbols, ::testing::ContainsRegex("__[a-z]+_chk@")) << file;
}

// The plugin exports only the SPANK entry points and plugin_* symbols.
void ExpectOnlySpankSymbols(const std::string& plugin) {
  CommandOutput nm = Exec({.argv = {"nm", "-D", "--defined-only", plugin}});
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  std::vector<std::string> names;
  for (const std::string& line : Lines(nm.out)) names.push_back(line.substr(line.rfind(' ') + 1));
  EXPECT_THAT(names, ::testing::IsSupersetOf({"plugin_name", "plugin_version", "slurm_spank_init",
                                              "slurm_spank_task_init"}));
  for (const std::string& name : names) {
    EXPECT_TRUE(name.starts_with("slurm_spank_") || name.starts_with("plugin_")) << name;
  }
}

// "ii " installed, "rc " removed with its conffiles kept, "" unknown to dpkg.
std::string DpkgStatus(const std::string& package) {
  CommandOutput out = Exec({.argv = {"dpkg-query", "-W", "-f=${db:Status-Abbrev}", package}});
  return out.exit_code == 0 ? out.out : "";
}

void PurgeIfPresent() {
  if (DpkgStatus("skyslurm-spank").empty() && DpkgStatus("skyslurm").empty()) return;
  CommandOutput purge = Exec({.argv = {"dpkg", "--purge", "skyslurm-spank", "skyslurm"}});
  ASSERT_EQ(purge.exit_code, 0) << purge.out << purge.err;
}

// Everything named *skyslurm* in the system's folders.
std::set<std::string> SystemPathsNamedSkyslurm() {
  CommandOutput find = Exec({.argv = {"find", "/etc", "/usr", "/var", "/opt", "-xdev", "-name", "*skyslurm*"}});
  std::vector<std::string> lines = Lines(find.out);
  return {lines.begin(), lines.end()};
}

// The slurmstepds now running, by PID: their command line and the
// skyslurm.so files they have loaded.
struct StepDaemon {
  std::string cmdline;     // "slurmstepd: [<job>.batch]"
  std::string slurm_conf;  // its cluster's: inherited from the testbed's slurmd
  std::set<std::string> plugins;
};
std::map<int, StepDaemon> StepDaemons() {
  std::map<int, StepDaemon> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name != "slurmstepd") continue;
    StepDaemon stepd;
    std::ifstream cmdline(entry.path() / "cmdline");
    std::getline(cmdline, stepd.cmdline);
    std::ifstream environ(entry.path() / "environ");
    for (std::string var; std::getline(environ, var, '\0');) {
      if (var.starts_with("SLURM_CONF=")) stepd.slurm_conf = var.substr(11);
    }
    std::ifstream maps(entry.path() / "maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.ends_with("skyslurm.so")) stepd.plugins.insert(line.substr(line.find('/')));
    }
    found[std::stoi(pid)] = stepd;
  }
  return found;
}

// Replaces the one line `from` of an admin-owned file by `to`.
void EditLine(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = ReadFile(path);
  const std::size_t at = text.find("\n" + from + "\n");
  ASSERT_NE(at, std::string::npos) << path << " has no line '" << from << "':\n" << text;
  text.replace(at + 1, from.size(), to);
  WriteFile(path, text);
}

class DebPackageTest : public TestbedTest {
 protected:
  void SetUp() override {
    const char* opted_in = std::getenv("SKYSLURM_PACKAGE_TEST");
    if (opted_in == nullptr || std::string_view(opted_in) != "1") {
      GTEST_SKIP() << "installs, then purges, skyslurm's .deb on this machine: set SKYSLURM_PACKAGE_TEST=1 "
                      "(scripts/test.sh does)";
    }
    opted_in_ = true;
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    const std::string dir = PackageDir() + "/deb";
    main_deb_ = OnePackage(dir, "skyslurm_[^_]+_[a-z0-9]+\\.deb");
    spank_deb_ = OnePackage(dir, "skyslurm-spank_[^_]+_[a-z0-9]+\\.deb");
    if (HasFailure()) return;
    PurgeIfPresent();
    before_ = SystemPathsNamedSkyslurm();
    home_ = tmp_.File("home");
    CopyReadyHome(tb_, home_);
    for (const char* cluster : kClusters) {
      const std::string path = tb_.Path(std::string("clusters/") + cluster + "/etc/plugstack.conf");
      plugstacks_[path] = ReadFile(path);
    }
  }
  void TearDown() override {
    if (!opted_in_) return;  // skipped: touches nothing on this machine
    for (const auto& [cluster, id] : cleanup_) RunOn(tb_, cluster, {"scancel", id});
    // Ended before the next test wants alpha's GPUs, and before tmp_ goes.
    for (const auto& [cluster, id] : cleanup_) WaitForJobEnd(tb_, cluster, id, std::chrono::seconds(30));
    if (!home_.empty()) StopUserDaemon(home_);
    for (const auto& [path, text] : plugstacks_) WriteFile(path, text);
    PurgeIfPresent();
  }

  // A login shell of the testbed's ready user (a copy of its home): it reads
  // /etc/profile and so /etc/profile.d/skyslurm.sh, then the testbed's env.
  CommandOutput LoginShell(const std::string& script) {
    Command c;
    c.argv = {"bash", "-l", "-c", "source \"$SKYSLURM_TESTBED_DIR/env\" && " + script};
    c.env_set = {{"HOME", home_}, {"SKYSLURM_TESTBED_DIR", tb_.dir}};
    c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE", "SKYSLURM_ROUTER",
                   "SKYSLURMD", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "SLURM_CONF", "BASH_ENV"};
    c.cwd = tmp_.path();
    c.timeout = std::chrono::seconds(120);
    return Exec(c);
  }

  // "Submitted batch job N on cluster C" -> (C, N), cancelled at the end.
  std::pair<std::string, std::string> Submitted(const CommandOutput& out) {
    auto routed = RoutedTo(out);
    if (!routed.first.empty()) cleanup_.push_back(routed);
    return routed;
  }

  void FillAlpha() {
    for (const std::string& id : FillAlphaH100s(tb_)) cleanup_.emplace_back("alpha", id);
  }

  // The ready user's skyslurmd runs the packaged program; it is stopped.
  void ExpectPackagedDaemonAndStopIt() {
    const int pid = UserDaemonPid(home_);
    ASSERT_NE(pid, 0);
    EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pid) + "/exe").string(), "/usr/sbin/skyslurmd");
    StopUserDaemon(home_);
  }

  bool opted_in_ = false;
  TempDir tmp_;
  std::string main_deb_, spank_deb_, home_;
  std::set<std::string> before_;
  std::map<std::string, std::string> plugstacks_;
  std::vector<std::pair<std::string, std::string>> cleanup_;
};

TEST_F(DebPackageTest, InstallEnableRunTheMainJobRemoveAndPurge) {
  // dpkg -i, and what was installed.
  CommandOutput install = Exec({.argv = {"dpkg", "-i", main_deb_, spank_deb_}});
  ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
  EXPECT_EQ(DpkgStatus("skyslurm"), "ii ");
  EXPECT_EQ(DpkgStatus("skyslurm-spank"), "ii ");
  // The plugin's version names the Slurm release it was built against.
  const std::string version = Exec({.argv = {"dpkg-query", "-W", "-f=${Version}", "skyslurm"}}).out;
  EXPECT_EQ(Exec({.argv = {"dpkg-query", "-W", "-f=${Version}", "skyslurm-spank"}}).out,
            version + "+slurm" + SlurmRelease(tb_));
  for (const char* program : {"/usr/bin/skyslurm", "/usr/sbin/skyslurmd", "/usr/libexec/skyslurm/skyslurm-shim",
                              kPlugin}) {
    ExpectHardened(program);
  }
  ExpectOnlySpankSymbols(kPlugin);
  // The shim links the system's libc (its security updates reach it), and
  // nothing else: the C++ runtime is linked in (docs/packaging.md).
  const std::vector<std::string> needed = Lines(
      Exec({.argv = {"sh", "-c", "readelf -d \"$1\" | grep NEEDED", "sh", "/usr/libexec/skyslurm/skyslurm-shim"}})
          .out);
  EXPECT_THAT(needed, ::testing::Contains(HasSubstr("[libc.so.6]")));
  EXPECT_THAT(needed, ::testing::Each(::testing::AnyOf(HasSubstr("[libc.so.6]"), HasSubstr("[ld-linux"))));
  std::set<std::string> files;
  std::set<std::string> conffiles;
  for (const char* package : {"skyslurm", "skyslurm-spank"}) {
    for (const std::string& path : Lines(Exec({.argv = {"dpkg-query", "-L", package}}).out)) {
      if (path != "/.") files.insert(path);
    }
    for (const std::string& line : Lines(Exec({.argv = {"dpkg-query", "-W", "-f=${Conffiles}", package}}).out)) {
      conffiles.insert(line.substr(1, line.find(' ', 1) - 1));
    }
  }
  EXPECT_EQ(conffiles, (std::set<std::string>{kSnippet, kSiteConfig, "/etc/profile.d/skyslurm.sh",
                                              "/etc/bash_completion.d/skyslurm"}));
  // The site daemon: its user, its set-uid step run by that group only, its
  // unit installed and not enabled (docs/site.md).
  EXPECT_EQ(Exec({.argv = {"getent", "passwd", "skyslurm"}}).exit_code, 0);
  EXPECT_EQ(Exec({.argv = {"stat", "-c", "%a %U %G", kRunas}}).out, "4750 root skyslurm\n");
  ExpectHardened(kRunas);
  EXPECT_TRUE(files.contains("/usr/lib/systemd/system/skyslurmd-site.service"));
  EXPECT_TRUE(files.contains("/usr/share/skyslurm/site.yaml"));
  EXPECT_FALSE(fs::exists("/etc/systemd/system/multi-user.target.wants/skyslurmd-site.service"));

  // Until the site turns routing on, a login shell's sbatch is Slurm's.
  EXPECT_EQ(LoginShell("command -v sbatch").out, "/usr/bin/sbatch\n");

  // The admin opts in, on every cluster: the packaged snippet's line without
  // its '#', plugstack.conf including the snippets' folder, routing on.
  EditLine(kSnippet, std::string("#optional ") + kPlugin, std::string("optional ") + kPlugin);
  for (const auto& [path, text] : plugstacks_) WriteFile(path, "include /etc/slurm/plugstack.conf.d/*.conf\n");
  EditLine(kSiteConfig, "#routing: on", "routing: on");
  ASSERT_EQ(LoginShell("command -v sbatch").out, std::string(kShimDir) + "/sbatch\n");

  // The main job: alpha is full, a 2-node H100 job written for alpha lands
  // on beta, translated, with SKYPILOT_* from the packaged plugin's stepd.
  FillAlpha();
  const std::string release = tmp_.File("release");
  WriteFile(tmp_.File("train.sh"),
            "#!/bin/bash\n"
            "#SBATCH --job-name=train\n"
            "#SBATCH -p gpu\n"
            "#SBATCH -N 2\n"
            "#SBATCH --gres=gpu:h100:2\n"
            "#SBATCH -t 10\n"
            "#SBATCH -o " + tmp_.File("train-%j.out") + "\n"
            "module load cuda/12.1 || exit 3\n"
            "echo \"cluster=$SLURM_CLUSTER_NAME partition=$SLURM_JOB_PARTITION cuda=$CUDA_VERSION\"\n"
            "srun -l bash -c 'echo \"rank=$SKYPILOT_NODE_RANK nodes=$SKYPILOT_NUM_NODES "
            "gpus=$SKYPILOT_NUM_GPUS_PER_NODE\"' | sort\n"
            "echo running\n"
            "for _ in $(seq 600); do [ -e " + release + " ] && break; sleep 0.1; done\n");
  auto [cluster, id] = Submitted(LoginShell("sbatch --sky-any-cluster train.sh"));
  ASSERT_EQ(cluster, "beta");
  const std::string output = tmp_.File("train-" + id + ".out");
  for (int i = 0; i < 600 && ReadFile(output).find("running\n") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Every slurmstepd now running that loaded a skyslurm.so loaded the
  // packaged one, among them the main job's.
  bool saw_main_job = false;
  for (const auto& [pid, stepd] : StepDaemons()) {
    if (stepd.plugins.empty()) continue;
    EXPECT_EQ(stepd.plugins, std::set<std::string>{kPlugin}) << pid << " " << stepd.cmdline;
    saw_main_job |= stepd.cmdline.find("[" + id + ".batch]") != std::string::npos &&
                    stepd.slurm_conf == tb_.SlurmConf(cluster);
  }
  EXPECT_TRUE(saw_main_job) << "no slurmstepd of job " << id << " has " << kPlugin << " loaded";
  WriteFile(release, "");
  EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
  EXPECT_THAT(ReadFile(output), MatchesRegex("cluster=beta partition=h100-cluster cuda=12\\.[0-9]+\n"
                                             "0: rank=0 nodes=2 gpus=2\n"
                                             "1: rank=1 nodes=2 gpus=2\n"
                                             "running\n"));
  ExpectPackagedDaemonAndStopIt();

  // Slurm's own sbatch, not the shim: the packaged plugin hands the job to
  // the packaged shim.
  WriteFile(tmp_.File("small.sh"), "#!/bin/bash\n#SBATCH -t 5\necho \"nodes=$SKYPILOT_NUM_NODES\"\n");
  Command real;
  real.argv = {"/usr/bin/sbatch", "--sky-any-cluster=beta", "-o", tmp_.File("small-%j.out"), "small.sh"};
  real.env_set = {{"HOME", home_}, {"SLURM_CONF", tb_.SlurmConf("alpha")}, {"PATH", "/usr/bin:/bin"}};
  real.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_ROUTER", "SKYSLURMD"};
  real.cwd = tmp_.path();
  real.timeout = std::chrono::seconds(120);
  auto [small_cluster, small_id] = Submitted(Exec(real));
  ASSERT_EQ(small_cluster, "beta");
  EXPECT_EQ(WaitForJobEnd(tb_, small_cluster, small_id), "COMPLETED");
  EXPECT_EQ(ReadFileWhenReady(tmp_.File("small-" + small_id + ".out")), "nodes=1\n");
  ExpectPackagedDaemonAndStopIt();

  // dpkg -r: the conffiles stay, with the admin's edits; nothing else does.
  CommandOutput remove = Exec({.argv = {"dpkg", "-r", "skyslurm-spank", "skyslurm"}});
  ASSERT_EQ(remove.exit_code, 0) << remove.out << remove.err;
  EXPECT_EQ(DpkgStatus("skyslurm"), "rc ");
  EXPECT_EQ(DpkgStatus("skyslurm-spank"), "rc ");
  for (const std::string& path : files) {
    if (conffiles.contains(path)) {
      EXPECT_TRUE(fs::exists(path)) << path;
    } else if (!fs::is_directory(path)) {
      EXPECT_FALSE(fs::exists(fs::symlink_status(path))) << path;
    }
  }
  EXPECT_THAT(ReadFile(kSiteConfig), HasSubstr("\nrouting: on\n"));
  EXPECT_THAT(ReadFile(kSnippet), HasSubstr(std::string("\noptional ") + kPlugin + "\n"));
  // Slurm keeps working with the snippet naming a plugin that is gone
  // ("optional"), and a login shell's sbatch is Slurm's again.
  const std::string after = Submit(tb_, "alpha", {"-t", "1", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_FALSE(after.empty());
  cleanup_.emplace_back("alpha", after);
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", after), "COMPLETED");
  EXPECT_EQ(LoginShell("command -v sbatch").out, "/usr/bin/sbatch\n");

  // dpkg --purge: the conffiles go too, and nothing is left behind.
  CommandOutput purge = Exec({.argv = {"dpkg", "--purge", "skyslurm-spank", "skyslurm"}});
  ASSERT_EQ(purge.exit_code, 0) << purge.out << purge.err;
  EXPECT_EQ(DpkgStatus("skyslurm"), "");
  EXPECT_EQ(DpkgStatus("skyslurm-spank"), "");
  for (const std::string& path : files) {
    if (!fs::exists(fs::symlink_status(path))) continue;
    // Only shared folders may stay: another package's, or holding others' files.
    EXPECT_TRUE(fs::is_directory(path)) << path;
    EXPECT_TRUE(Exec({.argv = {"dpkg-query", "-S", path}}).exit_code == 0 || !fs::is_empty(path)) << path;
  }
  EXPECT_EQ(SystemPathsNamedSkyslurm(), before_);
  EXPECT_NE(Exec({.argv = {"dpkg-statoverride", "--list", kRunas}}).exit_code, 0);
}

// The RPMs cannot be installed on Debian; their contents, conffiles,
// requirements and binaries are checked from the files.
class RpmPackageTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    const std::string dir = PackageDir() + "/rpm";
    main_rpm_ = OnePackage(dir, "skyslurm-[0-9][^-]*-[^-]+\\.[a-z0-9_]+\\.rpm");
    spank_rpm_ = OnePackage(dir, "skyslurm-spank-[^-]+-[^-]+\\.[a-z0-9_]+\\.rpm");
  }
  std::vector<std::string> Query(const std::string& rpm, std::vector<std::string> args) {
    Command c{.argv = {"rpm", "-qp"}};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.argv.push_back(rpm);
    CommandOutput out = Exec(c);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return Lines(out.out);
  }
  // The files a .deb and an .rpm of the same package must both hold.
  static std::set<std::string> ProductFiles(const std::vector<std::string>& paths) {
    std::set<std::string> files;
    for (std::string path : paths) {
      if (path.starts_with("./")) path.erase(0, 1);
      if (path.ends_with("/")) path.pop_back();
      if (path.starts_with("/usr/share/doc") || path.starts_with("/usr/share/licenses") ||
          path.starts_with("/usr/share/lintian") || path.starts_with("/usr/lib/.build-id")) {
        continue;
      }
      files.insert(path);
    }
    return files;
  }
  std::set<std::string> DebFiles(const std::string& pattern) {
    const std::string deb = OnePackage(PackageDir() + "/deb", pattern);
    std::vector<std::string> paths;
    for (const std::string& line : Lines(Exec({.argv = {"dpkg-deb", "-c", deb}}).out)) {
      if (line.starts_with("d")) continue;  // folders: dpkg and rpm own them differently
      std::string path = line.substr(line.find(" ./") + 1);
      if (const std::size_t arrow = path.find(" -> "); arrow != std::string::npos) path.resize(arrow);
      paths.push_back(path);
    }
    return ProductFiles(paths);
  }
  std::set<std::string> RpmFiles(const std::string& rpm) {
    std::vector<std::string> paths;
    for (const std::string& line : Query(rpm, {"--qf", "[%{FILEMODES:perms} %{FILENAMES}\n]"})) {
      if (!line.starts_with("d")) paths.push_back(line.substr(line.find(' ') + 1));
    }
    return ProductFiles(paths);
  }

  std::string main_rpm_, spank_rpm_;
};

TEST_F(RpmPackageTest, ContentsConffilesAndRequirementsAreThePromisedOnes) {
  ASSERT_FALSE(HasFailure());
  const std::string version = Query(main_rpm_, {"--qf", "%{VERSION}"}).at(0);
  const std::string slurm_release = SlurmRelease(tb_);
  EXPECT_EQ(Query(spank_rpm_, {"--qf", "%{VERSION}"}).at(0), version + "+slurm" + slurm_release);

  // rpm -qlp: the same files as the .deb, package by package (man pages
  // compressed by each distribution's rules).
  const std::vector<std::string> main_list = Query(main_rpm_, {"-l"});
  for (const char* path :
       {"/usr/bin/skyslurm", "/usr/sbin/skyslurmd", "/usr/libexec/skyslurm/skyslurm-shim",
        "/usr/libexec/skyslurm/bin/sbatch", "/usr/libexec/skyslurm/bin/salloc",
        "/usr/libexec/skyslurm/bin/srun", "/usr/libexec/skyslurm/bin/squeue",
        "/usr/libexec/skyslurm/bin/sacct", "/usr/libexec/skyslurm/bin/scontrol",
        "/usr/libexec/skyslurm/bin/scancel", "/usr/lib/systemd/user/skyslurmd.service",
        "/usr/share/man/man1/skyslurm.1.gz", "/usr/share/man/man8/skyslurmd.8.gz",
        "/usr/share/man/man5/skyslurm.yaml.5.gz", "/usr/lib/systemd/system/skyslurmd-site.service",
        "/usr/share/skyslurm/site.yaml", kRunas}) {
    EXPECT_THAT(main_list, ::testing::Contains(path));
  }
  // The site daemon's step: set-uid root, run by its group only, which the
  // package makes before installing it.
  EXPECT_THAT(
      Query(main_rpm_,
            {"--qf", "[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILENAMES}\n]"}),
      ::testing::Contains(std::string("-rwsr-x--- root skyslurm ") + kRunas));
  EXPECT_THAT(Query(main_rpm_, {"--qf", "%{PREIN}"}),
              ::testing::Contains(HasSubstr("useradd -r -g skyslurm")));
  EXPECT_THAT(Query(spank_rpm_, {"-l"}),
              ::testing::IsSupersetOf({kPlugin, kSnippet, "/usr/share/man/man8/skyslurm_spank.8.gz"}));
  EXPECT_EQ(RpmFiles(main_rpm_), DebFiles("skyslurm_[^_]+_[a-z0-9]+\\.deb"));
  EXPECT_EQ(RpmFiles(spank_rpm_), DebFiles("skyslurm-spank_[^_]+_[a-z0-9]+\\.deb"));
  const std::vector<std::string> links = Query(main_rpm_, {"--qf", "[%{FILENAMES} -> %{FILELINKTOS}\n]"});
  for (const char* shim : {"sbatch", "salloc", "srun"}) {
    EXPECT_THAT(links, ::testing::Contains(std::string(kShimDir) + "/" + shim + " -> ../skyslurm-shim"));
  }

  // Conffiles an upgrade never overwrites: %config(noreplace).
  std::vector<std::string> config;
  for (const std::string& line : Query(main_rpm_, {"--qf", "[%{FILEFLAGS:fflags} %{FILENAMES}\n]"})) {
    if (line.starts_with("cn ")) config.push_back(line.substr(3));
  }
  EXPECT_THAT(config, ::testing::UnorderedElementsAre(kSiteConfig, "/etc/profile.d/skyslurm.sh",
                                                      "/etc/bash_completion.d/skyslurm"));
  EXPECT_THAT(Query(spank_rpm_, {"--qf", "[%{FILEFLAGS:fflags} %{FILENAMES}\n]"}),
              ::testing::Contains(std::string("cn ") + kSnippet));

  // rpm -qRp: the plugin requires exactly the Slurm release (any build of
  // it) and recommends the skyslurm of its own build (a compute node needs
  // the plugin alone); the programs require their libraries.
  const std::vector<std::string> spank_requires = Query(spank_rpm_, {"-R"});
  EXPECT_THAT(spank_requires, ::testing::Contains("slurm = " + slurm_release));
  EXPECT_THAT(spank_requires, Not(::testing::Contains(MatchesRegex("skyslurm(\\([a-z0-9_-]+\\))?( .*)?"))));
  const std::string release = Query(main_rpm_, {"--qf", "%{RELEASE}"}).at(0);
  EXPECT_THAT(Query(spank_rpm_, {"--recommends"}),
              ::testing::Contains(MatchesRegex("skyslurm\\([a-z0-9_-]+\\) = " + version + "-" + release)));
  EXPECT_THAT(spank_requires, Not(::testing::Contains(HasSubstr("libslurm"))));
  const std::vector<std::string> main_requires = Query(main_rpm_, {"-R"});
  EXPECT_THAT(main_requires, ::testing::Contains("slurm"));
  EXPECT_THAT(main_requires, ::testing::Contains("libssh.so.4()(64bit)"));
  EXPECT_THAT(main_requires, ::testing::Contains("libyaml-cpp.so.0.7()(64bit)"));
  EXPECT_THAT(main_requires, ::testing::Contains("libsqlite3.so.0()(64bit)"));
  EXPECT_THAT(main_requires, ::testing::Contains("libpq.so.5()(64bit)"));

  // The binaries inside: hardened, the plugin exporting SPANK symbols only.
  TempDir root;
  for (const std::string& rpm : {main_rpm_, spank_rpm_}) {
    CommandOutput unpack = Exec({.argv = {"sh", "-c", "rpm2cpio \"$1\" | cpio -idm --quiet", "sh", rpm},
                                 .cwd = root.path()});
    ASSERT_EQ(unpack.exit_code, 0) << unpack.err;
  }
  for (const char* program : {"/usr/bin/skyslurm", "/usr/sbin/skyslurmd", "/usr/libexec/skyslurm/skyslurm-shim",
                              kPlugin}) {
    ExpectHardened(root.path() + program);
  }
  ExpectOnlySpankSymbols(root.path() + kPlugin);
}

}  // namespace
}  // namespace skyslurm::testing
