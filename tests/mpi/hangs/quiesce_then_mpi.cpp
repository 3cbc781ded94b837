// SPDX-License-Identifier: MIT
// The program's own MPI beside mailroom: every PE but PE 0 sends `n` messages to PE 0 (an actor
// still open: no done() yet), then every PE calls mr::quiesce() and then MPI_Allreduce on the
// program's MPI_COMM_WORLD. Without quiesce, PE 0 would sit in MPI_Allreduce taking in no buffers
// while the senders wait for its acknowledgements. After quiesce every message must already have
// been handled: the allreduce of the counts, right after it, must see all of them. The actor is
// then used again (quiesce leaves it usable) and closed as usual. The program's communicator
// keeps its error handler.
#include <mpi.h>
#include <mailroom/mailroom.hpp>

#include "../mpi_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank(), pes = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  int failures = 0;

  if (!mailroom_test::errors_are_fatal(MPI_COMM_WORLD)) {
    std::printf("rank %d: mailroom changed MPI_COMM_WORLD's error handler\n", me);
    ++failures;
  }

  std::int64_t got = 0;
  // A reply for every tenth message: quiesce must also wait for what handlers send.
  struct ping {
    std::int64_t value;
  };
  std::int64_t replies = 0;
  mr::selector sel{mr::mailbox<ping>([&](ping p, mr::pe from, auto& self) {
                     got += p.value;
                     if (got % 10 == 0) self.template send<1>(from, ping{1});
                   }),
                   mr::mailbox<ping>([&](ping p) { replies += p.value; })};
  if (me != 0)
    for (std::int64_t i = 0; i < n; ++i) sel.send<0>(mr::pe(0), ping{1});
  mr::quiesce();
  std::int64_t totals[2] = {got, replies};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (totals[0] != n * (pes - 1)) {
    std::printf("rank %d: after quiesce, %lld messages handled, expected %lld\n", me,
                static_cast<long long>(totals[0]), static_cast<long long>(n * (pes - 1)));
    ++failures;
  }
  if (totals[1] != n * (pes - 1) / 10) {
    std::printf("rank %d: after quiesce, %lld replies handled, expected %lld\n", me,
                static_cast<long long>(totals[1]), static_cast<long long>(n * (pes - 1) / 10));
    ++failures;
  }
  // Still usable: one more round, closed by the termination protocol.
  sel.send<0>(mr::pe(0), ping{1});
  sel.done<0>();
  sel.wait();
  std::int64_t last = got;
  MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (last != n * (pes - 1) + pes) {
    std::printf("rank %d: %lld messages handled in all, expected %lld\n", me,
                static_cast<long long>(last), static_cast<long long>(n * (pes - 1) + pes));
    ++failures;
  }
  if (failures == 0 && me == 0) std::printf("quiesce_then_mpi: PASSED\n");
  return failures == 0 ? 0 : 1;
}
