// SPDX-License-Identifier: MIT
// Stencil, MPI variant: the textbook halo exchange. Each iteration posts the receives of the rows
// next to this PE's block and the sends of its first and last rows (MPI_Irecv, MPI_Isend on
// MPI_COMM_WORLD), sweeps the rows that need neither, waits for all four (MPI_Waitall) and sweeps
// its first and last rows. No mailroom message is in flight meanwhile.
#include "stencil/stencil.hpp"

#include <mailroom/mpi.hpp>

namespace mailroom::apps::stencil {

namespace {
void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) MAILROOM_FAIL("stencil mpi: {} failed (error {})", what, rc);
}
}  // namespace

void mpi(const problem& pb, grid& a, grid& b) {
  constexpr int tag = 7;
  int me = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &me), "MPI_Comm_rank");
  const auto w = static_cast<int>(pb.width);  // (prepare refuses rows of more than INT_MAX)
  std::vector<double> above(static_cast<std::size_t>(w)), below(static_cast<std::size_t>(w));
  grid* from = &a;
  grid* to = &b;
  for (std::int64_t it = 0; it < pb.iterations; ++it) {
    const double* old = from->local().data();
    double* next = to->local().data();
    MPI_Request req[4];
    int n = 0;
    if (pb.has_above()) {
      check_mpi(MPI_Irecv(above.data(), w, MPI_DOUBLE, me - 1, tag, MPI_COMM_WORLD, &req[n++]),
                "MPI_Irecv");
      check_mpi(MPI_Isend(old, w, MPI_DOUBLE, me - 1, tag, MPI_COMM_WORLD, &req[n++]), "MPI_Isend");
    }
    if (pb.has_below()) {
      check_mpi(MPI_Irecv(below.data(), w, MPI_DOUBLE, me + 1, tag, MPI_COMM_WORLD, &req[n++]),
                "MPI_Irecv");
      check_mpi(MPI_Isend(old + (pb.count - 1) * pb.width, w, MPI_DOUBLE, me + 1, tag,
                          MPI_COMM_WORLD, &req[n++]),
                "MPI_Isend");
    }
    sweep_inner(pb, old, next);
    check_mpi(MPI_Waitall(n, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    sweep_edges(pb, old, next, above.data(), below.data());
    std::swap(from, to);
  }
}

}  // namespace mailroom::apps::stencil
