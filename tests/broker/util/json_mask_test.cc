#include "broker/util/json_mask.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace skyslurm {
namespace {

Json::Value Reference(std::string_view text) {
  Json::CharReaderBuilder b;
  std::unique_ptr<Json::CharReader> reader(b.newCharReader());
  Json::Value v;
  std::string errors;
  EXPECT_TRUE(reader->parse(text.data(), text.data() + text.size(), &v, &errors)) << errors;
  return v;
}

// Kept whole, the text parses to what jsoncpp's own reader makes of it, value
// kinds included (an int stays an int, a large unsigned a uint).
TEST(JsonMaskTest, KeptWholeItParsesAsJsoncppDoes) {
  for (
      const char* text : {
          R"({"a":1,"b":-2,"c":2147483648,"d":9223372036854775807,"e":18446744073709551615})",
          R"({"f":-9223372036854775808,"g":1.5,"h":-0.25e-3,"i":1E3,"j":0,"k":99999999999999999999})",
          R"({"s":"plain","t":"q\"uote\\back\/slash\b\f\n\r\t","u":"\u00e9\u4e2d\ud83d\ude00"})",
          R"([true,false,null,[],{},[[1],[2,{"x":[]}]],"",""])",
          " \n\t{ \"sp\" : [ 1 , 2 ] , \"e\" : { } } \r\n",
          R"("just a string")",
          "42",
      }) {
    auto got = ParseMasked(text, JsonMask::All());
    ASSERT_TRUE(got.ok()) << text << ": " << got.status().message();
    const Json::Value want = Reference(text);
    EXPECT_EQ(*got, want) << text;
    EXPECT_EQ(got->toStyledString(), want.toStyledString()) << text;
  }
}

constexpr const char* kPod = R"({
  "metadata": {"name": "p1", "namespace": "default", "uid": "u-1",
               "labels": {"app": "x", "skyslurm.io/sky-id": "sky-1"},
               "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {"f:containers": {}}}},
                                 {"manager": "kube-scheduler", "time": "2026-01-01T00:00:00Z"}],
               "annotations": {"note": "a \"quoted\" } brace ] and \\ backslash"}},
  "spec": {"nodeName": "n1", "volumes": [{"name": "v", "configMap": {"name": "c"}}],
           "containers": [{"name": "c0", "image": "ubuntu", "command": ["sh", "-c", "echo {[\"]}"],
                           "resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "4"}}},
                          {"name": "c1", "resources": {}}]},
  "status": {"phase": "Running", "hostIP": "10.0.0.1",
             "conditions": [{"type": "Ready", "status": "True"}]}
})";

TEST(JsonMaskTest, KeepsOnlyTheNamedMembersThroughArrays) {
  const JsonMask mask = JsonMask::Of({"metadata.name", "metadata.labels", "spec.nodeName",
                                      "spec.containers.resources", "status.phase",
                                      "status.conditions", "missing.member"});
  auto got = ParseMasked(kPod, mask);
  ASSERT_TRUE(got.ok()) << got.status().message();
  const Json::Value want = Reference(R"({
    "metadata": {"name": "p1", "labels": {"app": "x", "skyslurm.io/sky-id": "sky-1"}},
    "spec": {"nodeName": "n1",
             "containers": [{"resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "4"}}},
                            {"resources": {}}]},
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})");
  EXPECT_EQ(*got, want) << got->toStyledString();
  // The same selection from a parsed value (a watch event's object).
  EXPECT_EQ(Masked(Reference(kPod), mask), want);
}

TEST(JsonMaskTest, APathUnderOneKeptWholeAddsNothingAndWithReplacesAChild) {
  JsonMask mask = JsonMask::Of({"metadata", "metadata.name"});
  auto got = ParseMasked(kPod, mask);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["metadata"], Reference(kPod)["metadata"]);
  EXPECT_FALSE(got->isMember("spec"));

  mask.With("metadata", JsonMask::Of({"uid"}));
  got = ParseMasked(kPod, mask);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["metadata"], Reference(R"({"uid":"u-1"})"));
  // An empty mask keeps an object of no members.
  got = ParseMasked(kPod, JsonMask());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, Json::Value(Json::objectValue));
}

TEST(JsonMaskTest, BrokenTextIsAnErrorWithItsOffsetEvenWhereItIsSkipped) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {
           Case{R"({"keep":1,"drop":"unterminated})", "unterminated string"},
           Case{R"({"keep":1,"drop":{"a":[1,2}]})", "a bracket does not match"},
           Case{R"({"keep":1,"drop":{"a":[1,2])", "ends inside a value"},
           Case{R"({"keep":tru})", "unknown literal"},
           Case{R"({"keep":"\x"})", "bad escape"},
           Case{R"({"keep":"\ud800"})", "lone surrogate"},
           Case{R"({"keep":1} extra)", "text after the value"},
           Case{R"({"keep" 1})", "':' was expected"},
           Case{R"({"keep":1 "drop":2})", "',' or '}' was expected"},
           Case{R"({"keep":-})", "bad number"},
           Case{"", "a value was expected"},
       }) {
    auto got = ParseMasked(c.text, JsonMask::Of({"keep"}));
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_NE(got.status().message().find(c.says), std::string::npos)
        << c.text << " -> " << got.status().message();
    EXPECT_NE(got.status().message().find("at byte"), std::string::npos);
  }
}

TEST(JsonMaskTest, EscapedQuotesAndBackslashRunsAreSkippedRight) {
  // A skipped string ending in an escaped backslash, then one with an escaped
  // quote: the scanner must pair them as a parser would.
  const std::string text = R"({"drop":["a\\","b\"c\\\"d",{"e":"\\\\"}],"keep":"after"})";
  auto got = ParseMasked(text, JsonMask::Of({"keep"}));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["keep"].asString(), "after");
  EXPECT_FALSE(got->isMember("drop"));
}

TEST(JsonMaskTest, DeepNestingIsRefusedNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(ParseMasked(deep, JsonMask::All()).ok());
  const std::string skipped = "{\"drop\":" + deep + ",\"keep\":1}";
  EXPECT_FALSE(ParseMasked(skipped, JsonMask::Of({"keep"})).ok());
  const std::string fine = std::string(200, '[') + std::string(200, ']');
  EXPECT_TRUE(ParseMasked(fine, JsonMask::All()).ok());
}

// A list page as the API server sends it: only what the mask names of each
// item is built, and the page's metadata is read beside it.
TEST(JsonMaskTest, AListPageKeepsItsMetadataAndMaskedItems) {
  std::string page = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77",)"
                     R"("continue":"tok"},"items":[)";
  for (int i = 0; i < 3; ++i) page += std::string(i ? "," : "") + kPod;
  page += "]}";
  const JsonMask mask = JsonMask::Of({"metadata.resourceVersion", "metadata.continue"})
                            .With("items", JsonMask::Of({"metadata.name", "status.phase"}));
  auto got = ParseMasked(page, mask);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["metadata"]["continue"].asString(), "tok");
  EXPECT_EQ((*got)["metadata"]["resourceVersion"].asString(), "77");
  ASSERT_EQ((*got)["items"].size(), 3u);
  EXPECT_EQ((*got)["items"][2],
            Reference(R"({"metadata":{"name":"p1"},"status":{"phase":"Running"}})"));
  EXPECT_FALSE(got->isMember("kind"));
}

}  // namespace
}  // namespace skyslurm
