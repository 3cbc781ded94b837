// SPDX-License-Identifier: MIT
// Random permutation, lambda variant: each throw is a closure that runs on the slot's owner and,
// when the dart misses, throws it again from there (a self-loop in the dependency graph, closed
// by the runtime's quiescence detection). What every throw needs (the seed, the slot count, the
// PE count, the slots) it reaches through one symmetric handle, as triangles' lambda variant
// does: a closure then has 4 words, 2 of them varying, within the sends compiled per set of
// varying words (up to 5). Captured one by one, with the thrower, it had 9 and took 1.8x the
// selector's instructions.
#include "randperm/randperm.hpp"

namespace mailroom::apps::randperm {

std::vector<std::int64_t> lambda(std::int64_t n_per_pe, std::uint64_t seed) {
  const std::int64_t P = num_pes();
  symmetric_scope scope;  // frees `here` on return
  std::vector<std::int64_t> target(static_cast<std::size_t>(2 * n_per_pe), -1);
  struct context {  // the same on every PE but `slots_here`, this PE's slots
    std::uint64_t seed;
    std::int64_t slots, pes;
    std::int64_t* slots_here;
  };
  const symmetric<context> here({seed, 2 * n_per_pe * P, P, target.data()});
  mailroom::selector darts{graph{{0, 0}}, lambdas{}};
  // Passed itself, so that the closure it sends can throw a missed dart again (from the PE it
  // runs on, through the selector it runs in).
  const auto toss = [here](const auto& again, auto& sel, std::int64_t d) -> void {
    const std::int64_t s = slot_of(d, here->seed, here->slots);
    const std::int64_t pes = here->pes;
    sel.template send<0>(pe(s % pes), [=](pe, auto& self) {
      std::int64_t& t = here->slots_here[s / here->pes];
      std::int64_t loser = d;
      if ((loser & k_value) < (t & k_value)) std::swap(loser, t);
      if (loser != -1) again(again, self, loser + k_missed);
    });
  };
  const std::int64_t first = this_pe().rank() * n_per_pe;  // (not a call per dart)
  for (std::int64_t d = first; d < first + n_per_pe; ++d) toss(toss, darts, d);
  darts.done<0>();
  darts.wait();
  std::vector<std::int64_t> part;
  for (const std::int64_t t : target)
    if (t != -1) part.push_back(t & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
