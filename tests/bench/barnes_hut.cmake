# SPDX-License-Identifier: MIT
# Barnes-Hut (included by tests/bench/CMakeLists.txt): every variant's accelerations against a
# direct sum and the positions the same bits for every variant, at 1-4 PEs; with the global view's
# cache for every other PE's cells (MAILROOM_GLOBAL_CACHE=all), so that pages are fetched within
# the node; and without the node's shared memory (MAILROOM_SHARED_HEAP=0), every access to another
# PE's cell through MPI's one-sided operations (alone: beside another test on 2 cores, it and its
# neighbour took 11-13 s each against 1-5 s, each PE spinning inside MPI for the other's answer).
mailroom_add_mpi_test(bench_barnes-hut TARGET mailroom-bench ARGS barnes-hut --quick
                      RANKS 1 2 3 4 TIMEOUT 180)
mailroom_add_mpi_test(bench_barnes-hut_cache_all TARGET mailroom-bench ARGS barnes-hut --quick
                      RANKS 2 4 TIMEOUT 180 ENV MAILROOM_GLOBAL_CACHE=all)
mailroom_add_mpi_test(bench_barnes-hut_no_shared_heap TARGET mailroom-bench ARGS barnes-hut
                      --quick RANKS 2 TIMEOUT 180 ENV MAILROOM_SHARED_HEAP=0 SERIAL)
