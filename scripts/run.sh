#!/usr/bin/env bash
# The main job: set up, build, and run the histogram and index-gather examples at 2 PEs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
bash scripts/mpirun.sh -n 2 build/examples/histogram 10000000
bash scripts/mpirun.sh -n 2 build/examples/index_gather 10000000
