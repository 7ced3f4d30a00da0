#include "broker/kube/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "broker/util/base64.h"

namespace skyslurm::kube {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* const kConfig = R"(apiVersion: v1
kind: Config
current-context: kappa
clusters:
- name: kappa
  cluster:
    server: https://127.0.0.1:7310
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
- name: other
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: certs/ca.pem
contexts:
- name: kappa
  context: {cluster: kappa, user: kappa-admin, namespace: ml}
- name: by-files
  context: {cluster: other, user: with-cert}
- name: gke
  context: {cluster: kappa, user: gcp-old}
- name: lost
  context: {cluster: nowhere, user: kappa-admin}
users:
- name: kappa-admin
  user:
    token: s3cret
- name: with-cert
  user:
    client-certificate: certs/me.crt
    client-key: certs/me.key
- name: gcp-old
  user:
    auth-provider:
      name: gcp
)";

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("skyslurm-kubeconfig-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "certs");
    Write("certs/ca.pem", "CA PEM\n");
    Write("certs/me.crt", "CERT PEM\n");
    Write("certs/me.key", "KEY PEM\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(KubeconfigTest, TheCurrentContextWithTokenCaDataAndNamespace) {
  auto c = ParseKubeconfig(kConfig, "/home/alice/.kube/config", "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->context, "kappa");
  EXPECT_EQ(c->server, "https://127.0.0.1:7310");
  EXPECT_EQ(c->ca_pem, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(c->token, "s3cret");
  EXPECT_EQ(c->namespace_name, "ml");
  EXPECT_FALSE(c->exec.has_value());
}

TEST_F(KubeconfigTest, FilesAreRelativeToTheKubeconfig) {
  const std::string path = Write("config", kConfig);
  auto c = LoadContext({path}, "by-files");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->ca_pem, "CA PEM\n");
  EXPECT_EQ(c->client_cert_pem, "CERT PEM\n");
  EXPECT_EQ(c->client_key_pem, "KEY PEM\n");
  EXPECT_EQ(c->namespace_name, "default");
  EXPECT_EQ(c->source, path);
}

TEST_F(KubeconfigTest, ErrorsNameTheFileTheLineAndWhatIsMissing) {
  auto lost = ParseKubeconfig(kConfig, "cfg", "lost");
  ASSERT_FALSE(lost.ok());
  EXPECT_THAT(lost.status().message(),
              HasSubstr("cfg:21: context 'lost' names cluster 'nowhere', which no kubeconfig"));
  auto none = ParseKubeconfig(kConfig, "cfg", "delta");
  EXPECT_THAT(none.status().message(), HasSubstr("no context 'delta' in cfg"));
  auto gcp = ParseKubeconfig(kConfig, "cfg", "gke");
  EXPECT_THAT(gcp.status().message(), HasSubstr("'gcp' auth-provider, which kubectl dropped"));
  auto unreadable = ParseKubeconfig(kConfig, "/nonexistent/config", "by-files");
  EXPECT_THAT(unreadable.status().message(),
              HasSubstr("cannot read certificate-authority /nonexistent/certs/ca.pem"));
}

TEST_F(KubeconfigTest, SeveralFilesFirstDefinitionWins) {
  const std::string first = Write("a.yaml", R"(current-context: mine
contexts:
- name: mine
  context: {cluster: kappa, user: me}
users:
- name: me
  user: {token: from-a}
)");
  const std::string second = Write("b.yaml", kConfig);
  auto c = LoadContext({dir_ / "missing.yaml", first, second}, "");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->context, "mine");
  EXPECT_EQ(c->server, "https://127.0.0.1:7310");  // the cluster from b.yaml
  EXPECT_EQ(c->token, "from-a");
  EXPECT_THAT(KubeconfigFiles("/a::/b", "/home/u"), ElementsAre("/a", "/b"));
  EXPECT_THAT(KubeconfigFiles("", "/home/u"), ElementsAre("/home/u/.kube/config"));
}

TEST_F(KubeconfigTest, AnExecPluginRunsAsKubectlRunsIt) {
  const std::string plugin = Write("plugin.sh", R"(#!/bin/sh
case "$KUBERNETES_EXEC_INFO" in
  *'"interactive":false'*) ;;
  *) echo "no exec info" >&2; exit 3 ;;
esac
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
echo ' "status":{"token":"'"$TOKEN_PREFIX"'-'"$1"'","expirationTimestamp":"2026-12-02T01:48:28Z"}}'
)");
  ::chmod(plugin.c_str(), 0755);
  const std::string config = (dir_ / "config").string();
  std::string text = kConfig;
  text.replace(text.find("user: kappa-admin, namespace: ml"), 32, "user: plugged");
  auto ctx = ParseKubeconfig(text + R"(- name: plugged
  user:
    exec:
      command: ./plugin.sh
      args: [kappa]
      env: [{name: TOKEN_PREFIX, value: tok}]
      installHint: install plugin.sh
)",
                             config, "kappa");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  ASSERT_TRUE(ctx->exec.has_value());
  EXPECT_EQ(ctx->exec->command, (dir_ / "plugin.sh").string());
  LocalCommandRunner runner;
  auto credential = RunExecPlugin(*ctx->exec, runner, std::chrono::seconds(10));
  ASSERT_TRUE(credential.ok()) << credential.status().message();
  EXPECT_EQ(credential->token, "tok-kappa");
  EXPECT_EQ(credential->expires, 1796176108);

  ExecPlugin missing = *ctx->exec;
  missing.command = "/nonexistent/gke-gcloud-auth-plugin";
  auto not_there = RunExecPlugin(missing, runner, std::chrono::seconds(10));
  EXPECT_THAT(not_there.status().message(), HasSubstr("(install plugin.sh)"));
  ExecPlugin interactive = *ctx->exec;
  interactive.interactive_mode = "Always";
  EXPECT_THAT(RunExecPlugin(interactive, runner, std::chrono::seconds(10)).status().message(),
              HasSubstr("needs a terminal"));
}

TEST(ExecCredentialTest, ACertificateOrATokenAndNothingElse) {
  auto cert = ParseExecCredential(
      R"({"kind":"ExecCredential","status":{"clientCertificateData":"C","clientKeyData":"K"}})");
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(cert->client_cert_pem, "C");
  EXPECT_FALSE(cert->expires.has_value());
  EXPECT_FALSE(ParseExecCredential(R"({"kind":"ExecCredential","status":{}})").ok());
  EXPECT_FALSE(ParseExecCredential(R"({"kind":"Pod"})").ok());
  // Found by answers_fuzzer: a member of another type threw out of the
  // reader (jsoncpp's asString on an object); now it is as absent.
  EXPECT_FALSE(ParseExecCredential(R"({"kind":{"a":"b"}})").ok());
  EXPECT_FALSE(ParseExecCredential(R"({"kind":"ExecCredential","status":[1]})").ok());
  EXPECT_FALSE(ParseExecCredential(R"({"kind":"ExecCredential","status":{"token":{"x":1}}})").ok());
  EXPECT_FALSE(ParseExecCredential("token: x").ok());
}

}  // namespace
}  // namespace skyslurm::kube
