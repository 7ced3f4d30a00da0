#include "tests/support/option_values.h"

#include <algorithm>
#include <random>
#include <string_view>

namespace skyslurm::testing {
namespace {

using Parts = std::vector<std::string>;

class Generator {
 public:
  explicit Generator(std::uint32_t seed) : rng_(seed) {}

  const std::string& Pick(const Parts& parts) {
    std::uniform_int_distribution<std::size_t> d(0, parts.size() - 1);
    return parts[d(rng_)];
  }
  bool Coin(int percent) { return std::uniform_int_distribution<int>(0, 99)(rng_) < percent; }
  int Upto(int n) { return std::uniform_int_distribution<int>(0, n)(rng_); }

 private:
  std::mt19937 rng_;
};

// The parts Slurm's parsers branch on.
const Parts kNumbers = {"0",
                        "1",
                        "2",
                        "7",
                        "8",
                        "9",
                        "16",
                        "24",
                        "100",
                        "512",
                        "1000",
                        "1023",
                        "1024",
                        "1025",
                        "4096",
                        "24576",
                        "99999",
                        "007",
                        "18446744073709551617"};
const Parts kMemoryUnits = {"",   "k",  "K",   "m",   "M",   "g",  "G",   "t",  "T",  "kb", "KB",
                            "Kb", "mb", "MB",  "gb",  "GB",  "gB", "tb",  "TB", "b",  "B",  "p",
                            "P",  "x",  "GiB", "gib", "kib", "bb", "GBB", " G", "G ", ".5G"};
const Parts kNumberPrefixes = {"", "", "", " ", "  ", "+", "-", "0", "\v"};
const Parts kGpuTypes = {"h100", "H100",    "a100", "nvidia_h100_80gb_hbm3",
                         "x",    "1.5",     "2x",   "gpu",
                         "k",    "1g.10gb", "-1",   "h100 "};
const Parts kGpuCounts = {"0",    "1",  "2",  "8", "9", "16", "1k",  "k",   "2kb",
                          "1kib", "+1", "-1", "x", "",  " 2", "1.5", "007", "99999999999999999999"};
const Parts kTimes = {
    "",           "0",        "-1",       "1",         "5",         "59",         "60",
    "61",         "90",       "1440",     "1441",      "0:30",      "1:30",       "1:60",
    "0:59",       "0:0:1",    "00:00:59", "10:00:00",  "24:00:00",  "24:00:01",   "1-0",
    "1-00",       "1-12",     "1-2:3",    "1-2:3:4",   "0-0:0:1",   "0-23:59:59", "1-00:00:00",
    "2-00:00:00", "INFINITE", "infinite", "UNLIMITED", "unlimited", "Unlimited",  "1h",
    ":30",        "1:2:3:4",  "-5",       "1-",        "1--2",      "-1-2",       " 5",
    "+5",         "5 ",       "a",        "1:a",       "1-a",       "1:",         "1::2",
    "05",         "1.5",      "1-2-3",    "00:10:00"};
const Parts kNodeCounts = {"1",      "2",   "3",     "0",  "1-1",     "1-2",       "2-3",
                           "3-2",    "0-2", "2-",    "-2", "a",       "1k",        "2,3",
                           "1-1024", "+1",  " 1",    "1 ", "2-2",     "1-0",       "00",
                           "01",     "1:2", "1-2-3", "",   "1000000", "2147483648"};
const Parts kTaskCounts = {"1",    "2",          "3",          "0",           "-1", "+2",
                           " 2",   "2 ",         "2x",         "1.5",         "",   "007",
                           "0x10", "2147483647", "2147483648", "99999999999", "1e3"};
const Parts kArrays = {"0-9",      "0-9%2", "0-10:2",    "1,3,5",  "1-3,7", "0-9:0",
                       "%2",       "5-1",   "0-1000000", "a",      "",      "0",
                       "1-3%0",    "1-3%",  "0-9:2%3",   "1,2,,3", "-1",    "1-2-3",
                       "0-100:10", "3-3",   "1:2",       "0x1",    "1 ,2",  "0-1000:999"};
const Parts kDependencies = {"afterok:123",
                             "afterany:1:2",
                             "singleton",
                             "after:5+10",
                             "afternotok:7",
                             "aftercorr:9",
                             "afterburstbuffer:1",
                             "",
                             "afterok",
                             "afterok:",
                             "afterok:abc",
                             "bogus:1",
                             "afterok:1,afterany:2",
                             "afterok:1?afterany:2",
                             "expand:3",
                             "123",
                             "afterok:1_2",
                             "afterok:1_[2-3]"};
const Parts kDistributions = {"block",
                              "cyclic",
                              "arbitrary",
                              "plane=2",
                              "plane",
                              "block:cyclic",
                              "cyclic:block",
                              "block:fcyclic",
                              "block:block:cyclic",
                              "*:cyclic",
                              "pack",
                              "nopack",
                              "block,pack",
                              "bogus",
                              "",
                              "plane=0",
                              "BLOCK",
                              "block:cyclic:fcyclic",
                              "cyclic:cyclic,nopack"};
const Parts kCpuFreqs = {"low",
                         "medium",
                         "high",
                         "highm1",
                         "2400000",
                         "1000000-2000000",
                         "low-high",
                         "performance",
                         "conservative",
                         "ondemand",
                         "powersave",
                         "userspace",
                         "schedutil",
                         "low:ondemand",
                         "1000000-2000000:performance",
                         "bogus",
                         "",
                         "-1",
                         "Low",
                         "2400000:bogus"};
const Parts kSignals = {"USR1",   "SIGUSR1", "USR1@60",    "B:USR1@60", "R:USR1@30", "10",
                        "10@120", "B:10",    "TERM",       "sigterm",   "usr1",      "BOGUS",
                        "",       "USR1@",   "@60",        "B:",        "USR1@-1",   "R:B:USR2@5",
                        "65",     "0",       "KILL@70000", "USR1@abc"};
const Parts kMailTypes = {"NONE",
                          "BEGIN",
                          "END",
                          "FAIL",
                          "REQUEUE",
                          "ALL",
                          "INVALID_DEPEND",
                          "STAGE_OUT",
                          "TIME_LIMIT",
                          "TIME_LIMIT_90",
                          "TIME_LIMIT_80",
                          "TIME_LIMIT_50",
                          "ARRAY_TASKS",
                          "begin",
                          "bogus",
                          ""};
const Parts kExports = {"ALL", "NONE",     "NIL", "ALL,FOO=1", "FOO",  "FOO,BAR=2", "FOO=a,b",
                        "",    "ALL,NONE", "=x",  "none",      "FOO=", "PATH"};
const Parts kBegins = {"now",
                       "now+60",
                       "now+1hour",
                       "now+2days",
                       "16:00",
                       "2030-01-01",
                       "2030-01-01T12:00:00",
                       "midnight",
                       "noon",
                       "teatime",
                       "fika",
                       "tomorrow",
                       "today",
                       "bogus",
                       "",
                       "now+",
                       "now+1fortnight",
                       "12/31/30",
                       "25:00",
                       "2030-13-01"};
const Parts kNices = {"0",          "10",          "-10", "+5", "2147483645",
                      "2147483646", "-2147483645", "a",   "",   "1.5"};
const Parts kOpenModes = {"append", "truncate", "a", "t", "Append", "bogus", ""};
const Parts kExclusives = {"user", "mcs", "bogus", "USER", ""};
const Parts kDeadlines = {"now+1hour", "2030-01-01T00:00:00", "bogus", "", "now", "now+5"};

struct OptionSpec {
  std::string_view option;
  std::vector<std::string> listed;              // hand-written cases
  std::string (*random)(Generator&) = nullptr;  // one random case
};

std::string RandomMemory(Generator& g) {
  return g.Pick(kNumberPrefixes) + g.Pick(kNumbers) + g.Pick(kMemoryUnits);
}

std::string RandomGpuElement(Generator& g, bool allow_name) {
  switch (g.Upto(allow_name ? 4 : 3)) {
    case 0:
      return g.Pick(kGpuTypes);
    case 1:
      return g.Pick(kGpuCounts);
    case 2:
      return g.Pick(kGpuTypes) + ":" + g.Pick(kGpuCounts);
    case 3:
      return g.Pick(kGpuTypes) + ":" + g.Pick(kGpuCounts) + ":" + g.Pick(kGpuCounts);
    default:
      return "gpu:" + g.Pick(kGpuTypes) + ":" + g.Pick(kGpuCounts);
  }
}

std::string RandomGpus(Generator& g) {
  std::string v = RandomGpuElement(g, true);
  if (g.Coin(20)) v += "," + RandomGpuElement(g, true);
  if (g.Coin(5)) v += ",";
  return v;
}

std::string RandomGres(Generator& g) {
  static const Parts names = {"gpu", "gpu", "gpu", "gres/gpu", "nvme", "", "GPU", "gpu "};
  auto element = [&] {
    std::string name = g.Pick(names);
    switch (g.Upto(3)) {
      case 0:
        return name;
      case 1:
        return name + ":" + (g.Coin(50) ? g.Pick(kGpuCounts) : g.Pick(kGpuTypes));
      default:
        return name + ":" + g.Pick(kGpuTypes) + ":" + g.Pick(kGpuCounts);
    }
  };
  std::string v = element();
  if (g.Coin(20)) v += "," + element();
  return v;
}

std::string RandomTime(Generator& g) {
  if (g.Coin(30)) return g.Pick(kTimes);
  const std::string n =
      g.Pick({"0", "1", "2", "5", "9", "10", "23", "24", "59", "60", "99", "00", "-1"});
  switch (g.Upto(5)) {
    case 0:
      return n;
    case 1:
      return n + ":" + g.Pick(kNumbers);
    case 2:
      return n + ":" + g.Pick({"00", "30", "59", "60"}) + ":" + g.Pick({"00", "01", "59", "60"});
    case 3:
      return n + "-" + g.Pick({"0", "1", "12", "23", "24", "99"});
    case 4:
      return n + "-" + g.Pick({"0", "1", "23"}) + ":" + g.Pick({"0", "30", "59", "60"});
    default:
      return n + "-" + g.Pick({"0", "1", "23"}) + ":" + g.Pick({"0", "59"}) + ":" +
             g.Pick({"0", "1", "59", "61"});
  }
}

std::string RandomNodes(Generator& g) {
  if (g.Coin(50)) return g.Pick(kNodeCounts);
  return g.Pick(kNumberPrefixes) + g.Pick({"0", "1", "2", "3", "4"}) +
         g.Pick({"", "-", "-1", "-2", "-4", "-0", "k"});
}

std::string RandomTasks(Generator& g) {
  return g.Pick(kNumberPrefixes) + g.Pick({"0", "1", "2", "3", "16", "64", "007"}) +
         g.Pick({"", "", "", "x", " ", ".0", "k"});
}

std::string RandomArray(Generator& g) {
  auto range = [&] {
    std::string r = g.Pick({"0", "1", "3", "7", "10"});
    if (g.Coin(60)) r += "-" + g.Pick({"0", "2", "9", "20", "100"});
    if (g.Coin(30)) r += ":" + g.Pick({"0", "1", "2", "5", "x"});
    return r;
  };
  std::string v = range();
  while (g.Coin(30)) v += "," + range();
  if (g.Coin(30)) v += "%" + g.Pick({"0", "1", "2", "5", "", "x"});
  return v;
}

std::string FromList(Generator& g, const Parts& parts) { return g.Pick(parts); }
std::string RandomSignal(Generator& g) {
  return g.Pick({"", "", "B:", "R:", "B:R:", "b:"}) +
         g.Pick({"USR1", "SIGUSR2", "10", "TERM", "hup", "BOGUS", "0", "64", "65"}) +
         g.Pick({"", "@", "@0", "@60", "@65535", "@65536", "@x"});
}
std::string RandomMailType(Generator& g) {
  std::string v = g.Pick(kMailTypes);
  while (g.Coin(30)) v += "," + g.Pick(kMailTypes);
  return v;
}
std::string RandomDistribution(Generator& g) {
  static const Parts kinds = {"block", "cyclic", "fcyclic", "plane=3", "arbitrary", "*", "bogus"};
  std::string v = g.Pick(kinds);
  if (g.Coin(50)) v += ":" + g.Pick(kinds);
  if (g.Coin(30)) v += ":" + g.Pick(kinds);
  if (g.Coin(20)) v += "," + g.Pick({"pack", "nopack", "bogus"});
  return v;
}

const std::vector<OptionSpec>& Specs() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> s;
    auto memory_listed = [] {
      std::vector<std::string> v;
      for (const auto& unit : kMemoryUnits) v.push_back("24" + unit);
      for (const auto& n : kNumbers) v.push_back(n);
      for (const auto& p : kNumberPrefixes) v.push_back(p + "8G");
      for (const char* x : {"", "G", "gb", "1.5G", "24 G", "0x10", "1e3", "-0", "-1", "--1", "+-1"})
        v.push_back(x);
      return v;
    };
    auto gpu_listed = [] {
      std::vector<std::string> v = {
          "h100",    "h100:2", "2",   "0",  "gpu:h100:2", "a100:1,h100:2", "H100:1",
          "h100:",   ":2",     "",    ",",  "h100,",      "x:y:z",         "h100:0",
          "h100:1k", "h100:k", "1.5", "2x", "-1",         "h100:-1"};
      for (const auto& t : kGpuTypes) v.push_back(t);
      for (const auto& c : kGpuCounts) v.push_back("h100:" + c);
      return v;
    };
    auto gres_listed = [] {
      std::vector<std::string> v = {"gpu",          "gpu:2",  "gpu:h100:2", "gpu:h100",
                                    "gres/gpu:2",   "gpu:0",  "gpu:h100:0", "none",
                                    "NONE",         "",       "gpu:2:h100", "gpu::2",
                                    "gpu:",         ":2",     "gpu:h100:",  "gpu:1,gpu:h100:1",
                                    "gpu:1,,",      "gpu:2x", "gpu:1.5",    "gpu:k",
                                    "gpu:h100:1kb", "nvme:1", "GPU:1",      "gpu:h100:2:3"};
      for (const auto& c : kGpuCounts) v.push_back("gpu:h100:" + c);
      return v;
    };
    s.push_back({"mem", memory_listed(), RandomMemory});
    s.push_back({"mem-per-cpu", memory_listed(), RandomMemory});
    s.push_back({"mem-per-gpu", memory_listed(), RandomMemory});
    s.push_back({"time", kTimes, RandomTime});
    s.push_back({"time-min", kTimes, RandomTime});
    s.push_back({"nodes", kNodeCounts, RandomNodes});
    s.push_back({"ntasks", kTaskCounts, RandomTasks});
    s.push_back({"cpus-per-task", kTaskCounts, RandomTasks});
    s.push_back({"ntasks-per-node", kTaskCounts, RandomTasks});
    s.push_back({"gres", gres_listed(), RandomGres});
    s.push_back({"gpus", gpu_listed(), RandomGpus});
    s.push_back({"gpus-per-node", gpu_listed(), RandomGpus});
    s.push_back({"gpus-per-task", gpu_listed(), RandomGpus});
    s.push_back({"array", kArrays, RandomArray});
    s.push_back(
        {"dependency", kDependencies, [](Generator& g) { return FromList(g, kDependencies); }});
    s.push_back({"distribution", kDistributions, RandomDistribution});
    s.push_back({"cpu-freq", kCpuFreqs, [](Generator& g) { return FromList(g, kCpuFreqs); }});
    s.push_back({"signal", kSignals, RandomSignal});
    s.push_back({"mail-type", kMailTypes, RandomMailType});
    s.push_back({"export", kExports, [](Generator& g) { return FromList(g, kExports); }});
    s.push_back({"begin", kBegins, [](Generator& g) { return FromList(g, kBegins); }});
    s.push_back({"nice", kNices, [](Generator& g) { return FromList(g, kNices); }});
    s.push_back({"open-mode", kOpenModes, [](Generator& g) { return FromList(g, kOpenModes); }});
    s.push_back({"exclusive", kExclusives, [](Generator& g) { return FromList(g, kExclusives); }});
    s.push_back({"deadline", kDeadlines, [](Generator& g) { return FromList(g, kDeadlines); }});
    return s;
  }();
  return specs;
}

}  // namespace

std::vector<std::string> GeneratedOptions() {
  std::vector<std::string> names;
  for (const auto& s : Specs()) names.emplace_back(s.option);
  return names;
}

std::vector<OptionValue> GenerateOptionValues(std::uint32_t seed, int random_per_option) {
  Generator g(seed);
  std::vector<OptionValue> out;
  for (const auto& spec : Specs()) {
    std::vector<std::string> values = spec.listed;
    for (int i = 0; i < random_per_option && spec.random != nullptr; ++i) {
      values.push_back(spec.random(g));
    }
    // Each value once per option, in a stable order.
    std::vector<std::string> seen;
    for (auto& v : values) {
      if (v.find_first_of("\n\t") != std::string::npos) continue;
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      out.push_back({std::string(spec.option), v});
    }
  }
  return out;
}

}  // namespace skyslurm::testing
