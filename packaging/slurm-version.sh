#!/bin/sh
# Prints the Slurm release whose headers a build uses, spelled as Slurm
# spells it (22.05.8), from SLURM_VERSION_NUMBER in slurm/slurm_version.h.
# A SPANK plugin must be built for each Slurm release, so the packages name
# it (docs/packaging.md). CMake, debian/rules and the RPM spec all ask here.
#
#   packaging/slurm-version.sh [INCLUDE_DIR]     # default /usr/include
set -eu
header="${1:-/usr/include}/slurm/slurm_version.h"
if [ ! -r "$header" ]; then
  echo "slurm-version.sh: cannot read $header (install Slurm's headers: libslurm-dev or slurm-devel)" >&2
  exit 1
fi
number=$(sed -n 's/^#define SLURM_VERSION_NUMBER[[:space:]]*0x\([0-9a-fA-F]*\).*/\1/p' "$header")
if [ -z "$number" ]; then
  echo "slurm-version.sh: no SLURM_VERSION_NUMBER in $header" >&2
  exit 1
fi
number=$((0x$number))
printf '%d.%02d.%d\n' $(((number >> 16) & 255)) $(((number >> 8) & 255)) $((number & 255))
