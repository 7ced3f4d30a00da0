#include "broker/job/script.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace skyslurm::job {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Words(const std::vector<ModuleUse>& uses) {
  std::vector<std::string> out;
  for (const auto& u : uses) out.push_back(std::to_string(u.line) + ":" + u.verb + ":" + u.word);
  return out;
}

TEST(ModuleLoadsTest, EverySpellingOfALoad) {
  const std::string script =
      "#!/bin/bash\n"                                  // 1
      "#SBATCH --gres=gpu:h100:1\n"                    // 2
      "module load cuda/12.1\n"                        // 3
      "module add openmpi/4.1 python\n"                // 4
      "ml gcc/12.2\n"                                  // 5
      "ml load nccl/2.18\n"                            // 6
      "module swap cuda/12.1 cuda/12.4\n"              // 7
      "module switch cudnn\n"                          // 8
      "module unload gcc\n"                            // 9
      "ml -gcc\n"                                      // 10
      "module --force load \"cuda/12.4\"\n"            // 11
      "if true; then module load x/1; fi && ml y/2\n"  // 12
      "echo module load not/this # module load nor/this\n"  // 13
      "module purge; module list\n"                    // 14
      "  module load indented/1.0\n";                  // 15
  EXPECT_THAT(Words(FindModuleLoads(script, 3)),
              ::testing::ElementsAre("3:load:cuda/12.1", "4:add:openmpi/4.1", "4:add:python",
                                     "5:ml:gcc/12.2", "6:load:nccl/2.18", "7:swap:cuda/12.4",
                                     "8:switch:cudnn", "11:load:cuda/12.4", "12:load:x/1",
                                     "12:ml:y/2", "15:load:indented/1.0"));
}

TEST(ModuleLoadsTest, OffsetsPointAtTheWordAsWritten) {
  const std::string script = "#!/bin/bash\nmodule load  cuda/12.1 'cudnn/8.9'\n";
  auto uses = FindModuleLoads(script);
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(script.substr(uses[0].offset, uses[0].length), "cuda/12.1");
  EXPECT_EQ(uses[0].name, "cuda");
  EXPECT_EQ(uses[0].version, "12.1");
  EXPECT_EQ(script.substr(uses[1].offset, uses[1].length), "'cudnn/8.9'");
  EXPECT_EQ(uses[1].word, "cudnn/8.9");
}

TEST(ModuleLoadsTest, VariablesCannotBeResolvedAhead) {
  auto uses = FindModuleLoads("#!/bin/bash\nmodule load $CUDA_MODULE cuda/*\n");
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_TRUE(uses[0].dynamic);
  EXPECT_TRUE(uses[1].dynamic);
}

TEST(ScriptCheckTest, WhatSbatchRefuses) {
  EXPECT_TRUE(CheckScriptText("#!/bin/bash\necho\n", "j.sh").ok());
  EXPECT_THAT(CheckScriptText("", "j.sh").message(), HasSubstr("empty"));
  EXPECT_THAT(CheckScriptText("echo hi\n", "j.sh").message(),
              HasSubstr("j.sh:1: this does not look like a batch script"));
  EXPECT_THAT(CheckScriptText("#!/bin/sh\r\necho\r\n", "j.sh").message(), HasSubstr("DOS"));
  EXPECT_THAT(CheckScriptText(std::string("#!/bin/sh\n\0\x01", 12), "a.out").message(),
              HasSubstr("not a text file"));
}

TEST(ScriptCheckTest, MissingFile) {
  auto r = ReadScriptFile("/nonexistent/job.sh");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/job.sh: cannot open the batch script"));
}

TEST(ScriptCheckTest, ReadsAFile) {
  const auto path = std::filesystem::temp_directory_path() / "skyslurm-script-test.sh";
  std::ofstream(path) << "#!/bin/bash\n#SBATCH -N1\nhostname\n";
  auto r = ReadScriptFile(path.string());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "#!/bin/bash\n#SBATCH -N1\nhostname\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace skyslurm::job
