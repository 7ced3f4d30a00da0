#include "broker/cluster/description.h"

#include <fmt/format.h>
#include <json/json.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "broker/cluster/hostlist.h"
#include "broker/job/values.h"
#include "broker/util/json_read.h"
#include "broker/util/strings.h"

namespace skyslurm::cluster {
namespace {

Result<std::optional<std::int64_t>> MinutesOrUnlimited(std::string_view value,
                                                       std::string_view what) {
  if (value == "UNLIMITED" || value == "NONE" || value == "INFINITE") {
    return std::optional<std::int64_t>{};
  }
  auto t = job::ParseTimeLimit(value);
  if (!t.ok()) return InvalidArgumentError(fmt::format("{}: {}", what, t.status().message()));
  return t->minutes;
}

// ALL or a comma list; ALL is empty (no restriction).
std::vector<std::string> AccessList(std::string_view value) {
  if (value == "ALL" || value.empty() || value == "(null)") return {};
  return SplitList(value);
}

}  // namespace

bool Node::usable() const {
  if (state.empty()) return true;  // a description file: assume so
  for (std::string_view bad :
       {"down", "drain", "DRAIN", "fail", "FAIL", "POWER", "NOT_RESPONDING", "maint", "MAINT",
        "future", "unknown", "inval", "reboot", "REBOOT"}) {
    if (state.find(bad) != std::string::npos) return false;
  }
  return true;
}

bool Node::bootable() const {
  bool power_saved = false;
  for (std::string_view flag : {"+POWERED_DOWN", "+POWERING_UP", "+POWERING_DOWN", "+POWER_DOWN"}) {
    power_saved = power_saved || state.find(flag) != std::string::npos;
  }
  if (!power_saved) return false;
  // Its own state (before the flags) and the flags that keep it out whether
  // powered or not.
  const std::string_view base = std::string_view(state).substr(0, state.find('+'));
  if (base == "down" || base == "future" || base == "unknown") return false;
  for (std::string_view bad : {"DRAIN", "FAIL", "MAINT", "+REBOOT"}) {
    if (state.find(bad) != std::string::npos) return false;
  }
  return true;
}

bool Node::cloud() const { return state.find("+CLOUD") != std::string::npos; }

const Partition* Description::FindPartition(std::string_view n) const {
  for (const auto& p : partitions) {
    if (p.name == n) return &p;
  }
  return nullptr;
}

const Partition* Description::DefaultPartition() const {
  for (const auto& p : partitions) {
    if (p.is_default) return &p;
  }
  return nullptr;
}

const Node* Description::FindNode(std::string_view n) const {
  if (indexed_nodes_ == nodes.size() && !nodes.empty()) {
    auto it = node_index_.find(std::string(n));
    if (it != node_index_.end() && it->second < nodes.size() && nodes[it->second].name == n) {
      return &nodes[it->second];
    }
    // The index is stale (nodes changed since): fall back to a scan.
  }
  for (const auto& node : nodes) {
    if (node.name == n) return &node;
  }
  return nullptr;
}

void Description::BuildIndex() {
  node_index_.clear();
  node_index_.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) node_index_.emplace(nodes[i].name, i);
  indexed_nodes_ = nodes.size();
  shapes_.clear();
  for (const auto& p : partitions) shapes_[p.name] = ComputeShapes(p);
  indexed_partitions_ = partitions.size();
}

std::vector<NodeShape> Description::ComputeShapes(const Partition& partition) const {
  std::vector<NodeShape> shapes;
  for (const Node* n : NodesOf(partition)) {
    std::vector<std::string> features = n->features;
    std::sort(features.begin(), features.end());
    const bool usable = n->usable();
    auto same = [&](const NodeShape& s) {
      return s.cpus == n->cpus && s.memory_mb == n->memory_mb && s.gres == n->gres &&
             s.features == features && s.usable == usable;
    };
    auto it = std::find_if(shapes.begin(), shapes.end(), same);
    if (it == shapes.end()) {
      shapes.push_back({n->cpus, n->memory_mb, n->gres, std::move(features), usable, 1});
    } else {
      ++it->count;
    }
  }
  return shapes;
}

std::vector<NodeShape> Description::ShapesOf(const Partition& partition) const {
  if (indexed_nodes_ == nodes.size() && indexed_partitions_ == partitions.size()) {
    if (auto it = shapes_.find(partition.name); it != shapes_.end()) return it->second;
  }
  return ComputeShapes(partition);
}

std::vector<const Node*> Description::NodesOf(const Partition& partition) const {
  std::vector<const Node*> out;
  for (const auto& n : partition.nodes) {
    if (const Node* node = FindNode(n)) out.push_back(node);
  }
  return out;
}

Result<std::vector<Gres>> ParseNodeGres(std::string_view text) {
  std::vector<Gres> out;
  if (text.empty() || text == "(null)" || text == "N/A") return out;
  // Split at commas outside parentheses ("gpu:a100:4(S:0-1),nvme:1").
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  items.push_back(current);
  for (std::string item : items) {
    if (auto paren = item.find('('); paren != std::string::npos) item.erase(paren);
    auto parsed = job::ParseGresList(item);
    if (!parsed.ok()) {
      return InvalidArgumentError(
          fmt::format("node GRES '{}': {}", text, parsed.status().message()));
    }
    for (const auto& g : *parsed) out.push_back({g.name, g.type, g.count});
  }
  return out;
}

namespace {

// 23.02 on (data_parser v0.0.39+): a record per node and partition with
// `sinfo -N --json` (without -N, nodes alike are grouped and what each holds
// is lost: FailedPrecondition, and the caller asks again with -N).
// The value at `path` in nested objects, or null when any step is missing
// or not an object (indexing other JSON throws in jsoncpp).
const Json::Value& At(const Json::Value& v, std::initializer_list<const char*> path) {
  static const Json::Value kNull;
  const Json::Value* at = &v;
  for (const char* name : path) {
    if (!at->isObject() || !at->isMember(name)) return kNull;
    at = &(*at)[name];
  }
  return *at;
}

std::int64_t CountAt(const Json::Value& r, std::initializer_list<const char*> path) {
  const Json::Value& v = At(r, path);
  return v.isInt64() ? v.asInt64() : 0;
}

Result<std::vector<Node>> ParseSinfoRecords(const Json::Value& records) {
  std::vector<Node> nodes;
  std::map<std::string, std::size_t> index_of;
  Json::ArrayIndex index = 0;
  for (const Json::Value& r : records) {
    const std::string label = fmt::format("record {}", index++);
    auto bad = [&](const char* field) {
      return InvalidArgumentError(fmt::format(
          "sinfo --json: {}: field '{}' is missing or has the wrong type", label, field));
    };
    const Json::Value& names = At(r, {"nodes", "nodes"});
    if (!names.isArray() || names.empty()) return bad("nodes.nodes");
    const bool holds_something =
        CountAt(r, {"cpus", "allocated"}) > 0 || CountAt(r, {"memory", "allocated"}) > 0;
    if (names.size() > 1 && holds_something) {
      return FailedPreconditionError(
          "sinfo --json groups nodes alike (Slurm 23.02 and later): what each holds needs "
          "sinfo -N --json");
    }
    if (!At(r, {"cpus", "total"}).isInt64()) return bad("cpus.total");
    if (!At(r, {"memory", "maximum"}).isInt64()) return bad("memory.maximum");
    if (!At(r, {"gres", "total"}).isString()) return bad("gres.total");
    const Json::Value& states = At(r, {"node", "state"});
    if (!states.isArray() || states.empty()) return bad("node.state");
    const Json::Value& partition_name = At(r, {"partition", "name"});
    const std::string partition = partition_name.isString() ? partition_name.asString() : "";
    const Json::Value& addresses = At(r, {"nodes", "addresses"});
    for (Json::ArrayIndex k = 0; k < names.size(); ++k) {
      const Json::Value& name = names[k];
      if (!name.isString()) return bad("nodes.nodes[]");
      auto [it, fresh] = index_of.emplace(name.asString(), nodes.size());
      if (!fresh) {
        if (!partition.empty()) nodes[it->second].partitions.push_back(partition);
        continue;
      }
      Node node;
      node.name = name.asString();
      const std::string where = fmt::format("sinfo --json: node {}", node.name);
      // cpus.total counts the record's nodes: one each.
      node.cpus = CountAt(r, {"cpus", "total"}) / static_cast<std::int64_t>(names.size());
      node.memory_mb = CountAt(r, {"memory", "maximum"});
      auto gres = ParseNodeGres(At(r, {"gres", "total"}).asString());
      if (!gres.ok()) return gres.status().WithContext(where);
      node.gres = *gres;
      if (const Json::Value& used = At(r, {"gres", "used"}); used.isString()) {
        auto parsed = ParseNodeGres(used.asString());
        if (!parsed.ok()) return parsed.status().WithContext(where);
        node.gres_used = *parsed;
      }
      if (const Json::Value& f = At(r, {"features", "total"}); f.isString()) {
        node.features = SplitList(f.asString());
      }
      if (!partition.empty()) node.partitions.push_back(partition);
      // ["IDLE", "DRAIN"] as 22.05 spelled it: "idle+DRAIN".
      for (const Json::Value& st : states) {
        if (!st.isString()) return bad("node.state[]");
        node.state += node.state.empty() ? Lower(st.asString()) : "+" + st.asString();
      }
      if (names.size() == 1) {
        node.alloc_cpus = CountAt(r, {"cpus", "allocated"});
        node.alloc_memory_mb = CountAt(r, {"memory", "allocated"});
      }
      if (addresses.isArray() && addresses.size() == names.size() && addresses[k].isString()) {
        node.address = addresses[k].asString();
      }
      nodes.push_back(std::move(node));
    }
  }
  return nodes;
}

}  // namespace

bool ReleaseAtLeast(std::string_view release, int major) {
  const auto digit = release.find_first_of("0123456789");
  if (digit == std::string_view::npos) return false;
  int found = 0;
  const auto [p, ec] =
      std::from_chars(release.data() + digit, release.data() + release.size(), found);
  return ec == std::errc() && found >= major;
}

Result<std::vector<Node>> ParseSinfoJson(std::string_view json, std::string* slurm_version) {
  Json::Value root;
  std::string errors;
  if (!ReadJson(json, &root, &errors, /*strict_root=*/true)) {
    return InvalidArgumentError(
        fmt::format("sinfo --json printed something that is not JSON: {}", Trim(errors)));
  }
  const bool records = root.isObject() && root["sinfo"].isArray();
  if (!root.isObject() || (!root["nodes"].isArray() && !records)) {
    return InvalidArgumentError("sinfo --json: no 'nodes' list in its output");
  }
  if (slurm_version != nullptr) {
    // 22.05: meta.Slurm; 23.02 on: meta.slurm.
    const Json::Value& later = At(root, {"meta", "slurm", "release"});
    const Json::Value& release = later.isString() ? later : At(root, {"meta", "Slurm", "release"});
    *slurm_version = release.isString() ? release.asString() : "";
  }
  if (root["errors"].isArray() && !root["errors"].empty()) {
    return InvalidArgumentError(
        fmt::format("sinfo --json reported errors: {}", Trim(root["errors"].toStyledString())));
  }
  if (records) return ParseSinfoRecords(root["sinfo"]);
  std::vector<Node> nodes;
  Json::ArrayIndex index = 0;
  for (const Json::Value& n : root["nodes"]) {
    const std::string label =
        n["name"].isString() ? n["name"].asString() : fmt::format("#{}", index);
    ++index;
    auto need = [&](const char* field, bool ok) -> Status {
      if (ok) return OkStatus();
      return InvalidArgumentError(fmt::format(
          "sinfo --json: node {}: field '{}' is missing or has the wrong type", label, field));
    };
    SKY_RETURN_IF_ERROR(need("name", n["name"].isString()));
    SKY_RETURN_IF_ERROR(need("cpus", n["cpus"].isIntegral()));
    SKY_RETURN_IF_ERROR(need("real_memory", n["real_memory"].isIntegral()));
    SKY_RETURN_IF_ERROR(need("gres", n["gres"].isString()));
    SKY_RETURN_IF_ERROR(need("features", n["features"].isString()));
    SKY_RETURN_IF_ERROR(need("partitions", n["partitions"].isArray()));
    SKY_RETURN_IF_ERROR(need("state", n["state"].isString()));
    Node node;
    node.name = n["name"].asString();
    if (n["address"].isString()) node.address = n["address"].asString();
    node.cpus = n["cpus"].asInt64();
    node.memory_mb = n["real_memory"].asInt64();
    auto gres = ParseNodeGres(n["gres"].asString());
    if (!gres.ok()) return gres.status().WithContext(fmt::format("sinfo --json: node {}", label));
    node.gres = *gres;
    node.features = SplitList(n["features"].asString());
    for (const auto& p : n["partitions"]) {
      SKY_RETURN_IF_ERROR(need("partitions[]", p.isString()));
      node.partitions.push_back(p.asString());
    }
    node.state = n["state"].asString();
    if (n["gres_used"].isString()) {
      auto used = ParseNodeGres(n["gres_used"].asString());
      if (!used.ok()) return used.status().WithContext(fmt::format("sinfo --json: node {}", label));
      node.gres_used = *used;
    }
    if (n["alloc_cpus"].isIntegral()) node.alloc_cpus = n["alloc_cpus"].asInt64();
    if (n["alloc_memory"].isIntegral()) node.alloc_memory_mb = n["alloc_memory"].asInt64();
    // Flags such as DRAIN or POWERED_DOWN make an idle node unusable.
    if (n["state_flags"].isArray()) {
      for (const auto& f : n["state_flags"]) {
        if (f.isString()) node.state += "+" + f.asString();
      }
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::string NodeAddressMap(const Description& description,
                           const std::vector<std::string>& partitions, std::size_t max_bytes) {
  std::vector<const Partition*> chosen;
  for (const std::string& name : partitions) {
    if (const Partition* p = description.FindPartition(name)) chosen.push_back(p);
  }
  if (partitions.empty()) {
    if (const Partition* p = description.DefaultPartition()) chosen.push_back(p);
  }
  std::string map;
  std::set<std::string_view> listed;
  for (const Partition* p : chosen) {
    for (const Node* node : description.NodesOf(*p)) {
      if (node->address.empty() || node->address == node->name) continue;
      if (!listed.insert(node->name).second) continue;
      map.append(map.empty() ? "" : ";").append(node->name).append("=").append(node->address);
      if (map.size() > max_bytes) return "";
    }
  }
  return map;
}

Result<std::vector<Partition>> ParseScontrolPartitions(std::string_view text) {
  std::vector<Partition> partitions;
  std::size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    std::map<std::string, std::string> kv;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos || eq == 0) {
        return InvalidArgumentError(fmt::format(
            "scontrol show partition, line {}: unexpected text '{}' in: {}", line_no, word, line));
      }
      kv[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (!kv.contains("PartitionName")) {
      return InvalidArgumentError(
          fmt::format("scontrol show partition, line {}: no PartitionName in: {}", line_no, line));
    }
    Partition p;
    p.name = kv["PartitionName"];
    auto context = [&](const Status& s) {
      return s.WithContext(fmt::format("scontrol show partition {}", p.name));
    };
    p.is_default = kv["Default"] == "YES";
    if (kv.contains("Nodes") && kv["Nodes"] != "(null)") {
      auto nodes = ExpandHostlist(kv["Nodes"]);
      if (!nodes.ok()) return context(nodes.status());
      p.nodes = *nodes;
    }
    if (kv.contains("MaxTime")) {
      auto t = MinutesOrUnlimited(kv["MaxTime"], "MaxTime");
      if (!t.ok()) return context(t.status());
      p.max_time_minutes = *t;
    }
    if (kv.contains("DefaultTime")) {
      auto t = MinutesOrUnlimited(kv["DefaultTime"], "DefaultTime");
      if (!t.ok()) return context(t.status());
      p.default_time_minutes = *t;
    }
    if (kv.contains("MaxNodes") && kv["MaxNodes"] != "UNLIMITED") {
      try {
        p.max_nodes = std::stoll(kv["MaxNodes"]);
      } catch (const std::exception&) {
        return context(InvalidArgumentError(fmt::format("MaxNodes '{}'", kv["MaxNodes"])));
      }
    }
    p.allow_accounts = AccessList(kv["AllowAccounts"]);
    p.deny_accounts = AccessList(kv["DenyAccounts"]);
    p.allow_qos = AccessList(kv["AllowQos"]);
    p.deny_qos = AccessList(kv["DenyQos"]);
    p.state = kv.contains("State") ? kv["State"] : "UP";
    p.hidden = kv.contains("Hidden") && kv["Hidden"] == "YES";
    p.exclusive = kv.contains("OverSubscribe") && kv["OverSubscribe"] == "EXCLUSIVE";
    partitions.push_back(std::move(p));
  }
  return partitions;
}

std::optional<std::int64_t> ParseMaxArraySize(std::string_view text) {
  // "MaxArraySize            = 1001", one key a line.
  for (const std::string& line : SplitList(text, '\n')) {
    const auto eq = line.find('=');
    if (eq == std::string::npos || Trim(line.substr(0, eq)) != "MaxArraySize") continue;
    const std::string value = Trim(line.substr(eq + 1));
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 0) return std::nullopt;
    return n;
  }
  return std::nullopt;
}

std::vector<std::string> ParseModuleAvail(std::string_view text) {
  std::vector<std::string> modules;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line = Trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.back() == ':' || line.back() == '/') continue;
    // Markers Lmod and Tcl modules add: "(default)", "(D)", "<aL>".
    for (const char* marker : {"(default)", "(D)", "(L)", "<aL>", "<L>"}) {
      if (auto pos = line.find(marker); pos != std::string::npos) line.erase(pos);
    }
    line = Trim(line);
    if (line.empty() || line.find(' ') != std::string::npos) continue;
    if (std::find(modules.begin(), modules.end(), line) == modules.end()) {
      modules.push_back(line);
    }
  }
  return modules;
}

Result<Description> ParseDescriptionYaml(std::string_view yaml, std::string_view file) {
  auto bad = [&](const YAML::Node& n, const std::string& what) {
    return InvalidArgumentError(fmt::format("{}:{}: {}", file, n.Mark().line + 1, what));
  };
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        fmt::format("{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap())
    return InvalidArgumentError(fmt::format("{}: not a cluster description", file));
  Description d;
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      if (key == "name") {
        d.name = v.as<std::string>();
      } else if (key == "slurm_version") {
        d.slurm_version = v.as<std::string>();
      } else if (key == "max_array_size") {
        d.max_array_size = v.as<std::int64_t>();
      } else if (key == "modules") {
        d.modules_known = true;
        for (const auto& m : v) d.modules.push_back(m.as<std::string>());
      } else if (key == "nodes") {
        for (const auto& n : v) {
          Node proto;
          std::string names;
          for (const auto& f : n) {
            const std::string k = f.first.Scalar();
            if (k == "name") {
              names = f.second.as<std::string>();
            } else if (k == "cpus") {
              proto.cpus = f.second.as<std::int64_t>();
            } else if (k == "memory_mb") {
              proto.memory_mb = f.second.as<std::int64_t>();
            } else if (k == "gres") {
              auto gres = ParseNodeGres(f.second.as<std::string>());
              if (!gres.ok()) return bad(f.second, gres.status().message());
              proto.gres = *gres;
            } else if (k == "features") {
              proto.features = SplitList(f.second.as<std::string>());
            } else if (k == "state") {
              proto.state = f.second.as<std::string>();
            } else if (k == "address") {
              proto.address = f.second.as<std::string>();
            } else {
              return bad(f.first, fmt::format("unknown node key '{}'", k));
            }
          }
          auto expanded = ExpandHostlist(names);
          if (!expanded.ok() || expanded->empty()) return bad(n, "a node needs a name");
          for (const auto& name : *expanded) {
            Node node = proto;
            node.name = name;
            d.nodes.push_back(std::move(node));
          }
        }
      } else if (key == "partitions") {
        for (const auto& p : v) {
          Partition part;
          for (const auto& f : p) {
            const std::string k = f.first.Scalar();
            const YAML::Node& fv = f.second;
            if (k == "name") {
              part.name = fv.as<std::string>();
            } else if (k == "default") {
              part.is_default = fv.as<bool>();
            } else if (k == "nodes") {
              auto nodes = ExpandHostlist(fv.as<std::string>());
              if (!nodes.ok()) return bad(fv, nodes.status().message());
              part.nodes = *nodes;
            } else if (k == "max_time" || k == "default_time") {
              auto t = MinutesOrUnlimited(fv.as<std::string>(), k);
              if (!t.ok()) return bad(fv, t.status().message());
              (k == "max_time" ? part.max_time_minutes : part.default_time_minutes) = *t;
            } else if (k == "max_nodes") {
              part.max_nodes = fv.as<std::int64_t>();
            } else if (k == "allow_accounts") {
              part.allow_accounts = AccessList(fv.as<std::string>());
            } else if (k == "deny_accounts") {
              part.deny_accounts = AccessList(fv.as<std::string>());
            } else if (k == "allow_qos") {
              part.allow_qos = AccessList(fv.as<std::string>());
            } else if (k == "deny_qos") {
              part.deny_qos = AccessList(fv.as<std::string>());
            } else if (k == "state") {
              part.state = fv.as<std::string>();
            } else if (k == "hidden") {
              part.hidden = fv.as<bool>();
            } else if (k == "exclusive") {
              part.exclusive = fv.as<bool>();
            } else {
              return bad(f.first, fmt::format("unknown partition key '{}'", k));
            }
          }
          if (part.name.empty()) return bad(p, "a partition needs a name");
          d.partitions.push_back(std::move(part));
        }
      } else {
        return bad(kv.first, fmt::format("unknown key '{}'", key));
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{}:{}: {}", file, e.mark.line + 1, e.msg));
  }
  if (d.name.empty())
    return InvalidArgumentError(fmt::format("{}: the description needs a name", file));
  d.BuildIndex();
  // Nodes learn their partitions from the partitions' node lists.
  for (auto& node : d.nodes) {
    for (const auto& p : d.partitions) {
      if (std::find(p.nodes.begin(), p.nodes.end(), node.name) != p.nodes.end()) {
        node.partitions.push_back(p.name);
      }
    }
  }
  for (const auto& p : d.partitions) {
    for (const auto& n : p.nodes) {
      if (d.FindNode(n) == nullptr) {
        return InvalidArgumentError(
            fmt::format("{}: partition {} names node {}, which is not described", file, p.name, n));
      }
    }
  }
  return d;
}

Result<Description> ReadDescriptionFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(fmt::format("{}: cannot read the cluster description", path));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseDescriptionYaml(text.str(), path);
}

std::string DescriptionToYaml(const Description& d) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << d.name;
  if (!d.slurm_version.empty())
    out << YAML::Key << "slurm_version" << YAML::Value << d.slurm_version;
  out << YAML::Key << "partitions" << YAML::Value << YAML::BeginSeq;
  auto time = [](const std::optional<std::int64_t>& m) {
    return m ? job::FormatTimeLimit(job::TimeLimit{m}) : std::string("UNLIMITED");
  };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return s.empty() ? std::string("ALL") : s;
  };
  for (const auto& p : d.partitions) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name;
    if (p.is_default) out << YAML::Key << "default" << YAML::Value << true;
    std::string nodes;
    for (const auto& n : p.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    out << YAML::Key << "nodes" << YAML::Value << nodes;
    out << YAML::Key << "max_time" << YAML::Value << time(p.max_time_minutes);
    if (p.default_time_minutes) {
      out << YAML::Key << "default_time" << YAML::Value << time(p.default_time_minutes);
    }
    if (p.max_nodes) out << YAML::Key << "max_nodes" << YAML::Value << *p.max_nodes;
    if (!p.allow_accounts.empty())
      out << YAML::Key << "allow_accounts" << YAML::Value << join(p.allow_accounts);
    if (!p.deny_accounts.empty())
      out << YAML::Key << "deny_accounts" << YAML::Value << join(p.deny_accounts);
    if (!p.allow_qos.empty()) out << YAML::Key << "allow_qos" << YAML::Value << join(p.allow_qos);
    if (!p.deny_qos.empty()) out << YAML::Key << "deny_qos" << YAML::Value << join(p.deny_qos);
    if (p.state != "UP") out << YAML::Key << "state" << YAML::Value << p.state;
    if (p.hidden) out << YAML::Key << "hidden" << YAML::Value << true;
    if (p.exclusive) out << YAML::Key << "exclusive" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const auto& n : d.nodes) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name;
    if (!n.address.empty()) out << YAML::Key << "address" << YAML::Value << n.address;
    out << YAML::Key << "cpus" << YAML::Value << n.cpus;
    out << YAML::Key << "memory_mb" << YAML::Value << n.memory_mb;
    std::string gres;
    for (const auto& g : n.gres) {
      gres += (gres.empty() ? "" : ",") + g.name + (g.type.empty() ? "" : ":" + g.type) + ":" +
              std::to_string(g.count);
    }
    if (!gres.empty()) out << YAML::Key << "gres" << YAML::Value << gres;
    std::string features;
    for (const auto& f : n.features) features += (features.empty() ? "" : ",") + f;
    if (!features.empty()) out << YAML::Key << "features" << YAML::Value << features;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (d.modules_known) {
    out << YAML::Key << "modules" << YAML::Value << YAML::Flow << d.modules;
  }
  if (d.max_array_size) out << YAML::Key << "max_array_size" << YAML::Value << *d.max_array_size;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Result<Description> Describe(const ClusterAccess& access) {
  if (access.runner == nullptr) return InternalError("Describe: no command runner");
  auto run = [&](std::vector<std::string> argv) -> Result<CommandOutput> {
    Command c;
    c.argv = std::move(argv);
    c.env_set = access.env;
    c.timeout = access.timeout;
    auto out = access.runner->Run(c);
    if (!out.ok()) return out.status().WithContext(access.name);
    if (!out->success()) {
      std::string said = Trim(out->err);
      return UnavailableError(fmt::format("{}: {} failed ({}){}{}", access.name, c.argv[0],
                                          out->DescribeEnd(), said.empty() ? "" : ": ", said));
    }
    return out;
  };
  Description d;
  d.name = access.name;
  SKY_ASSIGN_OR_RETURN(CommandOutput sinfo, run({"sinfo", "--json"}));
  auto nodes = ParseSinfoJson(sinfo.out, &d.slurm_version);
  if (!nodes.ok()) return nodes.status().WithContext(access.name);
  d.nodes = *nodes;
  SKY_ASSIGN_OR_RETURN(CommandOutput parts, run({"scontrol", "show", "partition", "-o"}));
  auto partitions = ParseScontrolPartitions(parts.out);
  if (!partitions.ok()) return partitions.status().WithContext(access.name);
  d.partitions = *partitions;
  d.BuildIndex();
  if (auto config = run({"scontrol", "show", "config"}); config.ok()) {
    d.max_array_size = ParseMaxArraySize(config->out);
  }
  // Environment modules: Lmod or Tcl modules, whichever the shell has; a
  // login shell may not define `module`, so fall back to Lmod's init.
  Command modules;
  modules.argv = {
      "bash", "-c",
      "type module >/dev/null 2>&1 || . \"${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash\" "
      ">/dev/null 2>&1; type module >/dev/null 2>&1 || exit 127; module -t avail 2>&1"};
  modules.env_set = access.env;
  modules.timeout = access.timeout;
  if (auto out = access.runner->Run(modules); out.ok() && out->success()) {
    d.modules = ParseModuleAvail(out->out);
    d.modules_known = true;
  }
  return d;
}

}  // namespace skyslurm::cluster
