// DaemonClient::EnsureRunning with programs standing in for skyslurmd: one
// that exits at once is reported at once, in its own words, where the
// client used to wait its whole 30 s and say only "did not start"; one that
// stays up without answering is still waited for.
#include "shim/cli/daemon_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "broker/config/environment.h"
#include "broker/config/settings.h"

namespace skyslurm::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class DaemonClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("daemon_client_test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    ::unsetenv("SKYSLURMD");
    fs::remove_all(dir_);
  }

  // A program standing in for skyslurmd.
  std::string Program(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }

  Status Start(const std::string& program, std::chrono::milliseconds wait) {
    ::setenv("SKYSLURMD", program.c_str(), 1);
    const config::Environment env(std::map<std::string, std::string>{
        {"HOME", dir_.string()},
        {"XDG_STATE_HOME", (dir_ / "state").string()},
        {"XDG_RUNTIME_DIR", (dir_ / "run").string()}});
    auto loaded = config::LoadConfig(env);
    if (!loaded.ok()) return loaded.status();
    DaemonClient client(env, *loaded);
    return client.EnsureRunning(wait);
  }

  fs::path dir_;
};

TEST_F(DaemonClientTest, ADaemonThatExitsAtOnceIsReportedAtOnceInItsOwnWords) {
  const std::string program =
      Program("skyslurmd", "#!/bin/sh\necho 'skyslurmd: error: skyslurm.yaml:3: not valid YAML' >&2\n"
                           "exit 1\n");
  Status st = Start(program, std::chrono::seconds(30));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_THAT(st.message(),
              HasSubstr("skyslurmd (" + program +
                        ") did not start: it exited: skyslurmd: error: skyslurm.yaml:3: not "
                        "valid YAML; see "));
  EXPECT_THAT(st.message(), Not(HasSubstr("within")));
}

TEST_F(DaemonClientTest, ADaemonThatExitsSilentlyIsSaidToHaveExitedWithoutAWord) {
  Status st = Start("/bin/false", std::chrono::seconds(30));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(),
              HasSubstr("skyslurmd (/bin/false) did not start: it exited without a word; see "));
}

TEST_F(DaemonClientTest, AProgramThatCannotBeRunIsReportedAtOnce) {
  const std::string missing = (dir_ / "no-such-skyslurmd").string();
  Status st = Start(missing, std::chrono::seconds(30));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("did not start: it exited: skyslurm: cannot run " + missing +
                                      ": No such file or directory"));
}

// One that keeps running without answering is waited for the whole time,
// and never taken for one that exited.
TEST_F(DaemonClientTest, ADaemonStillStartingIsWaitedFor) {
  const std::string pid_file = (dir_ / "pid").string();
  const std::string program =
      Program("skyslurmd", "#!/bin/sh\necho $$ > " + pid_file + "\nexec sleep 30\n");
  Status st = Start(program, std::chrono::seconds(2));
  std::ifstream in(pid_file);
  pid_t pid = 0;
  in >> pid;
  if (pid > 0) ::kill(pid, SIGKILL);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("skyslurmd (" + program + ") did not start within 2 s"));
  EXPECT_GT(pid, 0) << "the program never ran";
}

}  // namespace
}  // namespace skyslurm::cli
