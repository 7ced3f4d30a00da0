#include "broker/daemon/jobs/job_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <json/json.h>

namespace skyslurm::daemon {
namespace {

TEST(JobInputTest, RoundTripsThroughTheStoredText) {
  JobInput in;
  in.args = {"--sky-managed", "-N", "2", "job.sh", "a b"};
  in.script = "#!/bin/sh\necho \"\xc3\xa9\"\n";
  in.env = {{"SBATCH_PARTITION", "gpu"}, {"X", "1=2"}};
  in.cwd = "/home/alice/run";
  auto back = JobInputFromText(JobInputText(in));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->tool, "sbatch");
  EXPECT_EQ(back->args, in.args);
  EXPECT_EQ(back->script, in.script);
  EXPECT_EQ(back->env, in.env);
  EXPECT_EQ(back->cwd, in.cwd);
  EXPECT_EQ(back->ToRequestInput().script_text, in.script);
  // Whether sbatch printed to a terminal: unknown in what earlier versions kept.
  EXPECT_FALSE(back->at_terminal.has_value());
  in.at_terminal = false;
  back = JobInputFromText(JobInputText(in));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->at_terminal, std::optional<bool>(false));
  // What messages call a script given as text (skyslurm launch's).
  in.args = {};
  in.stdin_name = "(task ft.yaml)";
  back = JobInputFromText(JobInputText(in));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->stdin_name, "(task ft.yaml)");
  EXPECT_EQ(back->ToRequestInput().stdin_name, "(task ft.yaml)");
}

TEST(JobInputTest, ErrorsNameTheField) {
  EXPECT_EQ(JobInputFromText("{").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[1],"cwd":"/"})").status().message(),
            "job input: 'args' must be a list of strings");
  EXPECT_EQ(JobInputFromText(R"({"tool":"qsub","args":[],"cwd":"/"})").status().message(),
            "job input: unknown tool 'qsub'");
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[]})").status().message(),
            "job input: 'cwd' must be a string");
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[],"cwd":"/","at_terminal":"yes"})")
                .status()
                .message(),
            "job input: 'at_terminal' must be true or false");
}

// A task's secrets: in clear on the wire (the daemon's own socket), sealed
// in the store's copy, opened again when it is read.
TEST(JobInputTest, SecretsAreKeptSealedNeverInClear) {
  JobInput in;
  in.args = {};
  in.script = "#!/bin/bash\necho hi\n";
  in.env = {{"HF_TOKEN", "hf_very_secret"}, {"PATH", "/bin"}, {"DB_PASSWORD", "pw_in_env"}};
  in.cwd = "/";
  in.secret_names = {"HF_TOKEN"};
  UseSecretSeal(nullptr);
  // Without a seal the value is not kept at all; reading it back says so.
  const std::string unsealed = JobInputText(in);
  EXPECT_THAT(unsealed, ::testing::Not(::testing::HasSubstr("hf_very_secret")));
  EXPECT_THAT(JobInputFromText(unsealed).status().message(),
              ::testing::HasSubstr("the job's secret HF_TOKEN was not kept"));
  auto seal = SecretSeal::FromKey(std::string(32, 's'));
  ASSERT_TRUE(seal.ok());
  UseSecretSeal(std::make_shared<const SecretSeal>(*seal));
  const std::string kept = JobInputText(in);
  // The whole environment is kept sealed: a secret, and any value of it.
  EXPECT_THAT(kept, ::testing::Not(::testing::HasSubstr("hf_very_secret")));
  EXPECT_THAT(kept, ::testing::Not(::testing::HasSubstr("pw_in_env")));
  EXPECT_THAT(kept, ::testing::Not(::testing::HasSubstr("PATH")));
  EXPECT_THAT(kept, ::testing::HasSubstr("\"env_sealed\":\"skyslurm-sealed:v1:"));
  auto back = JobInputFromText(kept);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->env.at("HF_TOKEN"), "hf_very_secret");
  EXPECT_EQ(back->env.at("DB_PASSWORD"), "pw_in_env");
  EXPECT_EQ(back->secret_names, in.secret_names);
  EXPECT_EQ(JobInputText(*back).find("hf_very_secret"), std::string::npos);  // kept again: sealed
  // Another user's key (a copied store): it does not open.
  UseSecretSeal(std::make_shared<const SecretSeal>(*SecretSeal::FromKey(std::string(32, 'x'))));
  EXPECT_THAT(JobInputFromText(kept).status().message(),
              ::testing::HasSubstr("the job's environment: a sealed secret does not open"));
  // A store kept before the environment was sealed (each secret sealed
  // alone) still reads.
  UseSecretSeal(std::make_shared<const SecretSeal>(*seal));
  const std::string older = R"({"tool":"sbatch","args":[],"cwd":"/","env":{"HF_TOKEN":")" +
                            *seal->Seal("hf_old") + R"("},"secrets":["HF_TOKEN"]})";
  auto old_back = JobInputFromText(older);
  ASSERT_TRUE(old_back.ok()) << old_back.status().message();
  EXPECT_EQ(old_back->env.at("HF_TOKEN"), "hf_old");
  UseSecretSeal(nullptr);
  // The wire form: names only of what env holds.
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[],"cwd":"/","secrets":["X"]})")
                .status()
                .message(),
            "job input: 'secrets' must name variables of 'env'");
}

}  // namespace
}  // namespace skyslurm::daemon
