// `skyslurm site adopt` (docs/site.md): moves the user's own skyslurmd's
// store into the site's, once the site serves them (skyslurm.yaml: site).
#pragma once

namespace skyslurm::cli {

// Stops the user's own skyslurmd (and keeps any other from starting while
// it runs: its lock), sends every job of its store, with copies, history
// and open intents, to the site, then moves the store aside
// (skyslurmd.db.adopted): the user's daemon never drives those jobs again.
// Adopting again adds nothing twice. Exit 0 when every job is the site's.
int RunSiteAdopt();

}  // namespace skyslurm::cli
