#include "broker/place/audit.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "broker/util/timestamp.h"

namespace skyslurm::place {

std::string FormatUtc(std::time_t t) { return FormatRfc3339(t); }

std::string AuditLine(const Plan& plan, const std::string& user, const std::string& sky_id,
                      const std::string& job) {
  std::string candidates;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const auto& v = plan.decision.verdicts[i];
    // Each part formatted, not "x" + string: GCC 12 at -O3 reports a false
    // -Wrestrict inside the latter (GCC bug 105651).
    candidates += fmt::format("{}{}", candidates.empty() ? "" : ",", v.cluster);
    if (!v.partition.empty()) candidates += fmt::format("/{}", v.partition);
    candidates += fmt::format(":{}", KindName(v.kind));
    if (v.start) candidates += fmt::format("@{}", FormatUtc(*v.start));
  }
  const std::string chosen = plan.decision.chosen
                                 ? plan.candidates[*plan.decision.chosen].cluster + "/" +
                                       plan.candidates[*plan.decision.chosen].partition
                                 : "none";
  return fmt::format("{} user={} sky_id={} job={} chosen={} candidates={} took_ms={}",
                     FormatUtc(plan.now), user, sky_id, job, chosen, candidates, plan.took.count());
}

void AppendAudit(const std::string& state_dir, const std::string& line) {
  namespace fs = std::filesystem;
  const fs::path dir = state_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  std::ofstream log(dir / "decisions.log", std::ios::app);
  if (!log) {
    std::fprintf(stderr, "skyslurm: warning: cannot write the audit log in %s\n", dir.c_str());
    return;
  }
  log << line << '\n';
}

std::string NoClusterMessage(const Plan& plan) {
  std::string why;
  bool budget = false;
  for (const auto& v : plan.decision.verdicts) {
    why += fmt::format("\n  {}{}: {}: {}", v.cluster, v.partition.empty() ? "" : "/" + v.partition,
                       KindName(v.kind), v.reason);
    budget = budget || v.kind == Verdict::Kind::kOverBudget;
  }
  // A budget refused it: the lines below give the budget, the spend and the cost.
  return fmt::format("no cluster can run this job{} (skyslurm explain shows why):{}",
                     budget ? " within your budget" : "", why);
}

}  // namespace skyslurm::place
