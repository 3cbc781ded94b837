// What the test programs share: a check that prints one line per failure on the PE that saw it
// (and counts it in the caller's `failures`), this PE and the PE count, and the verdict over all
// PEs. No MPI: the programs that include only this also run on the simulated machine.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>

namespace mailroom_test {

/// This PE and the PE count, for messages; set by the test's main.
inline int g_me = 0, g_pes = 1;

/// Sets g_me and g_pes (once the runtime exists).
inline void know_pes() {
  g_me = mailroom::this_pe().rank();
  g_pes = mailroom::num_pes();
}

/// Prints PASSED or FAILED on PE 0 with the failures of every PE; returns main's exit status.
inline int verdict(int failures) {
  const std::int64_t total = mailroom::all_reduce(std::int64_t{failures});
  if (g_me == 0)
    std::printf("%s (%lld failures)\n", total == 0 ? "PASSED" : "FAILED",
                static_cast<long long>(total));
  return total == 0 ? 0 : 1;
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
