// SPDX-License-Identifier: MIT
// What the test programs share: a check that prints one line per failure on the PE that saw it
// (and counts it in the caller's `failures`), this PE and the PE count, the verdict over all PEs
// and a hash. No MPI: the programs that include only this also run on the simulated machine.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>

namespace mailroom_test {

/// This PE and the PE count (once the runtime exists), as ints: asked of the runtime each time,
/// not kept in globals, which the PEs of the simulated machine would share.
/// (Their copy constructors make passing them to printf's `...` an error: pass int{g_me}.)
struct this_rank {
  constexpr this_rank() = default;
  constexpr this_rank(const this_rank&) {}
  operator int() const { return mailroom::this_pe().rank(); }  // NOLINT: converts on purpose
};
struct pe_count {
  constexpr pe_count() = default;
  constexpr pe_count(const pe_count&) {}
  operator int() const { return mailroom::num_pes(); }  // NOLINT: converts on purpose
};
inline constexpr this_rank g_me{};
inline constexpr pe_count g_pes{};

/// Runs `body` under mpiexec, or on the simulated machine when MAILROOM_SIM is set (the `scale`
/// tests run the same programs on hundreds of PEs that way).
template <class F>
int run_main(F&& body) {
  if (auto m = mailroom::simulated_machine::from_environment()) return mailroom::simulate(*m, body);
  return body();
}

/// Prints PASSED or FAILED on PE 0 with the failures of every PE; returns main's exit status.
inline int verdict(int failures) {
  const std::int64_t total = mailroom::all_reduce(std::int64_t{failures});
  if (g_me == 0)
    std::printf("%s (%lld failures)\n", total == 0 ? "PASSED" : "FAILED",
                static_cast<long long>(total));
  return total == 0 ? 0 : 1;
}

/// Scatters the bits of x (the first round of MurmurHash3's finalizer): destinations, keys and
/// payloads that look random and are the same on every PE.
inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

}  // namespace mailroom_test

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::printf("rank %d: %s: check failed: %s: ", int{::mailroom_test::g_me}, __func__, #cond); \
      std::printf(__VA_ARGS__);                                                                    \
      std::printf("\n");                                                                           \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)
