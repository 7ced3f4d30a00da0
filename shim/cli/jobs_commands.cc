#include "shim/cli/jobs_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <thread>

#include "broker/daemon/jobs/job_input.h"
#include "broker/place/placement.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"

namespace skyslurm::cli {
namespace {

std::optional<DaemonClient> Connect() { return ConnectToDaemon(GlobalSettingFlags()); }

// An id as a URL path segment: an array's tasks ("sky-..._[7,9-12]")
// percent-encoded.
std::string PathPart(const std::string& id) {
  std::string out;
  for (char c : id) {
    if (c == '[' || c == ']' || c == ',' || c == '%' || c == ' ') {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

int Error(const Status& st) {
  std::fprintf(stderr, "skyslurm: %s\n", st.message().c_str());
  return st.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

// "0:42", "1:02:03", "2-03:04:05" as squeue's TIME column.
std::string Elapsed(std::time_t since, std::time_t now) {
  if (since == 0 || now < since) return "0:00";
  long s = static_cast<long>(now - since);
  const long d = s / 86400, h = (s / 3600) % 24, m = (s / 60) % 60;
  s %= 60;
  if (d > 0) return fmt::format("{}-{:02}:{:02}:{:02}", d, h, m, s);
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

std::string Time(std::int64_t t) {
  if (t == 0) return "-";
  char buf[32];
  const std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&tt));
  return buf;
}

}  // namespace

int RunQueue(bool json, bool expand) {
  auto client = Connect();
  if (!client) return 1;
  auto answer = client->Get(expand ? "/v1/queue?expand=1" : "/v1/queue");
  if (!answer.ok()) return Error(answer.status());
  if (json) {
    std::printf("%s\n", daemon::WriteJson(*answer).c_str());
    return 0;
  }
  const std::time_t now = std::time(nullptr);
  std::vector<std::vector<std::string>> rows = {
      {"SKY_ID", "CLUSTER", "JOBID", "USER", "STATE", "TIME", "NAME", "REASON"}};
  for (const auto& j : (*answer)["jobs"]) {
    // An array is one line; its tasks by state lead the reason.
    std::string reason = j["reason"].asString();
    if (j.isMember("tasks")) {
      std::string tasks;
      for (const auto& phase : j["tasks"].getMemberNames()) {
        tasks +=
            fmt::format("{}{} {}", tasks.empty() ? "" : ", ", j["tasks"][phase].asInt64(), phase);
      }
      reason = fmt::format("tasks: {}{}{}", tasks, reason.empty() ? "" : "; ", reason);
    }
    rows.push_back({j["sky_id"].asString().empty() ? "-" : j["sky_id"].asString(),
                    j["cluster"].asString().empty() ? "-" : j["cluster"].asString(),
                    j["native_id"].asString().empty() ? "-" : j["native_id"].asString(),
                    j["user"].asString(), j["state"].asString(),
                    Elapsed(static_cast<std::time_t>(j["since"].asInt64()), now),
                    j["name"].asString(), reason});
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i + 1 < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += i + 1 < r.size() ? fmt::format("{:<{}}  ", r[i], width[i]) : r[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  }
  for (const auto& c : (*answer)["clusters"]) {
    if (!c["error"].asString().empty()) {
      std::fprintf(stderr, "skyslurm: %s does not answer: %s\n", c["name"].asString().c_str(),
                   c["error"].asString().c_str());
    }
  }
  return 0;
}

int RunCancel(const std::vector<std::string>& ids) {
  auto client = Connect();
  if (!client) return 1;
  int rc = 0;
  for (const auto& id : ids) {
    auto answer =
        client->Post("/v1/jobs/" + PathPart(id) + "/cancel", Json::Value(Json::objectValue));
    if (!answer.ok()) {
      rc = std::max(rc, Error(answer.status()));
    }
  }
  return rc;
}

int RunLogs(const std::string& id, bool follow) {
  auto client = Connect();
  if (!client) return 1;
  // Read in parts from where the last one ended (the daemon reads the
  // file where it is from that offset, never whole).
  std::uint64_t shown = 0;
  while (true) {
    auto answer =
        client->Get("/v1/jobs/" + PathPart(id) + "/output?offset=" + std::to_string(shown));
    if (!answer.ok()) {
      // Not there yet (pending, between two copies, a daemon restarting) is
      // no error while following; anything else is.
      if (follow && answer.status().code() == StatusCode::kUnavailable) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      return Error(answer.status());
    }
    const std::string out = (*answer)["output"].asString();
    const std::uint64_t size = (*answer)["size"].asUInt64();
    if (size < shown) {  // a restart's new output: from its start
      shown = 0;
      continue;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    shown = size;
    if ((*answer)["more"].asBool()) continue;  // cut at a part's size: the rest now
    if (!follow || (*answer)["final"].asBool()) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

int RunStatus(const std::string& id, bool json) {
  auto client = Connect();
  if (!client) return 1;
  auto answer = client->Get("/v1/jobs/" + id + "?cost=1");
  if (!answer.ok()) return Error(answer.status());
  if (json) {
    std::printf("%s\n", daemon::WriteJson(*answer).c_str());
    return 0;
  }
  const Json::Value& j = (*answer)["job"];
  std::printf(
      "%s  %s%s\n", j["sky_id"].asCString(), j["state"].asCString(),
      j["cluster"].asString().empty()
          ? ""
          : fmt::format(" on {}:{}", j["cluster"].asString(), j["native_id"].asString()).c_str());
  if (!j["reason"].asString().empty()) std::printf("  reason: %s\n", j["reason"].asCString());
  std::printf("  managed: %s  restarts: %d  moves: %d\n", j["managed"].asBool() ? "yes" : "no",
              j["restarts"].asInt(), j["moves"].asInt());
  if (const Json::Value& cost = (*answer)["cost"]; cost.isObject()) {
    // Its share of the node time elastic clusters billed (boot and idle
    // tail included), copy by copy.
    const std::string currency = cost["currency"].asString();
    std::string parts;
    for (const auto& c : cost["copies"]) {
      parts += fmt::format("{}{}:{} {}", parts.empty() ? "" : ", ", c["cluster"].asString(),
                           c["native_id"].asString(),
                           place::FormatCost(c["amount"].asDouble(), currency));
    }
    std::printf("  cost so far: %s (%s)%s\n",
                place::FormatCost(cost["amount"].asDouble(), currency).c_str(), parts.c_str(),
                cost["error"].asString().empty()
                    ? ""
                    : ("; not counted: " + cost["error"].asString()).c_str());
  }
  if (const Json::Value& parts = (*answer)["parts"]; parts.isArray() && !parts.empty()) {
    // A spread array: each part's tasks, where and how they are.
    std::printf("parts:\n");
    for (const auto& p : parts) {
      std::printf("  %s  %s  %s%s\n", p["sky_id"].asCString(), p["indices"].asCString(),
                  p["state"].asCString(),
                  p["cluster"].asString().empty()
                      ? ""
                      : fmt::format(" on {}:{}", p["cluster"].asString(), p["native_id"].asString())
                            .c_str());
    }
  }
  if (!j["parent"].asString().empty()) {
    std::printf("  part of: %s (tasks %s)\n", j["parent"].asCString(), j["indices"].asCString());
  }
  std::printf("history:\n");
  for (const auto& e : (*answer)["events"]) {
    const std::string where =
        e["cluster"].asString().empty()
            ? ""
            // fmt: GCC 12 -O3's false -Wrestrict on ":" + string (bug 105651).
            : fmt::format("{}{}{}", e["cluster"].asString(),
                          e["native_id"].asString().empty() ? "" : ":", e["native_id"].asString());
    std::printf("  %s  %-18s %-10s %s\n", Time(e["time"].asInt64()).c_str(), e["kind"].asCString(),
                where.c_str(), e["detail"].asCString());
  }
  return 0;
}

}  // namespace skyslurm::cli
