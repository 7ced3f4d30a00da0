#!/usr/bin/env bash
# Builds skyslurm on Debian 13 (trixie: GCC 14, Slurm 24.11's headers, its
# yaml-cpp, libssh, spdlog ...) and runs its unit tests there, inside the
# testbed's trixie root filesystem (scripts/testbed/trixie-rootfs, made once
# per machine from the Debian mirror apt uses). Our warnings are errors, as in
# our own trees. Run by hand and before a release, not in CI (a second full
# build would double CI's time on 2 cores); CI builds only the plugin's
# trixie package (scripts/package.sh --suite trixie --plugin-only).
#
#   sudo scripts/build-trixie.sh            # the build stays in the root filesystem's
#                                           # /usr/src/skyslurm-trixie/build for a next run
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "build-trixie.sh: needs root (it builds in a chroot)" >&2; exit 1; }
root=$("$repo/scripts/testbed/trixie-rootfs")
work=/usr/src/skyslurm-trixie
started=$(date +%s)

# The source as committed plus what is not yet; the build folder is kept.
mkdir -p "$root$work/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
  tar --null -T - -cf -) | tar -C "$root$work/src" -xf -

# Debian's packages for the build and the unit tests: the package's build
# dependencies, GoogleTest, and what the unit tests run (rsync, ssh's
# client, sqlite3).
cp -r "$repo/packaging/debian" "$root$work/src/debian"
missing=$(chroot "$root" sh -c "cd $work/src && dpkg-checkbuilddeps" 2>&1 |
  sed -n 's/.*[Uu]nmet build dependencies: //p' | sed 's/([^)]*)//g; s/<[^>]*>//g' || true)
rm -rf "$root$work/src/debian"
# shellcheck disable=SC2086 # lists of package names
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends \
  $missing libgtest-dev libgmock-dev git rsync openssh-client sqlite3 python3 >"$root$work/apt.log" 2>&1 || {
  tail -n 20 "$root$work/apt.log" >&2
  exit 1
}

# GCC 14 warns of out-of-bounds copies inside libstdc++'s own inlined
# string and vector moves (-Warray-bounds, -Wstringop-overflow, -Wrestrict:
# GCC bugs 105651, 107852 and kin); they stay warnings here, counted below,
# and every other warning is an error as in our own trees.
no_error="-Wno-error=array-bounds -Wno-error=stringop-overflow -Wno-error=restrict"
echo "== build-trixie: $(chroot "$root" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), $(chroot "$root" c++ --version | head -n 1), Slurm $(chroot "$root" sh "$work/src/packaging/slurm-version.sh")"
unshare --mount --propagation private sh -ec "
  mount -t proc proc '$root/proc'
  mount --rbind /dev '$root/dev'
  mount -t tmpfs -o mode=1777 tmpfs '$root/tmp'
  chroot '$root' sh -ec '
    cd $work
    cmake -S src -B build -G Ninja -DSKYSLURM_WERROR=ON -DSKYSLURM_BUILD_BENCHMARKS=OFF \
      \"-DCMAKE_CXX_FLAGS=$no_error\" >configure.log
    ninja -C build -j$(nproc) >build.log 2>&1 || { tail -n 40 build.log; exit 1; }
    cd build && ctest -L unit -j$(nproc) --output-on-failure >../unit.log 2>&1 || { grep -A20 -E \"Failed|\\*\\*\\*\" ../unit.log | head -n 80; tail -n 5 ../unit.log; exit 1; }
    tail -n 3 ../unit.log
    echo \"warnings left as warnings: \$(grep -c \"warning: \" ../build.log || true)\"
  '
"
echo "== build-trixie: built and tested in $(($(date +%s) - started)) s; logs in $root$work/"
