// skyslurmd: the per-user daemon that tracks routed jobs and fails them over
// (docs/architecture.md). This entry point parses its command line; the
// daemon's service loop arrives with its own issue.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "skyslurm/version.h"

int main(int argc, char** argv) {
  CLI::App app{"skyslurmd: tracks skyslurm's routed jobs across Slurm clusters", "skyslurmd"};
  bool version = false;
  app.add_flag("-V,--version", version, "Print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (version) {
    std::printf("skyslurmd %s (built against Slurm %s)\n", skyslurm::kVersion,
                skyslurm::kSlurmBuildVersion);
    return 0;
  }
  std::fprintf(stderr,
               "skyslurmd: the job-tracking service is not part of this release yet "
               "(see skyslurmd --help)\n");
  return 1;
}
