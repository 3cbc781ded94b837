// SPDX-License-Identifier: MIT
// mailroom on a communicator of the program's: the program initialises MPI itself, splits the
// world into two halves (even and odd ranks) and starts mailroom on its half. PE numbers are ranks
// in the half; a histogram within the half is exact; the program's own collectives on the world
// communicator work between mailroom calls (after mr::quiesce()); mailroom leaves the program's
// error handlers alone and MPI for the program to finalise.
#include <mailroom/mailroom.hpp>
#include <mailroom/mpi.hpp>

#include "../mpi_check.hpp"

#include <cstdint>
#include <cstdio>

namespace mr = mailroom;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  int half_rank = 0, half_size = 1;
  MPI_Comm_rank(half, &half_rank);
  MPI_Comm_size(half, &half_size);
  int failures = 0;
  {
    mr::runtime rt(mr::mpi_communicator(half));
    const int me = mr::this_pe().rank(), pes = mr::num_pes();
    if (me != half_rank || pes != half_size) {
      std::printf("world rank %d: mailroom says PE %d of %d, its communicator %d of %d\n",
                  world_rank, me, pes, half_rank, half_size);
      ++failures;
    }
    std::int64_t counts[4] = {0, 0, 0, 0};
    mr::actor h{mr::mailbox<std::int64_t>([&](std::int64_t slot) { counts[slot] += 1; })};
    for (std::int64_t i = 0; i < 100000; ++i) h.send(mr::pe(i % pes), (i / pes) % 4);
    mr::quiesce();
    // The program's own collective over the whole world, between mailroom calls.
    std::int64_t world_total = counts[0] + counts[1] + counts[2] + counts[3];
    MPI_Allreduce(MPI_IN_PLACE, &world_total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (world_total != 100000LL * world_size) {
      std::printf("world rank %d: %lld updates over the world, expected %lld\n", world_rank,
                  static_cast<long long>(world_total), 100000LL * world_size);
      ++failures;
    }
    h.done();
    h.wait();
    std::int64_t mine = 0;
    for (std::int64_t i = 0; i < 100000; ++i) mine += i % pes == me ? 1 : 0;
    std::int64_t sum = counts[0] + counts[1] + counts[2] + counts[3];
    if (sum != mine * pes) {
      std::printf("world rank %d: PE %d of its half handled %lld updates, expected %lld\n",
                  world_rank, me, static_cast<long long>(sum), static_cast<long long>(mine * pes));
      ++failures;
    }
  }
  using mailroom_test::errors_are_fatal;
  if (!errors_are_fatal(half) || !errors_are_fatal(MPI_COMM_WORLD)) {
    std::printf("world rank %d: mailroom changed an error handler of the program's\n", world_rank);
    ++failures;
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    std::printf("world rank %d: mailroom finalised MPI, which the program initialised\n",
                world_rank);
    ++failures;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  if (failures == 0 && world_rank == 0) std::printf("runtime_on_communicator: PASSED\n");
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
