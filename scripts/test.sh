#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test suite, in two tiers. Usage: scripts/test.sh [--full]
#
# Default (what CI runs; about 28 minutes on 2 cores, half of it building): set up, then
#  - release build (g++): every test (two long ones at fewer PEs, the global view on the
#    simulated machine at 64 PEs, not 256), with the simulated machine
#    at 256 PEs (exactly-once under each routing, collectives, teams, one-sided), and across
#    emulated hosts all but five of the mini-apps and the hang tests (their one-host versions
#    run);
#  - every C++ file as clang-format 16 formats it, and clang-tidy with no finding over the
#    library's sources that the last 8 commits changed or whose direct includes they changed
#    (scripts/format, scripts/tidy --recent 8);
#  - MPICH: the library's MPI tests at 2 PEs (at 1 to 4 PEs those that do not run at 2);
#  - clang with AddressSanitizer and UndefinedBehaviorSanitizer, without the mini-apps: the unit
#    tests, the MPI tests at 2 PEs (and those that do not run at 2, up to 4 PEs), the simulator's
#    own tests with exactly-once at 256 PEs, and the Matrix Market fuzz target for 10 s;
#  - ThreadSanitizer: the threaded tasks and progress tests (the progress thread's too) with 1 to
#    4 workers per PE at 1 to 4 PEs.
# Each tier's time is printed at its end.
# --full adds what those leave out (about an hour more): clang-tidy over every source, the
# mini-apps on the simulated machine at 256 PEs, and the rest across emulated hosts; MPICH with
# the unit and misuse tests and at 3 PEs and more, and at 1 PE; under the sanitizers those too,
# the mini-apps, the negative-compile tests and the rest of the simulated machine's, and 60 s of
# fuzzing. The simulated machine at 1024 to 4096 PEs is `ctest -L scale_full` in the release
# build (README).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
full=0
case "${1:-}" in
  --full) full=1 ;;
  "") ;;
  -h | --help)
    sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "scripts/test.sh: unknown argument '$1' (usage: scripts/test.sh [--full])" >&2
    exit 2
    ;;
esac

# What each tier leaves out: ctest label expressions (-LE) and test names (-E). CMake's regular
# expressions hold at most 9 groups in parentheses: with a tenth, -E excludes nothing at all.
if [ "$full" = 1 ]; then
  release_out='scale_full'
  release_names='^$'
  mpich_out='^$'
  mpich_names='^(pointer_chase|sparse_matrix)\.np[34]$'
  mpich_unit=ON
  mpich_misuse=ON
  fuzz_seconds=${MAILROOM_FUZZ_SECONDS:-60}
  san_apps=ON
  san_neg=ON
  san_out='scale_full|scale_apps|cluster'
  san_names='^(pointer_chase|randperm_uniform)\.np[34]$|^sim\.exactly_once\.256x32\.(direct\.seed1|node\.link_credits1|mesh\.link_credits0)$'
  tidy_what=()
else
  release_out='scale_full|scale_apps|full'
  release_names='^(pointer_chase|randperm_uniform)\.np4$|^pointer_chase\.np3$|^sim\.global_array\.256x32$'
  mpich_out='many_pes|one_pe|full'
  mpich_names='^(pointer_chase|sparse_matrix)\.np[234]$|^(api_mesh|api_routed)\.np4$|^exactly_once_[a-z0-9_]+\.np([5-9]|1[0-9])$|^blocked_in_mpi_warned\.|^(kernels|var_messages)_(mesh3d|hypercube)\.np[58]$'
  mpich_unit=OFF
  mpich_misuse=OFF
  fuzz_seconds=${MAILROOM_FUZZ_SECONDS:-10}
  san_apps=OFF
  san_neg=OFF
  san_out='scale_full|scale_apps|cluster|many_pes|one_pe|neg|full'
  tidy_what=(--recent 8)
  san_names='^install\.|^(api_mesh|api_routed|enable_disable_routed)\.np4$|^sim\.(collectives|team_selectors|constructions_differ|distributions|message_reductions)\.|^sim\.(progress_loop\.256x8|one_sided\.256x32|one_sided\.128x16\.mesh|global_array\.(64x8|256x32)|exactly_once\.128x1\.auto_budget)$|^sim\.exactly_once\.256x32\.(direct\.seed1|mesh\.seed1|mesh3d\.seed1|hypercube\.seed1|node\.link_credits1|mesh\.link_credits0)$|^sim\.exactly_once\.256x4\.hypercube$|^exactly_once_[a-z0-9_]+\.np([5-9]|1[0-9])$|^exactly_once_routed_tight_flow\.np4$|^blocked_in_mpi_warned\.|^(kernels|var_messages)_(mesh3d|hypercube)\.np[58]$|^message_reductions_(routed\.np6|hypercube\.np5)$'
fi

# The time each tier took, printed when it ends (and of the whole run, last).
tier_start=$SECONDS
tier_done() {
  echo "== $1: $((SECONDS - tier_start)) s (the run so far: $SECONDS s)"
  tier_start=$SECONDS
}

echo "== release build (g++): the whole suite (of the simulated machine's, 256 PEs only)"
bash scripts/setup.sh build
# (By default without pointer_chase at 3 and 4 PEs and randperm_uniform at 4, 18-25 s each: they
# run at 1-2 and 1-3 PEs; and without the global view on the simulated machine at 256 PEs, about
# 120 s: at 64 PEs it stays.)
(cd build && ctest --output-on-failure -j 2 --timeout 900 -LE "$release_out" -E "$release_names")

echo "== format (clang-format 16) and clang-tidy (the library's sources)"
# After the release build: setup.sh has installed clang-format-16, and CMake has written
# build/compile_commands.json for clang-tidy. Any difference or finding fails the run.
bash scripts/format --check
bash scripts/tidy build "${tidy_what[@]}"
tier_done "release build, tests, format and tidy"

echo "== MPICH build: the library and its MPI tests"
# The same library and tests against MPICH (its wrapper and hydra launcher by name: Open MPI stays
# the system's default). MPI tests only (with --full, the unit tests too); pointer_chase and
# sparse_matrix at 3 and 4 PEs are left out even by --full (on 2 cores MPICH takes 35-80 s each
# there, and 1-2 PEs cover the same paths), and by default api with node and mesh routing at 4
# PEs too (18-20 s each; the release build runs them), exactly-once at 5 PEs and more (3-7 s
# each, 54 s in all: the release build runs them, and MPICH's transport is the same at 2 and 4
# PEs), pointer_chase at 2 (14 s of latency-bound hops; the release build and the bench app run
# it), the early-warning test (12 s of waiting, nothing MPI-specific), the kernels and
# variable-size messages over 3-D mesh and hypercube routing at 5 and 8 PEs (3-7 s each; mesh and
# node routing at 4 stay), and the misuse tests but the watchdog's, not even built (programs
# that must die with the message naming their mistake: about a minute to build and 30 s of tests;
# the release build runs them all, and MPICH's abort path stays tested by the watchdog's, the
# bad buffer size's and the killed-PE tests).
bash scripts/setup.sh build-mpich -DMPI_CXX_COMPILER="$(command -v mpicxx.mpich)" \
  -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)" \
  -DMAILROOM_BUILD_APPS=OFF -DMAILROOM_BUILD_EXAMPLES=OFF -DMAILROOM_BUILD_UNIT_TESTS="$mpich_unit" \
  -DMAILROOM_BUILD_NEG_TESTS=OFF -DMAILROOM_BUILD_MISUSE_TESTS="$mpich_misuse"
(cd build-mpich && ctest --output-on-failure -j 2 --timeout 300 -L 'mpi|unit' -LE "$mpich_out" \
  -E "$mpich_names")
tier_done "MPICH build and tests"

echo "== sanitizer build (clang, address + undefined), and $fuzz_seconds s of fuzzing"
# Debug information is line tables only: all a sanitizer's report needs (function, file and line,
# through inlined frames), and 10-20% quicker to build than -g.
san_flags="-O2 -gline-tables-only -DNDEBUG"
CC=clang CXX=clang++ bash scripts/setup.sh build-san -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_flags" \
  -DMAILROOM_SANITIZE=address,undefined -DMAILROOM_FUZZ=ON \
  -DMAILROOM_FUZZ_SECONDS="$fuzz_seconds" -DMAILROOM_BUILD_NEG_TESTS="$san_neg" \
  -DMAILROOM_BUILD_APPS="$san_apps" -DMAILROOM_BUILD_EXAMPLES="$san_apps"
# Leaks are reported, except allocations made inside MPI's own libraries (tests/sanitizers/
# lsan.supp). ASan's fast unwinder names one frame of those (MPI keeps no frame pointers; ours are
# kept): the library or plugin that allocated. The plugins stay mapped until the report at exit
# (tests/sanitizers/keep_loaded.cpp, preloaded below: dlclose does nothing), so that frame is
# named. (The slow unwinder walked through MPI's frames and doubled the tier's test time.)
# Thread-local storage is not scanned (use_tls=0): in some processes LeakSanitizer (clang 14)
# reads glibc's dynamic TLS vector at a bogus address and its tracer crashes at exit ("Tracer
# caught signal 11", after the test passed; every mailroom-bench run at 3 PEs did). Without TLS
# as roots, an object held only by a thread_local would be reported as a leak: a false report,
# never a hidden one.
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0:use_tls=0
export UBSAN_OPTIONS=print_stacktrace=1
# Left out by both tiers: the emulated hosts (run one at a time, through the same code as the MPI
# tests; the release build runs them), the simulated machine at 256 PEs with direct routing and
# with the link pool's variants (the release build runs them), pointer_chase and
# randperm_uniform at 3 and 4 PEs (sanitized and oversubscribed, 112-165 s each). The default
# tier also leaves out the MPI tests at 3 PEs and more that also run at 1 or 2 (label many_pes),
# api with node and mesh routing at 4 PEs and enable_disable routed (50-70 s each; exactly-once
# covers routing on the simulated machine, with node routing), exactly-once at 256 x 32 with
# mesh, 3-D mesh and hypercube routing on the simulated machine (28-48 s each) and at 256 x 4
# with hypercube routing (20 s; at 256 x 4 the 3-D mesh stays, and the release build runs them
# all), the simulated collectives,
# team selectors, distributions, message reductions, one-sided operations and progress() loop
# (14-22 s each there) and the global view (120 s at 64 PEs, 212 s at 256; the MPI global view
# tests stay, and the release build runs both), the install tests (the release and MPICH builds
# run them), the kernels and variable-size messages over 3-D mesh and hypercube routing at 5 and
# 8 PEs and message reductions routed at 6 PEs and over a hypercube (8-15 s each sanitized; the
# same routes run sanitized on the simulated machine, the release build runs them all), the
# tests labelled full, the negative-compile tests (the compiler's messages, which the release build
# checks), the simulated machine's mismatched constructions (the MPI ones run), the early
# warning's 12 s of waiting, the simulated budget test (12 s), and the exactly-once runs at 5 PEs
# and more and routed tight flow at 4 (4-25 s each sanitized, 100 s of the tier's test time; the
# release build runs them all, and the sanitized runs at 4 PEs of routed, mesh, small node
# buffers and reserved slots stay). A test that fails is run once more: a real failure fails
# twice. Three tests at a time: sanitized processes wait more (starting, the leak check and its
# symbolizer at exit), and with two the cores were busy 60% of the tier (138 s against 163).
(cd build-san && LD_PRELOAD="$root/build-san/tests/sanitizers/libmailroom_keep_loaded.so" \
  ctest --output-on-failure -j 3 --timeout 900 --repeat until-pass:2 -LE "$san_out" -E "$san_names")
tier_done "sanitizer build and tests"

echo "== thread-sanitizer build (clang): the tasks and progress tests (and the progress thread), 1 to 4 workers per PE, 1 to 4 PEs; the global view's caches per worker"
# Only the library and the threaded test: ThreadSanitizer checks mailroom's own threads (the
# workers, their staged sends, concurrent handlers, futures across tasks). Reports raised inside
# MPI's libraries are suppressed (tests/sanitizers/tsan.supp) and their interceptors ignored
# (they are not instrumented); a report in mailroom's code fails the test (exit code 66).
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
CC=clang CXX=clang++ MAILROOM_TARGETS="tasks progress_tasks global_array" bash scripts/setup.sh build-tsan \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$san_flags" \
  -DMAILROOM_SANITIZE=thread \
  -DMAILROOM_BUILD_APPS=OFF -DMAILROOM_BUILD_EXAMPLES=OFF
export TSAN_OPTIONS=suppressions=$root/tests/sanitizers/tsan.supp:ignore_noninstrumented_modules=1
(cd build-tsan && ctest --output-on-failure -j 2 --timeout 300 \
  -R '^(tasks(_w[0-9])?|progress_(tasks|loop|to_one|thread)(_w[0-9])?|global_array_(workers|thread))\.np[0-9]+$')
tier_done "thread-sanitizer build and tests"
