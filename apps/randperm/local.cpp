// SPDX-License-Identifier: MIT
// Random permutation, local variant: the floor. The same algorithm on this PE's share alone: its
// darts thrown at its own 2n slots (global slot s at offset s / P, as histogram's local variant
// does), dart for dart the same throws; no communication. In rounds, as bsp's supersteps: every
// dart in hand thrown, those that missed thrown again in the next (no slower here than throwing
// each dart until it sticks, naive's order).
#include "randperm/randperm.hpp"

#include <numeric>
#include <utility>

namespace mailroom::apps::randperm {

std::vector<std::int64_t> local(std::int64_t n_per_pe, std::uint64_t seed) {
  const int P = num_pes();
  const std::int64_t slots = 2 * n_per_pe * P;
  const auto slot = [=](std::int64_t d) { return slot_of(d, seed, slots) / P; };
  std::vector<std::int64_t> target(static_cast<std::size_t>(2 * n_per_pe), -1);
  std::vector<std::int64_t> darts(static_cast<std::size_t>(n_per_pe)), missed;
  std::iota(darts.begin(), darts.end(), this_pe().rank() * n_per_pe);
  while (!darts.empty()) {
    missed.clear();
    for (std::int64_t dart : darts) {
      std::int64_t& t = target[slot(dart)];
      if ((dart & k_value) < (t & k_value)) std::swap(dart, t);
      if (dart != -1) missed.push_back(dart + k_missed);
    }
    darts.swap(missed);
  }
  std::vector<std::int64_t> part;
  for (const std::int64_t t : target)
    if (t != -1) part.push_back(t & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
