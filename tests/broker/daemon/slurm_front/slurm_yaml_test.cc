#include "broker/daemon/slurm_front/slurm_yaml.h"

#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

// squeue --json of 22.05 (a part of a job), and the YAML its --yaml prints
// for the same job (libyaml's layout; keys here in the JSON reader's order).
TEST(SlurmYamlTest, AJobDocumentIsWrittenAsSlurmsYamlPrintsIt) {
  const std::string json =
      R"({"jobs":[{"job_id":805306445,"account":"root","billable_tres":2.0,)"
      R"("array_task_id":null,"batch_flag":true,"flags":[],"show_flags":["SHOW_ALL","SHOW_DETAIL"],)"
      R"("job_resources":{"nodes":"alpha-n[1-2]","allocated_nodes":[)"
      R"({"nodename":"alpha-n1","sockets":{"0":{"cores":{"0":"allocated"}}}}]},)"
      R"("name":"a: b #c","comment":"it's \"q\"","priority":4294900702,"nice":-5}],)"
      R"("errors":[],"meta":{"plugin":{"type":"openapi/v0.0.38","name":"Slurm OpenAPI v0.0.38"},)"
      R"("Slurm":{"version":{"major":22,"micro":8,"minor":5},"release":"22.05.8"}}})";
  auto yaml = SlurmYamlFromJson(json, EmptyString::kNull);
  ASSERT_TRUE(yaml.ok()) << yaml.status().message();
  EXPECT_EQ(*yaml,
            "%YAML 1.1\n"
            "--- !!map\n"
            "!!str meta: !!map\n"
            "  !!str Slurm: !!map\n"
            "    !!str release: !!str 22.05.8\n"
            "    !!str version: !!map\n"
            "      !!str major: !!int 22\n"
            "      !!str micro: !!int 8\n"
            "      !!str minor: !!int 5\n"
            "  !!str plugin: !!map\n"
            "    !!str name: !!str Slurm OpenAPI v0.0.38\n"
            "    !!str type: !!str openapi/v0.0.38\n"
            "!!str errors: !!seq []\n"
            "!!str jobs: !!seq\n"
            "- !!map\n"
            "  !!str account: !!str root\n"
            "  !!str array_task_id: !!null null\n"
            "  !!str batch_flag: !!bool true\n"
            "  !!str billable_tres: !!float 2.000000\n"
            "  !!str comment: !!str it's \"q\"\n"
            "  !!str flags: !!seq []\n"
            "  !!str job_id: !!int 805306445\n"
            "  !!str job_resources: !!map\n"
            "    !!str allocated_nodes: !!seq\n"
            "    - !!map\n"
            "      !!str nodename: !!str alpha-n1\n"
            "      !!str sockets: !!map\n"
            "        !!str 0: !!map\n"
            "          !!str cores: !!map\n"
            "            !!str 0: !!str allocated\n"
            "    !!str nodes: !!str alpha-n[1-2]\n"
            "  !!str name: !!str 'a: b #c'\n"
            "  !!str nice: !!int -5\n"
            "  !!str priority: !!int 4294900702\n"
            "  !!str show_flags: !!seq\n"
            "  - !!str SHOW_ALL\n"
            "  - !!str SHOW_DETAIL\n"
            "...\n");
}

TEST(SlurmYamlTest, StringsYamlWouldMisreadAreQuoted) {
  auto yaml = SlurmYamlFromJson(
      R"({"a":"","b":" lead","c":"- x","d":"-x","e":"two\nlines","f":"#1","g":"it''s: x",)"
      R"("h":"---","i":"ends:"})",
      EmptyString::kNull);
  ASSERT_TRUE(yaml.ok());
  EXPECT_NE(yaml->find("!!str a: !!null null\n"), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("!!str b: !!str ' lead'\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str c: !!str '- x'\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str d: !!str -x\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str e: !!str \"two\\nlines\"\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str f: !!str '#1'\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str g: !!str 'it''''s: x'\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str h: !!str '---'\n"), std::string::npos);
  EXPECT_NE(yaml->find("!!str i: !!str 'ends:'\n"), std::string::npos);
}

// sacct's data holds empty strings ("constraints": ""), printed as a bare tag.
TEST(SlurmYamlTest, SacctsEmptyStringsAreABareTag) {
  EXPECT_EQ(*SlurmYamlFromJson(R"({"jobs":[{"constraints":""}]})", EmptyString::kEmpty),
            "%YAML 1.1\n--- !!map\n!!str jobs: !!seq\n- !!map\n  !!str constraints: !!str\n...\n");
}

TEST(SlurmYamlTest, WhatIsNotAJsonObjectIsRefused) {
  EXPECT_FALSE(SlurmYamlFromJson("[1]", EmptyString::kNull).ok());
  EXPECT_FALSE(SlurmYamlFromJson("{\"a\":", EmptyString::kNull).ok());
  EXPECT_EQ(*SlurmYamlFromJson("{}", EmptyString::kEmpty), "%YAML 1.1\n--- !!map {}\n...\n");
}

}  // namespace
}  // namespace skyslurm::daemon
