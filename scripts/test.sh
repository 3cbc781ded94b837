#!/usr/bin/env bash
# The test suite: set up, build, and run every test (unit, MPI at 1-4 PEs, negative-compile).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
cd build
ctest --output-on-failure -j 2 --timeout 300
