#include "broker/site/munge_identity.h"

#include <fmt/format.h>
#include <munge.h>
#include <openssl/evp.h>

#include <array>
#include <cstdlib>
#include <memory>

namespace skyslurm::site {
namespace {

struct ContextFree {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextFree>;

struct Freed {
  void operator()(void* p) const { std::free(p); }
};

// The SHA-256 of a request's body: what its credential carries.
std::string Digest(std::string_view body) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(body.data(), body.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) return "";
  return std::string(reinterpret_cast<const char*>(md.data()), len);
}

Result<Context> MakeContext(const MungeOptions& options) {
  Context ctx(munge_ctx_create());
  if (!ctx) return UnavailableError("MUNGE: out of memory");
  if (!options.socket.empty() &&
      munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, options.socket.c_str()) != EMUNGE_SUCCESS) {
    return InvalidArgumentError(
        fmt::format("MUNGE socket {}: {}", options.socket, munge_ctx_strerror(ctx.get())));
  }
  if (options.ttl_seconds > 0 &&
      munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, options.ttl_seconds) != EMUNGE_SUCCESS) {
    return InvalidArgumentError(
        fmt::format("MUNGE time to live: {}", munge_ctx_strerror(ctx.get())));
  }
  return ctx;
}

// munged could not be asked (it is not running, its socket is elsewhere):
// the request may be tried again; anything else is the credential's fault.
bool Unreachable(munge_err_t e) { return e == EMUNGE_SOCKET || e == EMUNGE_NO_MEMORY; }

}  // namespace

Result<std::string> MakeMungeCredential(std::string_view body, std::optional<uid_t> for_uid,
                                        const MungeOptions& options) {
  SKY_ASSIGN_OR_RETURN(Context ctx, MakeContext(options));
  if (for_uid && munge_ctx_set(ctx.get(), MUNGE_OPT_UID_RESTRICTION, *for_uid) != EMUNGE_SUCCESS) {
    return InvalidArgumentError(
        fmt::format("MUNGE uid restriction: {}", munge_ctx_strerror(ctx.get())));
  }
  const std::string digest = Digest(body);
  if (digest.empty()) return InternalError("MUNGE: no SHA-256 of the request");
  char* cred = nullptr;
  const munge_err_t e =
      munge_encode(&cred, ctx.get(), digest.data(), static_cast<int>(digest.size()));
  std::unique_ptr<char, Freed> owned(cred);
  if (e != EMUNGE_SUCCESS) {
    const char* why = munge_ctx_strerror(ctx.get());
    return UnavailableError(fmt::format("MUNGE could not make a credential: {}",
                                        why != nullptr ? why : munge_strerror(e)));
  }
  return std::string(cred);
}

Result<MungeIdentity> VerifyMungeCredential(std::string_view credential, std::string_view body,
                                            const MungeOptions& options) {
  SKY_ASSIGN_OR_RETURN(Context ctx, MakeContext(options));
  const std::string text(credential);
  void* payload = nullptr;
  int len = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  const munge_err_t e = munge_decode(text.c_str(), ctx.get(), &payload, &len, &uid, &gid);
  std::unique_ptr<void, Freed> owned(payload);
  if (e != EMUNGE_SUCCESS) {
    const std::string why = munge_ctx_strerror(ctx.get()) != nullptr ? munge_ctx_strerror(ctx.get())
                                                                     : munge_strerror(e);
    if (Unreachable(e)) return UnavailableError(fmt::format("MUNGE: {}", why));
    return PermissionDeniedError(fmt::format("MUNGE credential refused: {}", why));
  }
  const std::string digest = Digest(body);
  if (payload == nullptr || len < 0 ||
      std::string_view(static_cast<const char*>(payload), static_cast<std::size_t>(len)) !=
          digest) {
    return PermissionDeniedError("MUNGE credential refused: it was made for another request");
  }
  return MungeIdentity{uid, gid};
}

std::string RequestBinding(std::string_view method, std::string_view target,
                           std::string_view body) {
  return fmt::format("{} {}\n{}", method, target, body);
}

std::string Sha256Hex(std::string_view text) {
  std::string hex;
  for (char c : Digest(text)) hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return hex;
}

}  // namespace skyslurm::site
