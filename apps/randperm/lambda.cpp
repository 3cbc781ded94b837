// SPDX-License-Identifier: MIT
// Random permutation, lambda variant: each throw is a closure that runs on the slot's owner and,
// when the dart misses, throws it again from there (a self-loop in the dependency graph, closed
// by the runtime's quiescence detection).
#include "randperm/randperm.hpp"

namespace mailroom::apps::randperm {

std::vector<std::int64_t> lambda(std::int64_t n_per_pe, std::uint64_t seed) {
  const std::int64_t P = num_pes();  // 8 bytes: closures capture it
  const std::int64_t slots = 2 * n_per_pe * P;
  symmetric_scope scope;  // frees target on return
  symmetric_array<std::int64_t> target(static_cast<std::size_t>(2 * n_per_pe));
  std::fill(target.begin(), target.end(), -1);
  mailroom::selector darts{graph{{0, 0}}, lambdas{}};
  // Passed itself, so that the closure it sends can throw a missed dart again.
  const auto toss = [=, self = darts.ref()](const auto& again, std::int64_t d) -> void {
    const auto s = slot_of(d, seed, slots);
    self->send<0>(pe(s % P), [=] {
      std::int64_t loser = d;
      if ((loser & k_value) < (target[s / P] & k_value)) std::swap(loser, target[s / P]);
      if (loser != -1) again(again, loser + k_missed);
    });
  };
  const std::int64_t first = this_pe().rank() * n_per_pe;  // (not a call per dart)
  for (std::int64_t d = first; d < first + n_per_pe; ++d) toss(toss, d);
  darts.done<0>();
  darts.wait();
  std::vector<std::int64_t> part;
  for (const std::int64_t t : target)
    if (t != -1) part.push_back(t & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
