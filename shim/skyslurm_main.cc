// The `skyslurm` command: the user's view over every cluster. Subcommands
// (gpus, queue, cancel, logs, check, explain) arrive with their issues;
// usage errors exit 2.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "skyslurm/version.h"

int main(int argc, char** argv) {
  CLI::App app{"skyslurm: run Slurm jobs on whichever cluster starts them first", "skyslurm"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("-V,--version", version, "Print the version and exit");
  app.footer("Submit as usual with sbatch/salloc/srun; add --sky-any-cluster to route a job.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (version) {
    std::printf("skyslurm %s (built against Slurm %s)\n", skyslurm::kVersion,
                skyslurm::kSlurmBuildVersion);
    return 0;
  }
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
