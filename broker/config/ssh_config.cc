#include "broker/config/ssh_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "broker/util/strings.h"

namespace skyslurm::config {
namespace {

// Splits "Key value", "Key=value", "Key = value"; values may be quoted.
bool SplitLine(std::string_view line, std::string* key, std::vector<std::string>* values) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string_view::npos || line[p] == '#') return false;
  std::size_t k = p;
  while (k < line.size() && line[k] != ' ' && line[k] != '\t' && line[k] != '=') ++k;
  *key = Lower(line.substr(p, k - p));
  p = k;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  if (p < line.size() && line[p] == '=') ++p;
  values->clear();
  while (p < line.size()) {
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
    if (p >= line.size() || line[p] == '#') break;
    std::string value;
    if (line[p] == '"') {
      const auto close = line.find('"', p + 1);
      value = std::string(line.substr(
          p + 1, close == std::string_view::npos ? std::string_view::npos : close - p - 1));
      p = close == std::string_view::npos ? line.size() : close + 1;
    } else {
      const std::size_t start = p;
      while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
      value = std::string(line.substr(start, p - start));
    }
    values->push_back(std::move(value));
  }
  return true;
}

bool IsPattern(std::string_view host) {
  return host.find_first_of("*?!") != std::string_view::npos;
}

// ssh's glob: '*' any run, '?' one character, case-insensitive; "!pat"
// negates. Iterative with one backtrack point (the last '*'), so a pattern of
// many stars costs O(pattern x text) instead of exponential time: a config
// line is user input and must never hang the shim.
bool Glob(std::string_view pattern, std::string_view text) {
  auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || same(pattern[p], text[t]))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool HostMatches(const std::vector<std::string>& patterns, std::string_view host) {
  bool matched = false;
  for (const auto& p : patterns) {
    if (p.starts_with('!')) {
      if (Glob(std::string_view(p).substr(1), host)) return false;
    } else if (Glob(p, host)) {
      matched = true;
    }
  }
  return matched;
}

struct Block {
  std::vector<std::string> patterns;
  int line = 0;
  std::vector<std::tuple<std::string, std::vector<std::string>, int>> entries;  // key, values, line
};

// Keywords skyslurm uses, and OpenSSH ones it can leave to ssh (kept for the
// interactive `ssh -t` of salloc) without acting on them.
const std::set<std::string>& UsedKeys() {
  static const std::set<std::string> keys = {"hostname",
                                             "port",
                                             "user",
                                             "identityfile",
                                             "userknownhostsfile",
                                             "globalknownhostsfile",
                                             "stricthostkeychecking",
                                             "proxyjump",
                                             "connecttimeout",
                                             "serveraliveinterval",
                                             "identitiesonly"};
  return keys;
}
const std::set<std::string>& IgnoredKeys() {
  static const std::set<std::string> keys = {"addkeystoagent",
                                             "batchmode",
                                             "checkhostip",
                                             "ciphers",
                                             "compression",
                                             "controlmaster",
                                             "controlpath",
                                             "controlpersist",
                                             "forwardagent",
                                             "forwardx11",
                                             "forwardx11trusted",
                                             "hashknownhosts",
                                             "hostkeyalgorithms",
                                             "kexalgorithms",
                                             "loglevel",
                                             "macs",
                                             "preferredauthentications",
                                             "pubkeyacceptedalgorithms",
                                             "pubkeyacceptedkeytypes",
                                             "requesttty",
                                             "sendenv",
                                             "serveralivecountmax",
                                             "setenv",
                                             "tcpkeepalive",
                                             "updatehostkeys",
                                             "visualhostkey",
                                             "addressfamily",
                                             "localforward",
                                             "remoteforward",
                                             "dynamicforward",
                                             "exitonforwardfailure",
                                             "passwordauthentication",
                                             "kbdinteractiveauthentication",
                                             "gssapiauthentication",
                                             "certificatefile",
                                             "identityagent",
                                             "canonicalizehostname",
                                             "proxycommand"};
  return keys;
}

std::string ExpandTokens(std::string_view value, const SshHost& host, const SshConfigContext& ctx) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 1 < value.size()) {
      switch (value[++i]) {
        case 'd':
          out += ctx.home;
          break;
        case 'h':
          out += host.hostname.empty() ? host.name : host.hostname;
          break;
        case 'n':
          out += host.name;
          break;
        case 'p':
          out += std::to_string(host.port);
          break;
        case 'r':
          out += host.user;
          break;
        case 'u':
          out += ctx.local_user;
          break;
        case '%':
          out += '%';
          break;
        default:
          out += '%';
          out += value[i];
      }
    } else {
      out += value[i];
    }
  }
  if (out == "~") return ctx.home;
  if (out.starts_with("~/")) return ctx.home + out.substr(1);
  return out;
}

}  // namespace

Result<std::vector<SshHost>> ParseSshConfig(std::string_view text, std::string_view file,
                                            const SshConfigContext& context) {
  std::vector<Block> blocks;
  blocks.push_back({{"*"}, 0, {}});  // lines before the first Host apply to all
  int line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    ++line_no;
    std::string key;
    std::vector<std::string> values;
    if (!SplitLine(line, &key, &values)) continue;
    auto error = [&](const std::string& what) {
      return InvalidArgumentError(fmt::format("{}:{}: {}", file, line_no, what));
    };
    if (key == "host") {
      if (values.empty()) return error("Host needs at least one name");
      blocks.push_back({values, line_no, {}});
      continue;
    }
    if (key == "match" || key == "include") {
      return error(fmt::format(
          "'{}' is not supported in a skyslurm clusters file; write one Host block per cluster",
          key == "match" ? "Match" : "Include"));
    }
    if (!UsedKeys().contains(key) && !IgnoredKeys().contains(key)) {
      return error(
          fmt::format("unknown keyword '{}'",
                      std::string(line.substr(line.find_first_not_of(" \t"), key.size()))));
    }
    if (values.empty()) return error(fmt::format("'{}' needs a value", key));
    blocks.back().entries.emplace_back(key, values, line_no);
  }

  std::vector<SshHost> hosts;
  std::set<std::string> seen;
  for (const Block& block : blocks) {
    for (const std::string& name : block.patterns) {
      if (IsPattern(name) || seen.contains(name)) continue;
      seen.insert(name);
      SshHost host;
      host.name = name;
      host.line = block.line;
      std::set<std::string> set_keys;
      // ssh's rule: walk every block that matches, in file order; the first
      // value of each key wins (IdentityFile and UserKnownHostsFile add up).
      for (const Block& b : blocks) {
        if (!HostMatches(b.patterns, name)) continue;
        for (const auto& [key, values, at] : b.entries) {
          auto bad = [&, at_line = at](const std::string& what) {
            return InvalidArgumentError(fmt::format("{}:{}: {}", file, at_line, what));
          };
          if (key == "identityfile") {
            host.identity_files.push_back(values[0]);
            continue;
          }
          if (key == "userknownhostsfile") {
            if (!set_keys.insert(key).second) continue;
            host.known_hosts_files = values;
            continue;
          }
          if (key == "globalknownhostsfile") {
            if (!set_keys.insert(key).second) continue;
            host.global_known_hosts_files = values;
            continue;
          }
          if (!set_keys.insert(key).second) continue;
          const std::string& v = values[0];
          auto number = [&](int* out) -> Status {
            auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
            if (ec != std::errc() || ptr != v.data() + v.size() || *out < 0) {
              return bad(fmt::format("'{}' is not a number", v));
            }
            return OkStatus();
          };
          if (key == "hostname") {
            host.hostname = v;
          } else if (key == "port") {
            SKY_RETURN_IF_ERROR(number(&host.port));
            if (host.port < 1 || host.port > 65535) return bad(fmt::format("bad port {}", v));
          } else if (key == "user") {
            host.user = v;
          } else if (key == "stricthostkeychecking") {
            host.strict_host_key_checking = Lower(v);
          } else if (key == "proxyjump") {
            host.proxy_jump = Lower(v) == "none" ? "" : v;
          } else if (key == "connecttimeout") {
            int n = 0;
            SKY_RETURN_IF_ERROR(number(&n));
            host.connect_timeout_s = n;
          } else if (key == "serveraliveinterval") {
            int n = 0;
            SKY_RETURN_IF_ERROR(number(&n));
            host.server_alive_interval_s = n;
          } else if (key == "identitiesonly") {
            host.identities_only = Lower(v) == "yes";
          }
        }
      }
      if (host.hostname.empty()) host.hostname = host.name;
      if (host.user.empty()) host.user = context.local_user;
      host.hostname = ExpandTokens(host.hostname, host, context);
      for (auto& f : host.identity_files) f = ExpandTokens(f, host, context);
      for (auto& f : host.known_hosts_files) f = ExpandTokens(f, host, context);
      for (auto& f : host.global_known_hosts_files) f = ExpandTokens(f, host, context);
      if (!set_keys.contains("globalknownhostsfile")) {
        // As OpenSSH: the host keys a site distributes to every machine.
        host.global_known_hosts_files = {"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"};
      }
      if (host.known_hosts_files.empty()) {
        host.known_hosts_files = {context.home + "/.ssh/known_hosts",
                                  context.home + "/.ssh/known_hosts2"};
      }
      if (host.identity_files.empty()) {
        for (const char* k : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
          host.identity_files.push_back(context.home + "/.ssh/" + k);
        }
      }
      hosts.push_back(std::move(host));
    }
  }
  return hosts;
}

Result<std::vector<SshHost>> ReadSshConfig(const std::string& path,
                                           const SshConfigContext& context) {
  std::ifstream in(path);
  if (!in) return std::vector<SshHost>{};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return ParseSshConfig(buffer.str(), path, context);
}

}  // namespace skyslurm::config
