#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpirun with the flags this project's machines need: more ranks than cores, and root allowed
# (CI runs as root in a container). Usage: scripts/mpirun.sh -n 2 program args...
set -euo pipefail
flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  flags+=(--oversubscribe)
  [ "$(id -u)" -ne 0 ] || flags+=(--allow-run-as-root)
  # Several threads per PE (MAILROOM_WORKERS, mailroom-bench --workers, or a progress thread):
  # Open MPI binds each process to one core at 2 processes or fewer, where they would take turns.
  workers=${MAILROOM_WORKERS:-1}
  for a in "$@"; do case "$a" in --workers|--workers=*) workers=2 ;; esac; done
  [ "${MAILROOM_PROGRESS:-}" != thread ] || workers=2
  [ "$workers" -le 1 ] || flags+=(--bind-to none)
fi
exec mpirun "${flags[@]}" "$@"
