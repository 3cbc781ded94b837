// SPDX-License-Identifier: MIT
// Random permutation, naive variant: Bale's AGP dart throwing, one MPI_Compare_and_swap on the
// target slot per attempt, completed before the next.
#include "common/pgas.hpp"
#include "randperm/randperm.hpp"

namespace mailroom::apps::randperm {

std::vector<std::int64_t> naive(std::int64_t n_per_pe, std::uint64_t seed) {
  const int P = num_pes();
  const std::int64_t slots = 2 * n_per_pe * P;
  const auto slot = [=](std::int64_t d) { return slot_of(d, seed, slots); };
  const symmetric_scope scope;  // frees the array below on return
  auto target =
      symmetric_copy(std::vector<std::int64_t>(static_cast<std::size_t>(2 * n_per_pe), -1));
  barrier();
  for (std::int64_t k = 0; k < n_per_pe; ++k) {
    for (std::int64_t d = this_pe().rank() * n_per_pe + k; d != -1;) {  // the dart in hand
      const std::int64_t s = slot(d);
      const pe owner(s % P);
      const auto at = static_cast<std::size_t>(s / P);
      std::int64_t held = -1, was = -1;  // what the slot holds, as far as we know
      while ((d & k_value) < (held & k_value) &&
             (was = target.compare_exchange(owner, at, held, d)) != held)
        held = was;
      // Either d went in and `held` came out (-1: nothing did), or `held` keeps the slot.
      const std::int64_t loser = (d & k_value) < (held & k_value) ? held : d;
      d = loser == -1 ? -1 : loser + k_missed;
    }
  }
  barrier();
  std::vector<std::int64_t> part;
  for (std::size_t i = 0; i < static_cast<std::size_t>(2 * n_per_pe); ++i)
    if (target[i] != -1) part.push_back(target[i] & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
