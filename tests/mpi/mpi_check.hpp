// SPDX-License-Identifier: MIT
// What the MPI test programs share beyond expect.hpp: a sum over all PEs and a check of the
// program's communicator, through MPI itself.
#pragma once

#include "expect.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>

namespace mailroom_test {

inline std::int64_t sum_over_pes(std::int64_t v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

/// Whether `comm` still has MPI's default error handler (mailroom must not change it).
inline bool errors_are_fatal(MPI_Comm comm) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(comm, &handler);
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  MPI_Errhandler_free(&handler);
  return fatal;
}

}  // namespace mailroom_test
