#!/usr/bin/env bash
# The main job: set up, build, run the examples, then the benchmark driver on histogram and
# index-gather at 2 PEs with the paper's sizes (every variant timed and checked).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
bash scripts/mpirun.sh -n 2 build/examples/histogram 1000000
bash scripts/mpirun.sh -n 2 build/examples/index_gather 1000000
mkdir -p build/results
bash scripts/mpirun.sh -n 2 build/apps/mailroom-bench histogram --json build/results/histogram.json
bash scripts/mpirun.sh -n 2 build/apps/mailroom-bench index-gather --json build/results/index-gather.json
