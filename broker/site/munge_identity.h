// Who is asking a site's skyslurmd: MUNGE, the credential Slurm's own
// daemons use. The shim asks its host's munged for a credential that binds
// the request (the SHA-256 of its body is the credential's payload) and
// that only the site daemon's user may decode; the site daemon asks its
// munged to decode it and takes the uid and gid from the answer, never
// from the request. munged refuses a credential decoded before (a replay),
// past its time to live, or from a host whose clock is ahead (rewound).
//
// Every host involved shares the cluster's munge key, as every node of a
// Slurm cluster does.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "broker/util/status.h"

namespace skyslurm::site {

struct MungeIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
};

struct MungeOptions {
  std::string socket;  // munged's socket; "" for its default
  // Seconds the credential is good for; 0: munged's default (300).
  int ttl_seconds = 0;
};

// A credential for a request with `body`, decodable only by `for_uid` (the
// site daemon's user) when given. Unavailable when munged cannot be asked.
Result<std::string> MakeMungeCredential(std::string_view body, std::optional<uid_t> for_uid,
                                        const MungeOptions& options = {});

// The sender of `credential`, if it is good and bound to `body`;
// PermissionDenied saying why not (replayed, expired, rewound, not for
// this user, another request's, not a credential), Unavailable when munged
// cannot be asked.
Result<MungeIdentity> VerifyMungeCredential(std::string_view credential, std::string_view body,
                                            const MungeOptions& options = {});

// The HTTP header a request to a site's skyslurmd carries its credential in.
inline constexpr std::string_view kMungeHeader = "X-Skyslurm-Munge";

// What a request's credential binds: its method, its target (path and
// query) and its body, so that a credential taken from one request proves
// nothing for another.
std::string RequestBinding(std::string_view method, std::string_view target, std::string_view body);
// The SHA-256 of `text`, in hex (a credential's name in the site's record
// of those taken: JobStore::TakeCredential).
std::string Sha256Hex(std::string_view text);

}  // namespace skyslurm::site
