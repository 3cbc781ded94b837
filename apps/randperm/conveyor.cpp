// SPDX-License-Identifier: MIT
// Random permutation, conveyor variant: Bale's push/pull/advance loop over a
// mailroom::conveyor<T>. A conveyor cannot take back the darts that miss once it is ending, so
// the darts go in rounds, one conveyor each, until an allreduce finds no PE holding one.
#include "randperm/randperm.hpp"

#include <numeric>

namespace mailroom::apps::randperm {

std::vector<std::int64_t> conveyor(std::int64_t n_per_pe, std::uint64_t seed) {
  const int P = num_pes();
  const std::int64_t slots = 2 * n_per_pe * P;
  const auto slot = [=](std::int64_t d) { return slot_of(d, seed, slots); };
  std::vector<std::int64_t> target(static_cast<std::size_t>(2 * n_per_pe), -1);
  std::vector<std::int64_t> darts(static_cast<std::size_t>(n_per_pe)), missed;
  std::iota(darts.begin(), darts.end(), this_pe().rank() * n_per_pe);  // this round's throws
  while (all_reduce(std::ssize(darts), max<>{}) > 0) {
    mailroom::conveyor<std::int64_t> c;
    std::size_t i = 0;
    std::int64_t d = 0;
    pe from;
    while (c.advance(i == darts.size())) {
      for (; i < darts.size(); ++i)
        if (!c.push(pe(slot(darts[i]) % P), darts[i])) break;
      while (c.pull(from, d)) {
        std::int64_t& t = target[slot(d) / P];
        if ((d & k_value) < (t & k_value)) std::swap(d, t);
        if (d != -1) missed.push_back(d + k_missed);  // the loser, thrown in the next round
      }
    }
    darts.swap(missed);
    missed.clear();
  }
  std::vector<std::int64_t> part;
  for (const std::int64_t t : target)
    if (t != -1) part.push_back(t & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
