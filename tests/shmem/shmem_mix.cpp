// SPDX-License-Identifier: MIT
// mailroom inside an OpenSHMEM program, as a port from Bale or HClib-Actor starts: shmem_init(),
// then the runtime, actor messages and OpenSHMEM atomics in one program, built with oshc++ (no
// MPI C++ bindings to link). Checks that shmem_my_pe() is this_pe(), the messages' sum and the
// atomics' count.
#include <shmem.h>

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>

namespace mr = mailroom;

namespace {
long g_arrivals = 0;  // symmetric: a global of the program, the same on every PE
}

int main(int argc, char** argv) {
  shmem_init();
  int failures = 0;
  {
    mr::runtime rt(argc, argv);
    const int me = mr::this_pe().rank(), pes = mr::num_pes();
    if (shmem_my_pe() != me || shmem_n_pes() != pes) {
      std::printf("rank %d: shmem_my_pe() %d of %d, this_pe() %d of %d\n", me, shmem_my_pe(),
                  shmem_n_pes(), me, pes);
      ++failures;
    }
    std::int64_t got = 0;
    mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t v) { got += v; })};
    for (int round = 0; round < 1000; ++round)
      for (int d = 0; d < pes; ++d) a.send(mr::pe(d), me + 1);
    a.done();
    a.wait();
    const std::int64_t want = 1000LL * pes * (pes + 1) / 2;
    if (got != want) {
      std::printf("rank %d: actor messages sum to %lld, want %lld\n", me,
                  static_cast<long long>(got), static_cast<long long>(want));
      ++failures;
    }
    // OpenSHMEM's own calls between mailroom's: after quiesce(), nothing of mailroom's is in
    // flight.
    mr::quiesce();
    for (int d = 0; d < pes; ++d) shmem_long_atomic_add(&g_arrivals, 1, d);
    shmem_barrier_all();
    if (g_arrivals != pes) {
      std::printf("rank %d: %ld atomic adds arrived, want %d\n", me, g_arrivals, pes);
      ++failures;
    }
    if (me == 0 && failures == 0) std::printf("shmem_mix: PASSED at %d PEs\n", pes);
  }
  shmem_finalize();
  return failures == 0 ? 0 : 1;
}
