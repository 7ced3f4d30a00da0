// A job as a Slurm cluster needs it, or the reasons it cannot run there. A
// pure function of the request, the target cluster's description and the
// site's settings: GRES types respelled, a partition that can run it (the
// user's where valid, else the configured map, else chosen, and why),
// modules mapped to the nearest counterpart (a peer is refused only for a
// module the home cluster has and it has no counterpart of), account and QoS
// mapped by
// policy (never invented), paths under a named root of the home's filesystems
// spelled as the target spells that root, --sky-* options removed (peers may
// not have the plugin). Everything else stays byte for byte. The script gets a header
// saying what changed and why, and keeps each original directive visible
// as a comment ("##SBATCH ...").
#pragma once

#include <string>

#include "broker/cluster/description.h"
#include "broker/translate/translation.h"

namespace skyslurm::translate {

Translation TranslateForSlurm(const job::Request& request, const cluster::Description& target,
                      const TranslateContext& context);

// Quotes a word for an #SBATCH line so that sbatch reads it back unchanged.
std::string QuoteDirectiveWord(const std::string& word);

}  // namespace skyslurm::translate
