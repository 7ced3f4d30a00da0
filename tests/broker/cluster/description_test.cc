#include "broker/cluster/description.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "broker/cluster/hostlist.h"

namespace skyslurm::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kData = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/clusters/";

std::string Read(const std::string& name) {
  std::ifstream in(kData + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HostlistTest, Expands) {
  EXPECT_THAT(*ExpandHostlist("beta-n[1-2]"), ElementsAre("beta-n1", "beta-n2"));
  EXPECT_THAT(*ExpandHostlist("n[01-03,7],login"), ElementsAre("n01", "n02", "n03", "n7", "login"));
  EXPECT_THAT(*ExpandHostlist("a[1-2]-ib"), ElementsAre("a1-ib", "a2-ib"));
  EXPECT_THAT(*ExpandHostlist(""), ElementsAre());
  for (const char* bad : {"n[1-", "n[3-1]", "n[a-b]", "n]", "n[1-2]]"}) {
    EXPECT_FALSE(ExpandHostlist(bad).ok()) << bad;
  }
  EXPECT_FALSE(ExpandHostlist("n[0-99999999]").ok());
}

TEST(NodeGresTest, Forms) {
  EXPECT_THAT(*ParseNodeGres("gpu:nvidia_h100_80gb_hbm3:4"),
              ElementsAre(Gres{"gpu", "nvidia_h100_80gb_hbm3", 4}));
  EXPECT_THAT(*ParseNodeGres("gpu:a100:4(S:0-1),nvme:1"),
              ElementsAre(Gres{"gpu", "a100", 4}, Gres{"nvme", "", 1}));
  EXPECT_TRUE(ParseNodeGres("(null)")->empty());
  EXPECT_TRUE(ParseNodeGres("")->empty());
  EXPECT_FALSE(ParseNodeGres("gpu:a100:x").ok());
}

// Captured from epsilon (Slurm 24.11) with `sinfo -N --json`: a record per
// node and partition, one busy node (3 GPUs, 5 CPUs, 3000 MB held).
TEST(SinfoJsonTest, Slurm2411sRecordsPerNode) {
  std::string version;
  auto nodes = ParseSinfoJson(Read("epsilon.sinfo-N.json"), &version);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ(version, "24.11.5");
  ASSERT_EQ(nodes->size(), 2u);
  const Node& n1 = (*nodes)[0];
  EXPECT_EQ(n1.name, "epsilon-n1");
  EXPECT_EQ(n1.cpus, 64);
  EXPECT_EQ(n1.memory_mb, 512000);
  EXPECT_THAT(n1.gres, ElementsAre(Gres{"gpu", "h200", 8}));
  EXPECT_THAT(n1.gres_used, ElementsAre(Gres{"gpu", "h200", 3}));
  EXPECT_EQ(n1.alloc_cpus, 5);
  EXPECT_EQ(n1.alloc_memory_mb, 3000);
  EXPECT_THAT(n1.features, ElementsAre("gpu", "h200"));
  EXPECT_THAT(n1.partitions, ElementsAre("accel", "short"));
  // Backfill had planned both nodes for the pending two-node job.
  EXPECT_EQ(n1.state, "mixed+PLANNED");
  EXPECT_TRUE(n1.usable());
  const Node& n2 = (*nodes)[1];
  EXPECT_EQ(n2.state, "idle+PLANNED");
  EXPECT_TRUE(n2.usable());
  EXPECT_EQ(n2.alloc_cpus, 0);
}

// Without -N, 24.11 groups nodes alike and sums what they hold: asked
// again per node rather than guessed.
TEST(SinfoJsonTest, Slurm2411sGroupsOfBusyNodesAreAskedAgainPerNode) {
  std::string grouped = Read("epsilon.sinfo-grouped.json");
  auto nodes = ParseSinfoJson(grouped, nullptr);
  if (nodes.ok()) {
    // A group of one node (the busy one) or of idle ones: read as they are.
    for (const Node& n : *nodes) EXPECT_THAT(n.name, ::testing::StartsWith("epsilon-n"));
  }
  const std::string two_busy =
      R"({"meta":{"slurm":{"release":"24.11.5"}},"errors":[],"sinfo":[{"nodes":{"nodes":["a","b"]},)"
      R"("cpus":{"allocated":4,"total":128},"memory":{"maximum":1000,"allocated":10},)"
      R"("gres":{"total":"gpu:h200:8","used":"gpu:h200:2"},"node":{"state":["MIXED"]}}]})";
  EXPECT_EQ(ParseSinfoJson(two_busy, nullptr).status().code(), StatusCode::kFailedPrecondition);
  const std::string drained =
      R"({"meta":{"slurm":{"release":"24.11.5"}},"errors":[],"sinfo":[{"nodes":{"nodes":["a"]},)"
      R"("cpus":{"allocated":0,"total":64},"memory":{"maximum":1000,"allocated":0},)"
      R"("gres":{"total":"","used":""},"node":{"state":["IDLE","DRAIN"]}}]})";
  auto one = ParseSinfoJson(drained, nullptr);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ((*one)[0].state, "idle+DRAIN");
  EXPECT_FALSE((*one)[0].usable());
  // Fuzzed shapes are errors, never exceptions.
  for (const char* odd :
       {R"({"sinfo":[5]})", R"({"sinfo":[{"nodes":5}]})", R"({"meta":7,"sinfo":[]})",
        R"({"meta":{"slurm":3},"sinfo":[]})",
        R"({"sinfo":[{"nodes":{"nodes":["a"]},"cpus":{"total":18446744073709551615}}]})",
        R"({"sinfo":[{"nodes":{"nodes":["a"]},"cpus":7,"memory":"x","node":[]}]})"}) {
    std::string version;
    EXPECT_NO_THROW((void)ParseSinfoJson(odd, &version)) << odd;
  }
  EXPECT_FALSE(ParseSinfoJson(R"({"sinfo":[{"nodes":{"nodes":"a"}}]})", nullptr).ok());
  EXPECT_FALSE(
      ParseSinfoJson(R"({"sinfo":[{"nodes":{"nodes":["a"]},"cpus":{"total":"x"}}]})", nullptr)
          .ok());
}

TEST(SinfoJsonTest, ReleasesCompare) {
  EXPECT_TRUE(ReleaseAtLeast("24.11.5", 23));
  EXPECT_TRUE(ReleaseAtLeast("slurm 25.05.0", 23));
  EXPECT_FALSE(ReleaseAtLeast("slurm-wlm 22.05.8", 23));
  EXPECT_FALSE(ReleaseAtLeast("", 23));
}

TEST(SinfoJsonTest, RealOutputOfTheTestbed) {
  std::string version;
  auto nodes = ParseSinfoJson(Read("beta.sinfo.json"), &version);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ(version, "22.05.8");
  ASSERT_EQ(nodes->size(), 2u);
  const Node& n = (*nodes)[0];
  EXPECT_EQ(n.name, "beta-n1");
  EXPECT_EQ(n.cpus, 64);
  EXPECT_EQ(n.memory_mb, 512000);
  EXPECT_THAT(n.gres, ElementsAre(Gres{"gpu", "nvidia_h100_80gb_hbm3", 4}));
  EXPECT_THAT(n.features, ElementsAre("gpu", "h100"));
  EXPECT_THAT(n.partitions, ElementsAre("h100-cluster", "debug"));
  EXPECT_EQ(n.address, "127.0.0.1");
}

// What a routed job's steps get instead of a name lookup or an RPC: the
// addresses of the nodes of its partitions, kept through a description file.
TEST(NodeAddressMapTest, ThePartitionsNodesWhoseAddressIsNotTheirName) {
  Description d;
  d.name = "t";
  d.partitions = {{.name = "gpu", .is_default = true, .nodes = {"g1", "g2"}},
                  {.name = "cpu", .nodes = {"c1", "g2"}}};
  d.nodes = {{.name = "g1", .address = "10.0.0.1"},
             {.name = "g2", .address = "10.0.0.2"},
             {.name = "c1", .address = "c1"}};
  d.BuildIndex();
  EXPECT_EQ(NodeAddressMap(d, {}), "g1=10.0.0.1;g2=10.0.0.2");
  EXPECT_EQ(NodeAddressMap(d, {"cpu"}), "g2=10.0.0.2");
  EXPECT_EQ(NodeAddressMap(d, {"cpu", "gpu"}), "g2=10.0.0.2;g1=10.0.0.1");
  EXPECT_EQ(NodeAddressMap(d, {}, 10), "");  // too long: the plugin gives names
  auto again = ParseDescriptionYaml(DescriptionToYaml(d), "d.yaml");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(NodeAddressMap(*again, {}), "g1=10.0.0.1;g2=10.0.0.2");
}

// The testbed's cloud (delta) while delta-n1 boots for a job: its other
// nodes powered down, two of them after an earlier power-up
// (NOT_RESPONDING). Powered-down and booting nodes are capacity after a
// boot, never usable now; a down one is neither.
TEST(SinfoJsonTest, AnElasticClustersNodesAreBootableNotUsable) {
  auto nodes = ParseSinfoJson(Read("delta.sinfo.json"), nullptr);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 4u);
  for (const Node& n : *nodes) {
    EXPECT_TRUE(n.cloud()) << n.name;
    EXPECT_FALSE(n.usable()) << n.name << " " << n.state;
    EXPECT_TRUE(n.bootable()) << n.name << " " << n.state;
  }
  EXPECT_EQ((*nodes)[0].state, "mixed+CLOUD+NOT_RESPONDING+POWERING_UP");
  EXPECT_EQ((*nodes)[1].state, "idle+CLOUD+POWERED_DOWN");

  Node up{.name = "delta-n1", .state = "idle+CLOUD"};
  EXPECT_TRUE(up.usable());
  EXPECT_FALSE(up.bootable());
  Node reclaimed{.name = "delta-n3", .state = "down+CLOUD+POWERED_DOWN"};
  EXPECT_FALSE(reclaimed.usable());
  EXPECT_FALSE(reclaimed.bootable());
  Node drained{.name = "delta-n4", .state = "idle+CLOUD+DRAIN+POWERED_DOWN"};
  EXPECT_FALSE(drained.bootable());
  Node on_premises{.name = "alpha-n1", .state = "idle"};
  EXPECT_FALSE(on_premises.bootable());
  EXPECT_FALSE(on_premises.cloud());
}

TEST(SinfoJsonTest, StrictAboutWhatItReads) {
  EXPECT_THAT(ParseSinfoJson("not json", nullptr).status().message(), HasSubstr("not JSON"));
  EXPECT_THAT(ParseSinfoJson("{}", nullptr).status().message(), HasSubstr("no 'nodes' list"));
  EXPECT_EQ(ParseSinfoJson(R"({"nodes":[{"name":"x","cpus":"many"}]})", nullptr).status().message(),
            "sinfo --json: node x: field 'cpus' is missing or has the wrong type");
  EXPECT_THAT(
      ParseSinfoJson(R"({"nodes":[],"errors":[{"error":"boom"}]})", nullptr).status().message(),
      HasSubstr("reported errors"));
}

TEST(ScontrolPartitionsTest, RealOutputOfTheTestbed) {
  auto parts = ParseScontrolPartitions(Read("beta.partitions.txt"));
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 2u);
  const Partition& h = (*parts)[0];
  EXPECT_EQ(h.name, "h100-cluster");
  EXPECT_TRUE(h.is_default);
  EXPECT_THAT(h.nodes, ElementsAre("beta-n1", "beta-n2"));
  EXPECT_EQ(h.max_time_minutes, 1440);
  EXPECT_EQ(h.default_time_minutes, 10);
  EXPECT_EQ(h.max_nodes, std::nullopt);
  EXPECT_TRUE(h.allow_accounts.empty());
  EXPECT_EQ((*parts)[1].max_time_minutes, 30);
  auto alpha = ParseScontrolPartitions(Read("alpha.partitions.txt"));
  ASSERT_TRUE(alpha.ok());
  EXPECT_THAT((*alpha)[1].nodes, ElementsAre("alpha-n3"));
}

TEST(ScontrolPartitionsTest, AccessListsAndStrictness) {
  auto parts = ParseScontrolPartitions(
      "PartitionName=p AllowAccounts=a,b DenyQos=slow MaxTime=UNLIMITED MaxNodes=4 State=DOWN\n");
  ASSERT_TRUE(parts.ok());
  EXPECT_THAT((*parts)[0].allow_accounts, ElementsAre("a", "b"));
  EXPECT_THAT((*parts)[0].deny_qos, ElementsAre("slow"));
  EXPECT_EQ((*parts)[0].max_time_minutes, std::nullopt);
  EXPECT_EQ((*parts)[0].max_nodes, 4);
  EXPECT_EQ((*parts)[0].state, "DOWN");
  EXPECT_THAT(ParseScontrolPartitions("PartitionName=p garbage\n").status().message(),
              HasSubstr("unexpected text 'garbage'"));
  EXPECT_THAT(ParseScontrolPartitions("Nodes=x\n").status().message(),
              HasSubstr("no PartitionName"));
  EXPECT_THAT(ParseScontrolPartitions("PartitionName=p MaxTime=soon\n").status().message(),
              HasSubstr("MaxTime"));
}

TEST(ModuleAvailTest, LmodTerseOutput) {
  EXPECT_THAT(ParseModuleAvail(Read("gamma.module-avail.txt")),
              ElementsAre("CUDA/12.2", "cuda-toolkit/12.4"));
  EXPECT_THAT(ParseModuleAvail("/opt/mods:\ngcc/\ngcc/12.2(default)\ngcc/13.1\npython/3.11 <aL>\n"),
              ElementsAre("gcc/12.2", "gcc/13.1", "python/3.11"));
}

// The testbed's `scontrol show config` (Slurm 22.05; MaxArraySize=10001).
TEST(ScontrolConfigTest, MaxArraySizeFromRealOutputOfTheTestbed) {
  EXPECT_EQ(ParseMaxArraySize(Read("alpha.scontrol-config.txt")), 10001);
  EXPECT_EQ(ParseMaxArraySize("MaxArraySize            = 1001\n"), 1001);
  EXPECT_EQ(ParseMaxArraySize("MaxArraySizeX = 5\nMaxJobCount = 10000\n"), std::nullopt);
  EXPECT_EQ(ParseMaxArraySize("MaxArraySize = many\n"), std::nullopt);
  EXPECT_EQ(ParseMaxArraySize(""), std::nullopt);
}

// A description file may give it; what it does not give is not known.
TEST(DescriptionYamlTest, MaxArraySizeRoundTrips) {
  auto d = ParseDescriptionYaml("name: x\nmax_array_size: 1001\n", "x.yaml");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->max_array_size, 1001);
  EXPECT_THAT(DescriptionToYaml(*d), HasSubstr("max_array_size: 1001\n"));
  EXPECT_FALSE(ParseDescriptionYaml("name: x\n", "x.yaml")->max_array_size.has_value());
}

TEST(DescriptionYamlTest, RoundTripsTheFixtures) {
  for (const char* name : {"alpha.yaml", "beta.yaml", "gamma.yaml"}) {
    auto d = ParseDescriptionYaml(Read(name), name);
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(DescriptionToYaml(*d), Read(name)) << name;
  }
}

TEST(DescriptionYamlTest, HostListsAndTheirPartitions) {
  auto d = ParseDescriptionYaml(
      "name: x\npartitions:\n  - {name: p, default: true, nodes: 'n[1-3]', max_time: '1:00:00'}\n"
      "nodes:\n  - {name: 'n[1-3]', cpus: 8, memory_mb: 1000, gres: 'gpu:l4:2'}\n",
      "x.yaml");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->nodes.size(), 3u);
  EXPECT_THAT(d->nodes[2].partitions, ElementsAre("p"));
  EXPECT_EQ(d->DefaultPartition()->max_time_minutes, 60);
  EXPECT_EQ(d->NodesOf(*d->DefaultPartition()).size(), 3u);
  EXPECT_FALSE(d->modules_known);
}

TEST(DescriptionYamlTest, ErrorsNameTheLine) {
  EXPECT_EQ(ParseDescriptionYaml("name: x\ncolor: red\n", "x.yaml").status().message(),
            "x.yaml:2: unknown key 'color'");
  EXPECT_THAT(ParseDescriptionYaml("name: x\npartitions:\n  - {name: p, nodes: n1}\n", "x.yaml")
                  .status()
                  .message(),
              HasSubstr("partition p names node n1, which is not described"));
  EXPECT_THAT(ParseDescriptionYaml("partitions: []\n", "x.yaml").status().message(),
              HasSubstr("needs a name"));
}

}  // namespace
}  // namespace skyslurm::cluster
