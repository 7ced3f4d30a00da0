// Base64 (RFC 4648, the standard alphabet), as kubeconfig files and
// Kubernetes Secrets carry certificates and keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace skyslurm {

std::string Base64Encode(std::string_view bytes);
// Whitespace (line breaks of wrapped PEM-style text) is skipped; padding is
// optional; nullopt for any other character or a truncated quantum.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace skyslurm
