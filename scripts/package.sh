#!/usr/bin/env bash
# Builds skyslurm's packages from this tree, offline, with each
# distribution's own tooling (docs/packaging.md):
#   build-pkg/deb/  skyslurm_<v>_<arch>.deb, skyslurm-spank_<v>+slurm<S>_<arch>.deb
#                   (dpkg-buildpackage with packaging/debian/), checked by lintian
#   build-pkg/rpm/  skyslurm-<v>-1.<arch>.rpm, skyslurm-spank-<v>+slurm<S>-1.<arch>.rpm
#                   (rpmbuild with packaging/rpm/skyslurm.spec), checked by rpmlint
# <S> is the Slurm release of the headers used (packaging/slurm-version.sh).
# The build tools come from scripts/install-deps.sh. SKYSLURM_WERROR=1
# (scripts/test.sh) builds them with our warnings as errors, as our own
# trees are; a distribution's or a user's package build never is.
#
#   scripts/package.sh [--deb] [--rpm]      # default: both
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

want_deb=0 want_rpm=0
for arg in "$@"; do
  case "$arg" in
    --deb) want_deb=1 ;;
    --rpm) want_rpm=1 ;;
    *) echo "package.sh: unknown argument $arg (use --deb, --rpm)" >&2; exit 2 ;;
  esac
done
[ $want_deb = 1 ] || [ $want_rpm = 1 ] || { want_deb=1; want_rpm=1; }

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || {
      echo "package.sh: $tool is missing; run scripts/install-deps.sh" >&2
      exit 1
    }
  done
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
slurm_version=$(sh packaging/slurm-version.sh)

out="$repo/build-pkg"
# Only what this run builds is replaced.
rm -rf "$out/src"
[ $want_deb = 0 ] || rm -rf "$out/deb"
[ $want_rpm = 0 ] || rm -rf "$out/rpm"
mkdir -p "$out/deb" "$out/rpm"

# The source as committed plus what is not yet (never build trees).
stage="$out/src/skyslurm-$version"
mkdir -p "$stage"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
    tar --null -T - -cf - | tar -C "$stage" -xf -
else
  tar --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$stage" -xf -
fi

if [ $want_deb = 1 ]; then
  need dpkg-buildpackage dh lintian fakeroot
  echo "== deb: dpkg-buildpackage (skyslurm $version, plugin for Slurm $slurm_version)"
  cp -r "$stage" "$out/src/deb"
  cp -r packaging/debian "$out/src/deb/debian"
  (cd "$out/src/deb" && dpkg-buildpackage -b -us -uc -j"$(nproc)" >"$out/deb/build.log" 2>&1) || {
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
