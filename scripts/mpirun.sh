#!/usr/bin/env bash
# mpirun with the flags this project's machines need: more ranks than cores, and root allowed
# (CI runs as root in a container). Usage: scripts/mpirun.sh -n 2 program args...
set -euo pipefail
flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  flags+=(--oversubscribe)
  [ "$(id -u)" -ne 0 ] || flags+=(--allow-run-as-root)
fi
exec mpirun "${flags[@]}" "$@"
