// Who is asking a site's skyslurmd, against the testbed's real munged: a
// credential names its maker's uid and gid, binds the request it was made
// for, is good once, for its time to live, and only for the user it was
// made for.
#include "broker/site/munge_identity.h"

#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using site::MakeMungeCredential;
using site::MungeOptions;
using site::VerifyMungeCredential;
using ::testing::HasSubstr;

class MungeIdentityTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    options_.socket = tb_.Path("munge/munge.socket");
  }
  // `body` run in a child as `user`; its exit status (0: every check held).
  static int AsUser(const char* user, const std::function<bool()>& body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const passwd* pw = ::getpwnam(user);
      if (pw == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(pw->pw_gid) != 0 ||
          ::setuid(pw->pw_uid) != 0) {
        ::_exit(2);
      }
      ::_exit(body() ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  }
  MungeOptions options_;
};

// The uid and gid come from the credential: a user's request is theirs.
TEST_F(MungeIdentityTest, ACredentialNamesItsMakerAndIsGoodOnce) {
  const passwd* pw = ::getpwnam("skyuser1");
  ASSERT_NE(pw, nullptr);
  std::string credential;
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  const int made = AsUser("skyuser1", [&] {
    auto c = MakeMungeCredential(R"({"op":"submit"})", std::nullopt, options_);
    if (!c.ok()) return false;
    return ::write(pipefd[1], c->data(), c->size()) == static_cast<ssize_t>(c->size());
  });
  ::close(pipefd[1]);
  ASSERT_EQ(made, 0);
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;)
    credential.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  ASSERT_THAT(credential, HasSubstr("MUNGE:"));
  auto who = VerifyMungeCredential(credential, R"({"op":"submit"})", options_);
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->uid, pw->pw_uid);
  EXPECT_EQ(who->gid, pw->pw_gid);
  // The same credential again: a replay.
  auto again = VerifyMungeCredential(credential, R"({"op":"submit"})", options_);
  EXPECT_EQ(again.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(again.status().message(), HasSubstr("eplayed"));
}

// A credential made for one request does not carry another.
TEST_F(MungeIdentityTest, ACredentialOfAnotherRequestIsRefused) {
  auto c = MakeMungeCredential(R"({"op":"queue"})", std::nullopt, options_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto who = VerifyMungeCredential(*c, R"({"op":"cancel","id":"sky-1"})", options_);
  EXPECT_EQ(who.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(who.status().message(), HasSubstr("made for another request"));
}

// Restricted to one user (the site daemon's), no other user can decode it.
TEST_F(MungeIdentityTest, ACredentialForTheSiteUserIsNoOneElses) {
  const passwd* site_user = ::getpwnam("skyuser1");
  ASSERT_NE(site_user, nullptr);
  auto c = MakeMungeCredential("{}", site_user->pw_uid, options_);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string credential = *c;
  EXPECT_EQ(AsUser("skyuser2",
                   [&] {
                     auto who = VerifyMungeCredential(credential, "{}", options_);
                     return who.status().code() == StatusCode::kPermissionDenied;
                   }),
            0);
  EXPECT_EQ(
      AsUser("skyuser1", [&] { return VerifyMungeCredential(credential, "{}", options_).ok(); }),
      0);
}

TEST_F(MungeIdentityTest, AnExpiredOrForgedCredentialIsRefused) {
  MungeOptions short_lived = options_;
  short_lived.ttl_seconds = 1;
  auto c = MakeMungeCredential("{}", std::nullopt, short_lived);
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto late = VerifyMungeCredential(*c, "{}", options_);
  EXPECT_EQ(late.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(late.status().message(), HasSubstr("xpired"));
  auto forged = VerifyMungeCredential("MUNGE:AwQDAACkkoz2:", "{}", options_);
  EXPECT_EQ(forged.status().code(), StatusCode::kPermissionDenied);
}

// No munged there: the request can be tried again, nothing is refused.
TEST_F(MungeIdentityTest, WithoutMungedItIsUnavailable) {
  MungeOptions nowhere;
  nowhere.socket = tb_.Path("munge/no-such.socket");
  EXPECT_EQ(MakeMungeCredential("{}", std::nullopt, nowhere).status().code(),
            StatusCode::kUnavailable);
  auto c = MakeMungeCredential("{}", std::nullopt, options_);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(VerifyMungeCredential(*c, "{}", nowhere).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace skyslurm::testing
