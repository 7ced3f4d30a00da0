// Sealing a secret for keeping on disk (a task's `secrets`, kept with its
// job in skyslurmd's store so that a move or a restart can submit it
// again): AES-256-GCM with a key of the user's own, made once in a file
// only they can read (0600), beside the store but never in it. What is
// written is "skyslurm-sealed:v1:" and the base64 of nonce, tag and
// ciphertext; a changed byte or another key fails to open.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "broker/util/status.h"

namespace skyslurm {

inline constexpr std::string_view kSealedPrefix = "skyslurm-sealed:v1:";

class SecretSeal {
 public:
  // The key in `key_file`, made (32 random bytes, 0600) when it is absent.
  static Result<SecretSeal> FromKeyFile(const std::string& key_file);
  // A key given as it is (32 bytes), for tests.
  static Result<SecretSeal> FromKey(std::string key);

  Result<std::string> Seal(std::string_view plain) const;
  Result<std::string> Open(std::string_view sealed) const;
  static bool IsSealed(std::string_view text) { return text.starts_with(kSealedPrefix); }

 private:
  using Key = std::array<unsigned char, 32>;
  explicit SecretSeal(const Key& key) : key_(key) {}
  Key key_;
};

}  // namespace skyslurm
