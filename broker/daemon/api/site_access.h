// Who asks a site's skyslurmd (`skyslurmd --site`, docs/site.md): each
// request carries a MUNGE credential (header X-Skyslurm-Munge) made by the
// asker's munged for the site daemon's user, binding the request's method,
// target and body (site/munge_identity.h: RequestBinding). The user is the
// credential's uid, never anything the request says; a credential is good
// for one request, once, at any replica (the store's record of those
// taken). Members of the admin group see and act on every job.
#pragma once

#include <string>
#include <string_view>

#include "broker/site/munge_identity.h"
#include "broker/store/job_store.h"
#include "broker/util/acting_user.h"
#include "broker/util/status.h"

namespace skyslurm::daemon {

using site::kMungeHeader;

struct SiteAccessOptions {
  site::MungeOptions munge;
  std::string admin_group;  // "" = no admins
};

class SiteAccess {
 public:
  SiteAccess(store::JobStore& store, SiteAccessOptions options)
      : store_(store), options_(std::move(options)) {}

  // The viewer of a request, from its credential; PermissionDenied saying
  // why not (none, forged, expired, replayed, another request's, a uid with
  // no account here), Unavailable when munged or the store cannot answer.
  Result<Viewer> Admit(std::string_view method, std::string_view target, std::string_view body,
                       std::string_view credential);

 private:
  store::JobStore& store_;
  SiteAccessOptions options_;
};

// Whether the user `name` (primary group `gid`) is a member of `group`.
bool InGroup(const std::string& name, unsigned gid, const std::string& group);

}  // namespace skyslurm::daemon
