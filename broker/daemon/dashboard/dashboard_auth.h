// Who may use the dashboard (docs/dashboard.md): `skyslurm dashboard` gets
// a one-time login token for its URL (as Jupyter prints one); the first
// request carrying it is given a session, kept in an HttpOnly, SameSite=Strict
// cookie, and the session's second secret ("CSRF" below), which the page
// keeps in its origin's storage; every later request must carry the cookie,
// and every API request the second secret in a header too: a page of another
// site cannot set it without a CORS preflight the dashboard never allows, and
// a page on another port of the host, which may be sent the cookie, cannot
// read it. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <ctime>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skyslurm::daemon {

inline constexpr std::string_view kSessionCookie = "skyslurm_session";
inline constexpr std::string_view kCsrfHeader = "X-Skyslurm-Csrf";

class DashboardAuth {
 public:
  // `random_hex`: 32 random hex digits (default: OpenSSL's RAND_bytes);
  // `clock`: now (default: time()). Login tokens not used within
  // `token_lifetime` are forgotten.
  explicit DashboardAuth(std::function<std::string()> random_hex = {},
                         std::function<std::time_t()> clock = {},
                         std::chrono::seconds token_lifetime = std::chrono::minutes(30));

  // A new one-time login token.
  std::string NewLoginToken();
  // Exchanges a login token (once) for a new session id; nullopt when the
  // token is unknown, used or expired.
  std::optional<std::string> Login(std::string_view token);
  // Whether `session` is a live session.
  bool ValidSession(std::string_view session) const;
  // The CSRF token of a live session ("" for none).
  std::string CsrfOf(std::string_view session) const;
  // Whether `header` is the CSRF token of the live `session`.
  bool ValidCsrf(std::string_view session, std::string_view header) const;
  // Forgets every token and session (the dashboard stopped).
  void Clear();

  // The session id in a Cookie header ("" when none).
  static std::string SessionFromCookie(std::string_view cookie_header);

 private:
  struct Token {
    std::string value;
    std::time_t made = 0;
  };
  struct Session {
    std::string id;
    std::string csrf;
  };
  std::function<std::string()> random_hex_;
  std::function<std::time_t()> clock_;
  std::chrono::seconds token_lifetime_;
  mutable std::mutex mu_;
  std::vector<Token> tokens_;
  std::vector<Session> sessions_;
  const Session* FindSession(std::string_view id) const;
};

// Compares secrets in time independent of where they differ.
bool SameSecret(std::string_view a, std::string_view b);

}  // namespace skyslurm::daemon
