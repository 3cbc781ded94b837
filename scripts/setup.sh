#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what mailroom needs on Debian 12 (only what is missing), then configures and builds.
# Usage: scripts/setup.sh [build-dir] [extra cmake args...]   (default build dir: build)
# With CXX=clang++ it also installs clang, its sanitizer and libFuzzer runtimes, and
# llvm-symbolizer (package llvm), without which sanitizer reports show no file names.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true

# Open MPI is the default MPI; MPICH (mpich, libmpich-dev) is installed beside it for the test
# suite's MPICH build, which names its compiler wrapper and launcher (mpicxx.mpich, mpiexec.mpich).
packages=(build-essential cmake ninja-build openmpi-bin libopenmpi-dev mpich libmpich-dev
          libfmt-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev iproute2
          libtbb-dev libcereal-dev pkgconf python3 python3-matplotlib doxygen clang-format-16
          clang-tidy)
case "${CXX:-}" in *clang*) packages+=(clang libclang-rt-14-dev llvm) ;; esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
# MAILROOM_TARGETS="a b": build only those targets (the ThreadSanitizer stage of the tests).
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$(nproc)" ${MAILROOM_TARGETS:+--target $MAILROOM_TARGETS}
