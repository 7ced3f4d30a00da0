#include "broker/daemon/api/site_access.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>

#include <ctime>
#include <vector>

namespace skyslurm::daemon {
namespace {

// How long a taken credential is remembered: past any time to live munged
// gives (its default is 300 s), with room for hosts' clocks apart.
constexpr std::time_t kRememberCredential = 900;

Result<std::pair<std::string, gid_t>> Account(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return PermissionDeniedError(fmt::format("uid {} has no account on this host", uid));
  }
  return std::make_pair(std::string(pw.pw_name), pw.pw_gid);
}

}  // namespace

bool InGroup(const std::string& name, unsigned gid, const std::string& group) {
  if (group.empty()) return false;
  std::vector<char> buffer(65536);
  struct group gr {};
  struct group* found = nullptr;
  if (::getgrnam_r(group.c_str(), &gr, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr) {
    return false;
  }
  if (gr.gr_gid == gid) return true;
  int n = 256;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  if (::getgrouplist(name.c_str(), gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(name.c_str(), gid, groups.data(), &n) < 0) return false;
  }
  for (int i = 0; i < n; ++i) {
    if (groups[static_cast<std::size_t>(i)] == gr.gr_gid) return true;
  }
  return false;
}

Result<Viewer> SiteAccess::Admit(std::string_view method, std::string_view target,
                                 std::string_view body, std::string_view credential) {
  if (credential.empty()) {
    return PermissionDeniedError(
        fmt::format("a site's skyslurmd answers requests with a MUNGE credential only (header {})",
                    kMungeHeader));
  }
  SKY_ASSIGN_OR_RETURN(site::MungeIdentity who,
                       site::VerifyMungeCredential(
                           credential, site::RequestBinding(method, target, body), options_.munge));
  SKY_ASSIGN_OR_RETURN(auto account, Account(who.uid));
  // Once, at any replica: this replica's munged refuses a replay to it, and
  // the store one to another.
  // (Whitespace is skipped by munged's decoder: one credential, one record.)
  std::string canonical;
  for (char c : credential) {
    if (c != ' ' && (c < '\t' || c > '\r')) canonical += c;
  }
  if (Status taken = store_.TakeCredential(site::Sha256Hex(canonical),
                                           std::time(nullptr) + kRememberCredential);
      !taken.ok()) {
    if (taken.code() == StatusCode::kAlreadyExists) {
      return PermissionDeniedError("MUNGE: the credential was used before (a replay)");
    }
    return UnavailableError("cannot record the request's credential: " + taken.message());
  }
  return Viewer{account.first, InGroup(account.first, account.second, options_.admin_group)};
}

}  // namespace skyslurm::daemon
