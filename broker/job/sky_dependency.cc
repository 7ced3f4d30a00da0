#include "broker/job/sky_dependency.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "broker/job/sky_id.h"

namespace skyslurm::job {

namespace {

std::vector<std::string> Split(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find_first_of(separators, start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

bool IsSkyType(std::string_view type) {
  return type == "after" || type == "afterany" || type == "afterok" || type == "afternotok";
}

Result<int> Minutes(std::string_view text, std::string_view item) {
  int minutes = 0;
  if (text.empty() || text.size() > 7 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c) != 0; })) {
    return InvalidArgumentError(
        fmt::format("--dependency item '{}': '+{}' is not a number of minutes", item, text));
  }
  for (char c : text) minutes = minutes * 10 + (c - '0');
  return minutes;
}

}  // namespace

Result<SkyDependency> ReadSkyDependency(std::string_view text) {
  SkyDependency out;
  const bool commas = text.find(',') != std::string_view::npos;
  out.any = text.find('?') != std::string_view::npos;
  std::vector<std::string> rest;
  for (const std::string& item : Split(text, ",?")) {
    if (item.empty()) continue;
    const auto colon = item.find(':');
    // A bare id is Slurm's afterany; `singleton` names no job.
    const std::string type = colon == std::string::npos ? "afterany" : item.substr(0, colon);
    const std::string ids = colon == std::string::npos ? item : item.substr(colon + 1);
    std::vector<std::string> native;
    for (const std::string& id : Split(ids, ":")) {
      const auto plus = id.find('+');
      const std::string base = id.substr(0, plus);
      if (!base.starts_with("sky-")) {
        native.push_back(id);
        continue;
      }
      if (!LooksLikeSkyId(base)) {
        return InvalidArgumentError(fmt::format(
            "--dependency item '{}': '{}' is no sky id (a task of a sky array cannot be waited "
            "for: name the whole array)",
            item, base));
      }
      if (!IsSkyType(type)) {
        return InvalidArgumentError(fmt::format(
            "--dependency item '{}': {} cannot name a sky job (after, afterany, afterok and "
            "afternotok can)",
            item, type));
      }
      SkyCondition c{type, base, 0};
      if (plus != std::string::npos) {
        if (type != "after") {
          return InvalidArgumentError(
              fmt::format("--dependency item '{}': only after takes +minutes, as in Slurm", item));
        }
        SKY_ASSIGN_OR_RETURN(c.minutes, Minutes(id.substr(plus + 1), item));
      }
      out.conditions.push_back(std::move(c));
    }
    if (native.empty()) continue;  // every id of it is a sky job's
    rest.push_back(colon == std::string::npos && native.size() == 1 && native[0] == item
                       ? item
                       : fmt::format("{}:{}", type, fmt::join(native, ":")));
  }
  if (out.conditions.empty()) {
    out.rest = std::string(text);
    return out;
  }
  if (commas && out.any) {
    return InvalidArgumentError(
        fmt::format("--dependency={}: ',' (all of) and '?' (any of) cannot be mixed", text));
  }
  if (out.any && !rest.empty()) {
    return InvalidArgumentError(fmt::format(
        "--dependency={}: '?' joins sky jobs and {}; skyslurmd waits for sky jobs itself and "
        "cannot see Slurm's own satisfied: join them with ',' or name only sky jobs",
        text, fmt::join(rest, "?")));
  }
  out.rest = fmt::format("{}", fmt::join(rest, ","));
  return out;
}

Result<SkyDependency> TakeSkyDependency(Request& request) {
  if (!request.dependency || request.dependency_resolved) return SkyDependency{};
  auto read = ReadSkyDependency(*request.dependency);
  if (!read.ok()) {
    const Setting* s = request.Effective(Opt::kDependency);
    if (s == nullptr) return read.status();
    return InvalidArgumentError(
        fmt::format("{}: {}", s->origin.Describe(request.script_name), read.status().message()));
  }
  if (read->conditions.empty()) return *read;
  request.dependency = read->rest.empty() ? std::nullopt : std::optional<std::string>(read->rest);
  request.dependency_resolved = true;
  return *read;
}

DependencyVerdict WeighSkyDependency(
    const SkyDependency& dependency,
    const std::function<DependeeState(const std::string& sky_id)>& state_of, std::time_t now) {
  std::vector<std::string> waiting, never;
  int satisfied = 0;
  for (const SkyCondition& c : dependency.conditions) {
    const DependeeState s = state_of(c.sky_id);
    const std::string name = c.minutes > 0 ? fmt::format("{}:{}+{}", c.type, c.sky_id, c.minutes)
                                           : fmt::format("{}:{}", c.type, c.sky_id);
    if (!s.found) {
      never.push_back(fmt::format("{}: skyslurm knows no such job", name));
      continue;
    }
    bool ok = false, impossible = false;
    if (c.type == "after") {
      // Slurm: once it started, or ended unstarted (cancelled).
      ok = (s.started != 0 && now >= s.started + std::time_t{c.minutes} * 60) ||
           (s.ended && s.started == 0);
    } else if (c.type == "afterany") {
      ok = s.ended;
    } else if (c.type == "afterok") {
      ok = s.ended && s.state == "COMPLETED";
      impossible = s.ended && !ok;
    } else {  // afternotok
      ok = s.ended && s.state != "COMPLETED";
      impossible = s.ended && !ok;
    }
    if (ok) {
      ++satisfied;
    } else if (impossible) {
      never.push_back(fmt::format("{} ended {}", name, s.state));
    } else if (c.type == "after" && s.started != 0) {
      waiting.push_back(fmt::format("{} (started; {} min after)", name, c.minutes));
    } else {
      waiting.push_back(fmt::format("{} ({})", name, s.state));
    }
  }
  DependencyVerdict v;
  const int count = static_cast<int>(dependency.conditions.size());
  if (dependency.any ? satisfied > 0 : satisfied == count) {
    v.status = DependencyStatus::kSatisfied;
    v.sbatch_dependency = dependency.any ? "" : dependency.rest;
    v.reason = "Dependency satisfied";
    return v;
  }
  if (dependency.any ? static_cast<int>(never.size()) == count : !never.empty()) {
    v.status = DependencyStatus::kNeverSatisfied;
    v.reason = fmt::format("DependencyNeverSatisfied: {}", fmt::join(never, ", "));
    return v;
  }
  v.status = DependencyStatus::kWaiting;
  v.reason =
      fmt::format("Dependency: waits for {}", fmt::join(waiting, dependency.any ? " or " : ", "));
  return v;
}

}  // namespace skyslurm::job
