#include "shim/cli/explain_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <sstream>

#include "broker/job/request.h"
#include "broker/job/sky_dependency.h"
#include "broker/place/explain_view.h"
#include "broker/place/planner.h"
#include "broker/place/spending.h"
#include "broker/translate/translation.h"
#include "broker/util/line_diff.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {
namespace {

constexpr char kUsage[] =
    "usage: skyslurm explain [--describe-from=FILE ...] [sbatch options] script.sh [args]\n"
    "\n"
    "Shows the job as sbatch reads it, then, for every cluster, the job as that cluster\n"
    "would run it (what changes, as a diff) or why it cannot run there. Nothing is\n"
    "submitted. The script may come on stdin. --describe-from uses a cluster\n"
    "description file (skyslurm describe writes them) instead of asking clusters;\n"
    "give it once per cluster.\n"
    "--no-estimate skips asking the schedulers when each cluster would start the job.\n"
    "Exit status: 0 when some cluster can run the job, 1 when none can, 2 on bad input.\n";

}  // namespace

int RunExplain(const std::vector<std::string>& raw) {
  std::vector<std::string> descriptions;
  std::vector<std::string> args;
  bool estimate = true;
  bool in_options = true;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string& a = raw[i];
    if (in_options && (a == "-h" || a == "--help")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (in_options && a == "--no-estimate") {
      estimate = false;
      continue;
    }
    if (in_options && a.starts_with("--describe-from")) {
      if (a.starts_with("--describe-from=")) {
        descriptions.push_back(a.substr(16));
      } else if (a == "--describe-from" && i + 1 < raw.size()) {
        descriptions.push_back(raw[++i]);
      } else {
        std::fprintf(stderr, "skyslurm explain: --describe-from needs a file\n%s", kUsage);
        return 2;
      }
      continue;
    }
    if (in_options && !a.starts_with("-")) in_options = false;
    args.push_back(a);
  }

  auto ws = OpenWorkspace(descriptions);
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm explain: %s\n", ws.status().message().c_str());
    return 2;
  }
  job::RequestInput input;
  input.tool = job::Tool::kSbatch;
  input.args = args;
  input.env = ws->env.vars();
  {
    // A script on stdin, as sbatch takes it.
    job::OptionTable table(input.tool);
    auto parsed = job::ParseArgs(table, args, job::OperandPolicy::kStopAtFirst, "command line");
    bool wrap = false, has_script = false;
    if (parsed.ok()) {
      has_script = !parsed->operands.empty();
      for (const auto& o : parsed->options)
        wrap = wrap || (o.spec && o.spec->id == job::Opt::kWrap);
    }
    if (!has_script && !wrap && isatty(STDIN_FILENO) == 0) {
      input.script_text = std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
  }
  auto request = job::ParseRequest(input);
  if (!request.ok()) {
    std::fprintf(stderr, "skyslurm explain: %s\n", request.status().message().c_str());
    return 2;
  }

  place::PlanOptions options;
  options.estimate = estimate && descriptions.empty();
  // Offline (descriptions) there is no bill to read: budgets are not weighed.
  options.policy =
      descriptions.empty() ? place::PlacementPolicy(*ws, options.probe_timeout) : ws->policy;
  options.only = request->sky.clusters;
  if (request->sky.infra) options.pinned = *request->sky.infra;
  // Weighed with what sbatch gets once the sky jobs a --dependency names
  // answered it (skyslurmd waits for those); the view shows it as written.
  job::Request placed = *request;
  if (auto taken = job::TakeSkyDependency(placed); !taken.ok()) {
    std::fprintf(stderr, "skyslurm explain: %s\n", taken.status().message().c_str());
    return 2;
  }
  place::Plan plan = place::MakePlan(placed, ws->handles, ws->catalog, ws->home(), options);

  const place::ExplainText view = place::RenderExplain(*request, *ws, plan, options.estimate,
                                                       std::filesystem::current_path().string());
  std::fputs(view.text.c_str(), stdout);
  if (options.estimate) {
    AppendAudit(*ws,
                place::AuditLine(plan, ws->config.paths.user, "explain", request->script_name));
  }
  return view.some_cluster_can_run_it ? 0 : 1;
}

}  // namespace skyslurm::cli
