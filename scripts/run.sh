#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: set up, build, run the examples, then the benchmark driver on all seven Bale
# kernels at 2 PEs with the paper's sizes (every variant timed and checked; JSON in
# build/results/), and the chart of them all (build/results/bench.png and .svg, scripts/plot).
# Stops at the first kernel with a variant that fails its check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
bash scripts/mpirun.sh -n 2 build/examples/histogram 1000000
bash scripts/mpirun.sh -n 2 build/examples/index_gather 1000000
bash scripts/mpirun.sh -n 2 build/examples/bfs 200000
MAILROOM_WORKERS=2 bash scripts/mpirun.sh -n 1 build/examples/workers 1000000
mkdir -p build/results
results=()
for app in histogram index-gather permute-matrix transpose-matrix randperm toposort triangles; do
  echo
  bash scripts/mpirun.sh -n 2 build/apps/mailroom-bench "$app" --json "build/results/$app.json"
  results+=("build/results/$app.json")
done
echo
scripts/plot --out build/results "${results[@]}"
