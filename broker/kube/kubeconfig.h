// A Kubernetes cluster as the user's kubeconfig describes it: the API
// server, how to trust it and who to be there. Read as kubectl reads it:
// the files of $KUBECONFIG (colon-separated; the first file to name a
// context, cluster or user wins) or ~/.kube/config; relative paths are
// relative to the file that holds them; *-data fields win over their file
// forms. One skyslurm cluster entry is one context.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::kube {

// users[].user.exec: a program that prints an ExecCredential (cloud CLIs'
// plugins: gke-gcloud-auth-plugin, aws eks get-token, kubelogin).
struct ExecPlugin {
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;
  std::string interactive_mode;  // Never, IfAvailable, Always ("" = IfAvailable)
};

struct KubeContext {
  std::string context;  // its name in the kubeconfig
  std::string source;   // the file that defined the context, for messages
  std::string server;   // https://host:port
  std::string ca_pem;   // "" = the system's CAs
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string token;
  std::string client_cert_pem, client_key_pem;
  std::string username, password;  // basic authentication
  std::optional<ExecPlugin> exec;
  std::string namespace_name = "default";
};

// The kubeconfig files, as kubectl finds them: $KUBECONFIG's list (empty
// entries skipped), else ~/.kube/config.
std::vector<std::string> KubeconfigFiles(std::string_view kubeconfig_env, std::string_view home);

// The context `context` ("" = the current-context) of the files, whatever
// each file lacks taken from the next. Errors name the file (and line) and
// what is missing: a context, cluster or user not found, an unreadable
// certificate file, an auth-provider (gcp, oidc: gone from kubectl since
// 1.26; use their exec plugins).
Result<KubeContext> LoadContext(const std::vector<std::string>& files, std::string_view context);

// One kubeconfig given as text (`file` names it in messages and anchors
// relative paths).
Result<KubeContext> ParseKubeconfig(std::string_view yaml, std::string_view file,
                                    std::string_view context);

// What an exec plugin printed.
struct ExecCredential {
  std::string token;
  std::string client_cert_pem, client_key_pem;
  std::optional<std::time_t> expires;  // none: valid until the server refuses it
};

Result<ExecCredential> ParseExecCredential(std::string_view json);

// Runs the plugin as kubectl does: its env added to ours, and
// KUBERNETES_EXEC_INFO telling it that no terminal is there (a plugin whose
// interactiveMode is Always is refused: skyslurmd has no terminal). A plugin
// that is not installed is an error carrying its installHint.
Result<ExecCredential> RunExecPlugin(const ExecPlugin& plugin, CommandRunner& runner,
                                     std::chrono::milliseconds timeout);

}  // namespace skyslurm::kube
