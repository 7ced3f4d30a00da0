#include "broker/daemon/dashboard/dashboard_auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace skyslurm::daemon {
namespace {

std::string RandomHex() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("no random bytes for a dashboard token");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

}  // namespace

bool SameSecret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && !a.empty() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

DashboardAuth::DashboardAuth(std::function<std::string()> random_hex,
                             std::function<std::time_t()> clock,
                             std::chrono::seconds token_lifetime)
    : random_hex_(random_hex ? std::move(random_hex) : RandomHex),
      clock_(clock ? std::move(clock) : [] { return std::time(nullptr); }),
      token_lifetime_(token_lifetime) {}

std::string DashboardAuth::NewLoginToken() {
  std::lock_guard lock(mu_);
  tokens_.push_back({random_hex_(), clock_()});
  return tokens_.back().value;
}

std::optional<std::string> DashboardAuth::Login(std::string_view token) {
  std::lock_guard lock(mu_);
  const std::time_t now = clock_();
  std::erase_if(tokens_, [&](const Token& t) { return now - t.made > token_lifetime_.count(); });
  // Every token compared (none skipped at the first match).
  auto found = tokens_.end();
  for (auto it = tokens_.begin(); it != tokens_.end(); ++it) {
    if (SameSecret(it->value, token)) found = it;
  }
  if (found == tokens_.end()) return std::nullopt;
  tokens_.erase(found);  // one time
  sessions_.push_back({random_hex_() + random_hex_(), random_hex_()});
  return sessions_.back().id;
}

const DashboardAuth::Session* DashboardAuth::FindSession(std::string_view id) const {
  const Session* found = nullptr;
  for (const Session& s : sessions_) {
    if (SameSecret(s.id, id)) found = &s;
  }
  return found;
}

bool DashboardAuth::ValidSession(std::string_view session) const {
  std::lock_guard lock(mu_);
  return FindSession(session) != nullptr;
}

std::string DashboardAuth::CsrfOf(std::string_view session) const {
  std::lock_guard lock(mu_);
  const Session* s = FindSession(session);
  return s == nullptr ? "" : s->csrf;
}

bool DashboardAuth::ValidCsrf(std::string_view session, std::string_view header) const {
  std::lock_guard lock(mu_);
  const Session* s = FindSession(session);
  return s != nullptr && SameSecret(s->csrf, header);
}

void DashboardAuth::Clear() {
  std::lock_guard lock(mu_);
  tokens_.clear();
  sessions_.clear();
}

std::string DashboardAuth::SessionFromCookie(std::string_view header) {
  // "a=1; skyslurm_session=abc; b=2"
  while (!header.empty()) {
    const std::size_t end = header.find(';');
    std::string_view pair = header.substr(0, end);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const std::size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == kSessionCookie) {
      return std::string(pair.substr(eq + 1));
    }
    if (end == std::string_view::npos) break;
    header.remove_prefix(end + 1);
  }
  return "";
}

}  // namespace skyslurm::daemon
