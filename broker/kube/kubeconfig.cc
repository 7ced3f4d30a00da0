#include "broker/kube/kubeconfig.h"

#include <fmt/format.h>
#include <json/json.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "broker/util/base64.h"
#include "broker/util/json_read.h"
#include "broker/util/timestamp.h"

namespace skyslurm::kube {
namespace {

namespace fs = std::filesystem;

struct File {
  std::string path;
  YAML::Node root;
};

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

Status Bad(const File& f, const YAML::Node& node, const std::string& what) {
  return InvalidArgumentError(fmt::format("{}:{}: {}", f.path, LineOf(node), what));
}

std::string Text(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

// The entry named `name` in the list `list` (clusters, contexts, users) of
// the first file that has one.
struct Found {
  const File* file = nullptr;
  YAML::Node entry;
};
Found Named(const std::vector<File>& files, const char* list, std::string_view name) {
  for (const File& f : files) {
    const YAML::Node items = f.root[list];
    if (!items || !items.IsSequence()) continue;
    for (const YAML::Node& item : items) {
      if (item.IsMap() && Text(item, "name") == name) return {&f, item};
    }
  }
  return {};
}

std::string Resolve(const File& f, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(f.path).parent_path() / path).lexically_normal().string();
}

Result<std::string> ReadWhole(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("cannot read {} {}", what, path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A PEM from `<key>-data` (base64) or the file `<key>`.
Result<std::string> Pem(const File& f, const YAML::Node& node, const std::string& key) {
  if (const YAML::Node data = node[key + "-data"]; data) {
    auto pem = Base64Decode(data.IsScalar() ? data.Scalar() : "");
    if (!pem) return Bad(f, data, fmt::format("{}-data is not base64", key));
    return *pem;
  }
  if (const std::string path = Text(node, key.c_str()); !path.empty()) {
    auto pem = ReadWhole(Resolve(f, path), key);
    if (!pem.ok()) return Bad(f, node[key], pem.status().message());
    return pem;
  }
  return std::string();
}

Result<KubeContext> FromFiles(const std::vector<File>& files, std::string_view wanted) {
  std::string name(wanted);
  if (name.empty()) {
    for (const File& f : files) {
      if (name = Text(f.root, "current-context"); !name.empty()) break;
    }
    if (name.empty()) {
      return NotFoundError(fmt::format("{}: no current-context, and no context named",
                                       files.empty() ? "kubeconfig" : files.front().path));
    }
  }
  const Found context = Named(files, "contexts", name);
  if (context.file == nullptr) {
    std::string where;
    for (const File& f : files) where += (where.empty() ? "" : ", ") + f.path;
    return NotFoundError(
        fmt::format("no context '{}' in {}", name, where.empty() ? "no kubeconfig" : where));
  }
  const YAML::Node ctx = context.entry["context"];
  if (!ctx || !ctx.IsMap()) return Bad(*context.file, context.entry, "context without a body");
  KubeContext out;
  out.context = name;
  out.source = context.file->path;
  if (std::string ns = Text(ctx, "namespace"); !ns.empty()) out.namespace_name = ns;

  const std::string cluster_name = Text(ctx, "cluster");
  const Found cluster = Named(files, "clusters", cluster_name);
  if (cluster.file == nullptr) {
    return Bad(*context.file, ctx,
               fmt::format("context '{}' names cluster '{}', which no kubeconfig "
                           "file defines",
                           name, cluster_name));
  }
  const YAML::Node c = cluster.entry["cluster"];
  if (!c || !c.IsMap()) return Bad(*cluster.file, cluster.entry, "cluster without a body");
  out.server = Text(c, "server");
  if (out.server.empty())
    return Bad(*cluster.file, c, fmt::format("cluster '{}' has no server", cluster_name));
  SKY_ASSIGN_OR_RETURN(out.ca_pem, Pem(*cluster.file, c, "certificate-authority"));
  out.insecure_skip_tls_verify = Text(c, "insecure-skip-tls-verify") == "true";
  out.tls_server_name = Text(c, "tls-server-name");
  if (c["proxy-url"]) {
    return Bad(*cluster.file, c["proxy-url"],
               "proxy-url is not supported; reach the API server directly");
  }

  const std::string user_name = Text(ctx, "user");
  if (user_name.empty()) return out;  // anonymous
  const Found user = Named(files, "users", user_name);
  if (user.file == nullptr) {
    return Bad(*context.file, ctx,
               fmt::format("context '{}' names user '{}', which no kubeconfig file defines", name,
                           user_name));
  }
  const YAML::Node u = user.entry["user"];
  if (!u || !u.IsMap()) return out;
  if (u["auth-provider"]) {
    const std::string provider = Text(u["auth-provider"], "name");
    return Bad(*user.file, u["auth-provider"],
               fmt::format("user '{}' authenticates with the '{}' auth-provider, which kubectl "
                           "dropped in 1.26; use its exec credential plugin instead",
                           user_name, provider));
  }
  out.token = Text(u, "token");
  if (out.token.empty()) {
    if (const std::string file = Text(u, "tokenFile"); !file.empty()) {
      auto token = ReadWhole(Resolve(*user.file, file), "token file");
      if (!token.ok()) return Bad(*user.file, u["tokenFile"], token.status().message());
      out.token = *token;
      while (!out.token.empty() && (out.token.back() == '\n' || out.token.back() == '\r')) {
        out.token.pop_back();
      }
    }
  }
  SKY_ASSIGN_OR_RETURN(out.client_cert_pem, Pem(*user.file, u, "client-certificate"));
  SKY_ASSIGN_OR_RETURN(out.client_key_pem, Pem(*user.file, u, "client-key"));
  if (out.client_cert_pem.empty() != out.client_key_pem.empty()) {
    return Bad(*user.file, u,
               fmt::format("user '{}' has a client certificate without its key, or "
                           "a key without its certificate",
                           user_name));
  }
  out.username = Text(u, "username");
  out.password = Text(u, "password");
  if (const YAML::Node e = u["exec"]; e) {
    if (!e.IsMap()) return Bad(*user.file, e, "exec must be a map");
    ExecPlugin p;
    p.api_version = Text(e, "apiVersion");
    p.command = Text(e, "command");
    if (p.command.empty()) return Bad(*user.file, e, "exec without a command");
    // A command with a slash but no leading one is relative to the file.
    if (p.command.find('/') != std::string::npos) p.command = Resolve(*user.file, p.command);
    if (const YAML::Node args = e["args"]; args && args.IsSequence()) {
      for (const auto& a : args) p.args.push_back(a.as<std::string>());
    }
    if (const YAML::Node env = e["env"]; env && env.IsSequence()) {
      for (const auto& kv : env) p.env.emplace_back(Text(kv, "name"), Text(kv, "value"));
    }
    p.install_hint = Text(e, "installHint");
    p.interactive_mode = Text(e, "interactiveMode");
    out.exec = std::move(p);
  }
  return out;
}

Result<File> ParseFile(std::string_view yaml, std::string_view path) {
  File f;
  f.path = std::string(path);
  try {
    f.root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  if (f.root.IsNull()) f.root = YAML::Node(YAML::NodeType::Map);
  if (!f.root.IsMap()) return InvalidArgumentError(fmt::format("{}: not a kubeconfig", path));
  return f;
}

}  // namespace

std::vector<std::string> KubeconfigFiles(std::string_view kubeconfig_env, std::string_view home) {
  std::vector<std::string> files;
  std::size_t start = 0;
  while (start <= kubeconfig_env.size() && !kubeconfig_env.empty()) {
    const std::size_t end = std::min(kubeconfig_env.find(':', start), kubeconfig_env.size());
    if (end > start) files.emplace_back(kubeconfig_env.substr(start, end - start));
    start = end + 1;
  }
  if (files.empty()) files.push_back(std::string(home) + "/.kube/config");
  return files;
}

Result<KubeContext> ParseKubeconfig(std::string_view yaml, std::string_view file,
                                    std::string_view context) {
  SKY_ASSIGN_OR_RETURN(File f, ParseFile(yaml, file));
  return FromFiles({f}, context);
}

Result<KubeContext> LoadContext(const std::vector<std::string>& files, std::string_view context) {
  std::vector<File> parsed;
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;  // kubectl skips the missing files of a list
    std::ostringstream s;
    s << in.rdbuf();
    SKY_ASSIGN_OR_RETURN(File f, ParseFile(s.str(), path));
    parsed.push_back(std::move(f));
  }
  if (parsed.empty()) {
    std::string list;
    for (const auto& f : files) list += (list.empty() ? "" : ":") + f;
    return NotFoundError(fmt::format("no kubeconfig: {} cannot be read", list));
  }
  return FromFiles(parsed, context);
}

Result<ExecCredential> ParseExecCredential(std::string_view json) {
  Json::Value root;
  std::string errors;
  if (!ReadJson(json, &root, &errors) || !root.isObject()) {
    return InvalidArgumentError("the exec plugin printed no ExecCredential JSON: " + errors);
  }
  // Only strings are read as strings (jsoncpp's asString() throws on an
  // object or an array): anything else is as absent.
  auto text = [](const Json::Value& v, const char* key) {
    return v.isObject() && v[key].isString() ? v[key].asString() : std::string();
  };
  if (text(root, "kind") != "ExecCredential") {
    return InvalidArgumentError(
        fmt::format("the exec plugin printed a {}, not an ExecCredential",
                    root["kind"].isString() ? root["kind"].asString() : std::string("JSON value")));
  }
  const Json::Value& status = root["status"];
  ExecCredential c;
  c.token = text(status, "token");
  c.client_cert_pem = text(status, "clientCertificateData");
  c.client_key_pem = text(status, "clientKeyData");
  if (c.token.empty() && c.client_cert_pem.empty()) {
    return InvalidArgumentError(
        "the exec plugin's ExecCredential has neither a token nor a client "
        "certificate");
  }
  if (const std::string at = text(status, "expirationTimestamp"); !at.empty()) {
    c.expires = ParseRfc3339(at);
    if (!c.expires) {
      return InvalidArgumentError("the exec plugin's expirationTimestamp is not RFC 3339: " + at);
    }
  }
  return c;
}

Result<ExecCredential> RunExecPlugin(const ExecPlugin& plugin, CommandRunner& runner,
                                     std::chrono::milliseconds timeout) {
  if (plugin.interactive_mode == "Always") {
    return FailedPreconditionError(fmt::format(
        "the exec plugin {} needs a terminal (interactiveMode: Always), which skyslurm never has",
        plugin.command));
  }
  const std::string version =
      plugin.api_version.empty() ? "client.authentication.k8s.io/v1" : plugin.api_version;
  Command c;
  c.argv = {plugin.command};
  c.argv.insert(c.argv.end(), plugin.args.begin(), plugin.args.end());
  c.env_set = plugin.env;
  c.env_set.emplace_back(
      "KUBERNETES_EXEC_INFO",
      fmt::format(R"({{"apiVersion":"{}","kind":"ExecCredential","spec":{{"interactive":false}}}})",
                  version));
  c.timeout = timeout;
  auto out = runner.Run(c);
  if (!out.ok()) {
    return UnavailableError(
        fmt::format("exec plugin {}: {}{}", plugin.command, out.status().message(),
                    plugin.install_hint.empty() ? "" : " (" + plugin.install_hint + ")"));
  }
  if (!out->success()) {
    std::string said = out->err;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    return UnauthenticatedError(
        fmt::format("exec plugin {} failed ({}): {}", plugin.command, out->DescribeEnd(), said));
  }
  auto credential = ParseExecCredential(out->out);
  if (!credential.ok()) return credential.status().WithContext("exec plugin " + plugin.command);
  return credential;
}

}  // namespace skyslurm::kube
