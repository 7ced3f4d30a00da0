// The clusters a user reaches over SSH, read from ~/.slurm/config, which is
// in OpenSSH's client-config format (as SkyPilot users already keep it): one
// `Host <cluster>` block per cluster. Keywords are case-insensitive,
// "Key value" or "Key=value", '#' starts a comment, and as in ssh the first
// value given for a key wins, so `Host *` defaults go last.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::config {

struct SshHost {
  std::string name;      // the Host alias: the cluster's name
  int line = 0;          // where its block starts
  std::string hostname;  // HostName, default the alias
  int port = 22;
  std::string user;  // default: the local user
  std::vector<std::string> identity_files;
  std::vector<std::string> known_hosts_files;         // UserKnownHostsFile
  std::vector<std::string> global_known_hosts_files;  // GlobalKnownHostsFile (/etc/ssh/...)
  std::string strict_host_key_checking = "yes";
  std::string proxy_jump;
  std::optional<int> connect_timeout_s;
  std::optional<int> server_alive_interval_s;
  bool identities_only = false;
};

struct SshConfigContext {
  std::string home;        // for ~ and %d
  std::string local_user;  // for %u and the default User
};

// Parses the text of a config file. Hosts named by a pattern (`*`, `?`, `!`)
// only give defaults; Match, Include and unknown keywords are errors naming
// the line, except keywords skyslurm does not need, which are ignored (see
// the .cc). Tokens %d %h %p %r %u %% are expanded as ssh does.
Result<std::vector<SshHost>> ParseSshConfig(std::string_view text, std::string_view file,
                                            const SshConfigContext& context);

// Reads and parses a file; a missing file is an empty list.
Result<std::vector<SshHost>> ReadSshConfig(const std::string& path,
                                           const SshConfigContext& context);

}  // namespace skyslurm::config
