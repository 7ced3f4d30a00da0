#include "broker/util/secret_seal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "broker/util/base64.h"

namespace skyslurm {
namespace {

constexpr std::size_t kKeyBytes = 32, kNonceBytes = 12, kTagBytes = 16;

using Cipher = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

Cipher NewCipher() { return Cipher(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free); }

unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }
const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

Result<SecretSeal> SecretSeal::FromKey(std::string key) {
  if (key.size() != kKeyBytes) return InvalidArgumentError("a sealing key is 32 bytes");
  Key k{};
  std::memcpy(k.data(), key.data(), kKeyBytes);
  return SecretSeal(k);
}

Result<SecretSeal> SecretSeal::FromKeyFile(const std::string& key_file) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Key key{};
    const int fd = ::open(key_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      // A key others could read (or change) seals nothing: refused, saying
      // how to mend it.
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
          (st.st_mode & 077) != 0) {
        ::close(fd);
        return FailedPreconditionError(fmt::format(
            "{} must be a file of your own that only you can read (it is uid {}'s, mode {:04o}): "
            "chmod 600 {}, or remove it and launch again the jobs that have secrets",
            key_file, st.st_uid, st.st_mode & 07777, key_file));
      }
      unsigned char extra = 0;
      const ssize_t n = ::read(fd, key.data(), key.size());
      const ssize_t more = n == static_cast<ssize_t>(kKeyBytes) ? ::read(fd, &extra, 1) : 0;
      ::close(fd);
      if (n != static_cast<ssize_t>(kKeyBytes) || more != 0) {
        return FailedPreconditionError(fmt::format(
            "{} is not a sealing key (32 bytes): remove it, and launch again the jobs that have "
            "secrets",
            key_file));
      }
      return SecretSeal(key);
    }
    if (errno != ENOENT) {
      return UnavailableError(fmt::format("cannot read {}: {}", key_file, std::strerror(errno)));
    }
    // Made once, only the user may read it; two daemons racing: one makes it.
    if (RAND_bytes(key.data(), static_cast<int>(kKeyBytes)) != 1) {
      return InternalError("no random bytes for a sealing key");
    }
    const int out = ::open(key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
      if (errno == EEXIST) continue;
      return UnavailableError(fmt::format("cannot make {}: {}", key_file, std::strerror(errno)));
    }
    const bool written = ::write(out, key.data(), key.size()) == static_cast<ssize_t>(kKeyBytes);
    const bool synced = ::fsync(out) == 0;
    ::close(out);
    if (!written || !synced) {
      ::unlink(key_file.c_str());
      return UnavailableError(fmt::format("cannot write {}", key_file));
    }
    return SecretSeal(key);
  }
  return UnavailableError(fmt::format("cannot read {}", key_file));
}

Result<std::string> SecretSeal::Seal(std::string_view plain) const {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(Bytes(nonce), static_cast<int>(kNonceBytes)) != 1) {
    return InternalError("no random bytes to seal with");
  }
  Cipher c = NewCipher();
  std::string sealed(plain.size(), '\0');
  int n = 0, tail = 0;
  std::string tag(kTagBytes, '\0');
  if (!c ||
      EVP_EncryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, key_.data(), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(c.get(), Bytes(sealed), &n, Bytes(plain), static_cast<int>(plain.size())) !=
          1 ||
      EVP_EncryptFinal_ex(c.get(), Bytes(sealed) + n, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes), Bytes(tag)) !=
          1) {
    return InternalError("a secret could not be sealed");
  }
  return std::string(kSealedPrefix) + Base64Encode(nonce + tag + sealed);
}

Result<std::string> SecretSeal::Open(std::string_view text) const {
  auto refused = [] {
    return FailedPreconditionError("a sealed secret does not open with this user's key");
  };
  if (!IsSealed(text)) return InvalidArgumentError("not a sealed secret");
  const auto raw = Base64Decode(text.substr(kSealedPrefix.size()));
  if (!raw || raw->size() < kNonceBytes + kTagBytes) return refused();
  const std::string_view all(*raw);
  const std::string nonce(all.substr(0, kNonceBytes));
  std::string tag(all.substr(kNonceBytes, kTagBytes));
  const std::string_view sealed = all.substr(kNonceBytes + kTagBytes);
  std::string plain(sealed.size(), '\0');
  Cipher c = NewCipher();
  int n = 0, tail = 0;
  if (!c ||
      EVP_DecryptInit_ex(c.get(), EVP_aes_256_gcm(), nullptr, key_.data(), Bytes(nonce)) != 1 ||
      EVP_DecryptUpdate(c.get(), Bytes(plain), &n, Bytes(sealed),
                        static_cast<int>(sealed.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes), Bytes(tag)) !=
          1 ||
      EVP_DecryptFinal_ex(c.get(), Bytes(plain) + n, &tail) != 1) {
    return refused();
  }
  return plain;
}

}  // namespace skyslurm
