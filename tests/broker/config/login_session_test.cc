#include "broker/config/login_session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace skyslurm::config {
namespace {

using ::testing::ElementsAre;

TEST(LoginSessionTest, LivesUnderTheRunFolderPerCluster) {
  const LoginSession s =
      SessionFor("/run/user/1001/skyslurm", "epsilon", "epsilon-gw", "/home/u/.slurm/config", true);
  EXPECT_EQ(s.socket, "/run/user/1001/skyslurm/sessions/epsilon.sock");
  EXPECT_EQ(s.until_file, "/run/user/1001/skyslurm/sessions/epsilon.sock.until");
  EXPECT_EQ(s.clusters_file, "/home/u/.slurm/config");
  // A bastion given as user@host:port is ssh's to read, not the file's.
  EXPECT_EQ(SessionFor("/r", "e", "me@gw:2222", "/f", false).clusters_file, "");
  EXPECT_EQ(NeedsLoginReason("epsilon"),
            "epsilon needs a one-time code: run skyslurm login epsilon");
}

TEST(LoginSessionTest, SshNeverPromptsAndGoesThroughTheMasterWhenItHolds) {
  const LoginSession s = SessionFor("/r", "epsilon", "epsilon-gw", "/f", true);
  EXPECT_THAT(JumpArgv(s, false), ElementsAre("ssh", "-F", "/f", "-o", "BatchMode=yes", "-o",
                                              "LogLevel=ERROR", "-W", "[%h]:%p", "epsilon-gw"));
  EXPECT_THAT(JumpArgv(s, true),
              ElementsAre("ssh", "-F", "/f", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-S",
                          "/r/sessions/epsilon.sock", "-o", "ControlMaster=no", "-W", "[%h]:%p",
                          "epsilon-gw"));
  EXPECT_EQ(JumpCommandLine(s, false),
            "ssh -F /f -o BatchMode=yes -o LogLevel=ERROR -W '[%h]:%p' epsilon-gw");
  EXPECT_THAT(OpenMasterArgv(s, std::chrono::hours(12)),
              ElementsAre("ssh", "-F", "/f", "-M", "-S", "/r/sessions/epsilon.sock", "-o",
                          "ControlPersist=43200s", "-o", "ServerAliveInterval=60", "-o",
                          "LogLevel=ERROR", "-f", "-N", "epsilon-gw"));
  EXPECT_THAT(CloseMasterArgv(s), ElementsAre("ssh", "-F", "/f", "-S", "/r/sessions/epsilon.sock",
                                              "-o", "LogLevel=ERROR", "-O", "exit", "epsilon-gw"));
}

TEST(LoginSessionTest, UntilIsWholeSecondsOrNothing) {
  EXPECT_FALSE(ParseSessionUntil("99999999999999"));  // no overflow: no time a login wrote
  EXPECT_EQ(ParseSessionUntil("1796700000\n")->time_since_epoch(),
            std::chrono::seconds(1796700000));
  EXPECT_FALSE(ParseSessionUntil(""));
  EXPECT_FALSE(ParseSessionUntil("soon"));
  EXPECT_FALSE(ParseSessionUntil("-5"));
  EXPECT_FALSE(ParseSessionUntil("12x"));
}

// A session holds while its time lasts and a master answers on its socket:
// a socket with nobody listening (a master that died) or a lapsed time is
// no session, and a cluster asking for a code is then refused at once.
TEST(LoginSessionTest, HoldsOnlyWithALiveMasterAndTimeLeft) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sky-session-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sessions");
  std::filesystem::permissions(dir / "sessions", std::filesystem::perms::owner_all);
  const LoginSession s = SessionFor(dir.string(), "eps", "gw", "", false);
  const auto now = std::chrono::system_clock::now();
  EXPECT_FALSE(SessionUntil(s, now));  // nothing there
  EXPECT_EQ(SessionProxyCommand(s, true).status().message(),
            "eps needs a one-time code: run skyslurm login eps");
  EXPECT_EQ(*SessionProxyCommand(s, false),
            "ssh -o BatchMode=yes -o LogLevel=ERROR -W '[%h]:%p' gw");  // a key-only bastion

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, s.socket.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  // A master being opened (no lapse time yet) is no session, and not lapsed.
  EXPECT_FALSE(SessionUntil(s, now));
  EXPECT_FALSE(SessionLapsed(s, now));
  const auto later = std::chrono::duration_cast<std::chrono::seconds>(
      (now + std::chrono::hours(1)).time_since_epoch());
  std::ofstream(s.until_file) << later.count() << "\n";
  ASSERT_TRUE(SessionUntil(s, now));
  EXPECT_EQ(SessionUntil(s, now)->time_since_epoch(), later);
  EXPECT_THAT(*SessionProxyCommand(s, true), ::testing::HasSubstr("-S " + s.socket));
  EXPECT_FALSE(SessionUntil(s, now + std::chrono::hours(2)));  // lapsed
  EXPECT_TRUE(SessionLapsed(s, now + std::chrono::hours(2)));
  EXPECT_FALSE(SessionLapsed(s, now));
  // A lapse time others could write is not trusted.
  std::filesystem::permissions(s.until_file, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  EXPECT_FALSE(SessionUntil(s, now));
  std::filesystem::permissions(s.until_file, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::remove);
  // Nor one behind a link.
  std::filesystem::rename(s.until_file, s.until_file + ".real");
  std::filesystem::create_symlink(s.until_file + ".real", s.until_file);
  EXPECT_FALSE(SessionUntil(s, now));
  std::filesystem::remove(s.until_file);
  std::filesystem::rename(s.until_file + ".real", s.until_file);
  ASSERT_TRUE(SessionUntil(s, now));
  // Nor anything in a folder others can enter.
  std::filesystem::permissions(dir / "sessions", std::filesystem::perms::group_exec,
                               std::filesystem::perm_options::add);
  EXPECT_FALSE(SessionUntil(s, now));
  std::filesystem::permissions(dir / "sessions", std::filesystem::perms::owner_all);
  ::close(fd);  // the master is gone; its file is left
  EXPECT_FALSE(SessionUntil(s, now));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace skyslurm::config
