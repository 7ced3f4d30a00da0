/*
 * A SPANK plugin of the testbed's, never installed: it registers
 * --container-image and --container-mounts the way pyxis does (each with a
 * required argument, in sbatch, salloc and srun), so that one cluster of the
 * testbed (gamma) accepts a pyxis script's options and the others do not,
 * as at a site where only some clusters run pyxis. It does nothing with the
 * values: the job runs as if they were not there.
 */
#include <slurm/spank.h>
#include <stddef.h>
#include <stdint.h>

SPANK_PLUGIN(container_options, 1);

static int accept_value(int val, const char* optarg, int remote) {
  (void)val;
  (void)remote;
  return optarg != NULL && optarg[0] != '\0' ? 0 : -1;
}

/* Registered from slurm_spank_init: Slurm reads a static spank_options table
 * in every context but the allocator (sbatch, salloc), as pyxis found too. */
static struct spank_option container_options[] = {
    {"container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
     "[testbed] the image to run the job in (accepted, not used)", 1, 0, accept_value},
    {"container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
     "[testbed] bind mounts for the container (accepted, not used)", 1, 1, accept_value},
    SPANK_OPTIONS_TABLE_END};

int slurm_spank_init(spank_t sp, int ac, char** av) {
  (void)ac;
  (void)av;
  for (struct spank_option* o = container_options; o->name != NULL; ++o) {
    if (spank_option_register(sp, o) != ESPANK_SUCCESS) return -1;
  }
  return 0;
}
