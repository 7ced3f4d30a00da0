#include "broker/daemon/dashboard/dashboard_auth.h"

#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

TEST(DashboardAuthTest, ALoginTokenOpensOneSessionOnce) {
  DashboardAuth auth;
  const std::string token = auth.NewLoginToken();
  EXPECT_EQ(token.size(), 32u);
  auto session = auth.Login(token);
  ASSERT_TRUE(session.has_value());
  EXPECT_TRUE(auth.ValidSession(*session));
  EXPECT_FALSE(auth.Login(token).has_value()) << "a token is good once";
  EXPECT_FALSE(auth.Login("").has_value());
  EXPECT_FALSE(auth.ValidSession(""));
  EXPECT_FALSE(auth.ValidSession(token));
}

TEST(DashboardAuthTest, ActionsNeedTheSessionsOwnCsrfToken) {
  DashboardAuth auth;
  const std::string a = *auth.Login(auth.NewLoginToken());
  const std::string b = *auth.Login(auth.NewLoginToken());
  EXPECT_NE(a, b);
  EXPECT_TRUE(auth.ValidCsrf(a, auth.CsrfOf(a)));
  EXPECT_FALSE(auth.ValidCsrf(a, auth.CsrfOf(b)));
  EXPECT_FALSE(auth.ValidCsrf(a, ""));
  EXPECT_EQ(auth.CsrfOf("not a session"), "");
  auth.Clear();
  EXPECT_FALSE(auth.ValidSession(a));
}

TEST(DashboardAuthTest, AnUnusedTokenExpires) {
  std::time_t now = 1000;
  DashboardAuth auth(
      {}, [&] { return now; }, std::chrono::seconds(60));
  const std::string token = auth.NewLoginToken();
  now += 61;
  EXPECT_FALSE(auth.Login(token).has_value());
}

TEST(DashboardAuthTest, TheSessionIsReadFromAnyPlaceInTheCookieHeader) {
  EXPECT_EQ(DashboardAuth::SessionFromCookie("skyslurm_session=abc"), "abc");
  EXPECT_EQ(DashboardAuth::SessionFromCookie("a=1; skyslurm_session=abc; b=2"), "abc");
  EXPECT_EQ(DashboardAuth::SessionFromCookie("xskyslurm_session=abc"), "");
  EXPECT_EQ(DashboardAuth::SessionFromCookie(""), "");
}

}  // namespace
}  // namespace skyslurm::daemon
