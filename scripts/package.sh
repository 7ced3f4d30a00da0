#!/usr/bin/env bash
# Builds skyslurm's packages from this tree, offline, with each
# distribution's own tooling (docs/packaging.md):
#   build-pkg/deb/  skyslurm_<v>_<arch>.deb, skyslurm-spank_<v>+slurm<S>_<arch>.deb
#                   (dpkg-buildpackage with packaging/debian/), checked by lintian
#   build-pkg/rpm/  skyslurm-<v>-1.<arch>.rpm, skyslurm-spank-<v>+slurm<S>-1.<arch>.rpm
#                   (rpmbuild with packaging/rpm/skyslurm.spec), checked by rpmlint
# <S> is the Slurm release of the headers used (packaging/slurm-version.sh).
#
# --plugin-only builds skyslurm-spank alone (the Debian build profile
# pkg.skyslurm.plugin-only, CMake's SKYSLURM_PLUGIN_ONLY): what a compute node
# or a cluster that only receives routed jobs installs. --suite SUITE builds
# the .deb for another Debian release inside a root filesystem of it, against
# that release's Slurm headers, into build-pkg/deb-SUITE/; the one suite known
# is trixie (Debian 13, Slurm 24.11: the testbed's root filesystem,
# scripts/testbed/trixie-rootfs, made once per machine; needs root). Build
# dependencies missing there are installed there with apt first.
# The build tools come from scripts/install-deps.sh. SKYSLURM_WERROR=1
# (scripts/test.sh) builds them with our warnings as errors, as our own
# trees are; a distribution's or a user's package build never is.
#
#   scripts/package.sh [--deb] [--rpm]      # default: both
#   scripts/package.sh --deb --suite trixie --plugin-only
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

want_deb=0 want_rpm=0 suite="" plugin_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) want_deb=1 ;;
    --rpm) want_rpm=1 ;;
    --plugin-only) plugin_only=1 ;;
    --suite)
      [ $# -ge 2 ] || { echo "package.sh: --suite needs a suite (trixie)" >&2; exit 2; }
      suite=$2
      shift
      ;;
    *) echo "package.sh: unknown argument $1 (use --deb, --rpm, --suite SUITE, --plugin-only)" >&2; exit 2 ;;
  esac
  shift
done
[ $want_deb = 1 ] || [ $want_rpm = 1 ] || { want_deb=1; want_rpm=1; }
if [ -n "$suite" ]; then
  [ "$suite" = trixie ] || { echo "package.sh: --suite knows trixie only, not '$suite'" >&2; exit 2; }
  [ $want_rpm = 0 ] || { echo "package.sh: --suite builds a .deb; leave out --rpm" >&2; exit 2; }
fi
[ $plugin_only = 0 ] || [ $want_rpm = 0 ] || {
  echo "package.sh: --plugin-only builds the .deb's skyslurm-spank; leave out --rpm" >&2
  exit 2
}
profiles=""
[ $plugin_only = 0 ] || profiles=pkg.skyslurm.plugin-only

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || {
      echo "package.sh: $tool is missing; run scripts/install-deps.sh" >&2
      exit 1
    }
  done
}

# The tree as committed plus what is not yet (never build trees), into $1.
stage_source() {
  mkdir -p "$1"
  if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$repo" ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
      tar --null -T - -cf - | tar -C "$1" -xf -
  else
    tar --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$1" -xf -
  fi
}

# The .deb for another Debian release, built in a root filesystem of it.
build_in_suite() {
  local root work dest missing
  [ "$(id -u)" = 0 ] || { echo "package.sh: --suite needs root (it builds in a chroot)" >&2; exit 1; }
  root=$("$repo/scripts/testbed/trixie-rootfs")
  work=/usr/src/skyslurm-package
  dest="$out/deb-$suite"
  rm -rf "$root$work" "$dest"
  mkdir -p "$dest"
  stage_source "$root$work/skyslurm-$version"
  cp -r packaging/debian "$root$work/skyslurm-$version/debian"
  missing=$(chroot "$root" sh -c "cd $work/skyslurm-$version && dpkg-checkbuilddeps ${profiles:+-P $profiles}" 2>&1 |
    sed -n 's/.*[Uu]nmet build dependencies: //p' | sed 's/([^)]*)//g; s/<[^>]*>//g' || true)
  if [ -n "$missing" ]; then
    echo "== deb ($suite): installing the build dependencies missing there: $missing"
    # shellcheck disable=SC2086 # a list of package names
    DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends $missing \
      >"$dest/apt.log" 2>&1 || { tail -n 20 "$dest/apt.log" >&2; exit 1; }
  fi
  echo "== deb ($suite): dpkg-buildpackage (skyslurm $version$([ $plugin_only = 0 ] || echo ', plugin only')," \
    "Slurm $(chroot "$root" sh "$work/skyslurm-$version/packaging/slurm-version.sh"))"
  chroot "$root" sh -c "cd $work/skyslurm-$version && SKYSLURM_WERROR=${SKYSLURM_WERROR:-0} \
    dpkg-buildpackage -b -us -uc -j$(nproc) ${profiles:+-P$profiles}" >"$dest/build.log" 2>&1 || {
    tail -n 40 "$dest/build.log" >&2
    echo "package.sh: dpkg-buildpackage in $suite failed; the whole log: $dest/build.log" >&2
    exit 1
  }
  mv "$root$work"/*.deb "$root$work"/*.changes "$root$work"/*.buildinfo "$dest/"
  rm -rf "${root:?}$work"
  ls -1 "$dest"/*.deb
}

# One version everywhere: CMake's project(), debian/changelog, the spec.
version=$(sed -n 's/^project(skyslurm VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
deb_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
rpm_version=$(sed -n 's/^Version:[[:space:]]*//p' packaging/rpm/skyslurm.spec | head -n 1)
if [ "$deb_version" != "$version" ] || [ "$rpm_version" != "$version" ]; then
  echo "package.sh: versions disagree: CMakeLists.txt $version, debian/changelog $deb_version," \
    "skyslurm.spec $rpm_version" >&2
  exit 1
fi
out="$repo/build-pkg"
if [ -n "$suite" ]; then
  build_in_suite
  exit 0
fi
slurm_version=$(sh packaging/slurm-version.sh)

# Only what this run builds is replaced.
rm -rf "$out/src"
[ $want_deb = 0 ] || rm -rf "$out/deb"
[ $want_rpm = 0 ] || rm -rf "$out/rpm"
mkdir -p "$out/deb" "$out/rpm"

# The source as committed plus what is not yet (never build trees).
stage="$out/src/skyslurm-$version"
stage_source "$stage"

if [ $want_deb = 1 ]; then
  need dpkg-buildpackage dh lintian fakeroot
  echo "== deb: dpkg-buildpackage (skyslurm $version, plugin for Slurm $slurm_version)"
  cp -r "$stage" "$out/src/deb"
  cp -r packaging/debian "$out/src/deb/debian"
  (cd "$out/src/deb" && dpkg-buildpackage -b -us -uc -j"$(nproc)" ${profiles:+-P"$profiles"} \
    >"$out/deb/build.log" 2>&1) || {
    tail -n 40 "$out/deb/build.log" >&2
    echo "package.sh: dpkg-buildpackage failed; the whole log: $out/deb/build.log" >&2
    exit 1
  }
  mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out/deb/"
  echo "== deb: lintian"
  lintian --fail-on error,warning --display-info "$out"/deb/*.changes
  ls -1 "$out"/deb/*.deb
fi

if [ $want_rpm = 1 ]; then
  need rpmbuild rpmlint
  echo "== rpm: rpmbuild (skyslurm $version, plugin for Slurm $slurm_version)"
  top="$out/rpm/rpmbuild"
  mkdir -p "$top/SOURCES"
  tar -C "$out/src" -czf "$top/SOURCES/skyslurm-$version.tar.gz" "skyslurm-$version"
  cp packaging/slurm-version.sh "$top/SOURCES/"
  # --nodeps: the build requirements are RPM distributions' package names,
  # which this machine's (empty) RPM database cannot answer for; Debian's
  # equivalents are the ones installed (scripts/install-deps.sh).
  werror=()
  [ "${SKYSLURM_WERROR:-0}" != 1 ] || werror=(--define "skyslurm_werror 1")
  rpmbuild -bb --nodeps --define "_topdir $top" --define "slurm_version $slurm_version" \
    "${werror[@]}" packaging/rpm/skyslurm.spec >"$out/rpm/build.log" 2>&1 || {
    tail -n 40 "$out/rpm/build.log" >&2
    echo "package.sh: rpmbuild failed; the whole log: $out/rpm/build.log" >&2
    exit 1
  }
  mv "$top"/RPMS/*/*.rpm "$out/rpm/"
  echo "== rpm: rpmlint"
  rpmlint --config packaging/rpm/rpmlint.toml --rpmlintrc packaging/rpm/skyslurm.rpmlintrc "$out"/rpm/*.rpm
  ls -1 "$out"/rpm/*.rpm
fi
