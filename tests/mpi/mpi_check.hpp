// What the MPI test programs share: a check that prints one line per failure on the PE that saw
// it (and counts it in the caller's `failures`), and a sum over all PEs.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>

namespace mailroom_test {

/// This PE and the PE count, for messages; set by the test's main.
inline int g_me = 0, g_pes = 1;

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

#define EXPECT(cond, ...)                                                                     \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::printf("rank %d: %s: check failed: %s: ", ::mailroom_test::g_me, __func__, #cond); \
      std::printf(__VA_ARGS__);                                                               \
      std::printf("\n");                                                                      \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)
