// SPDX-License-Identifier: MIT
// Random permutation, selector variant: one typed mailbox of darts on the slots' owners; a dart
// that misses is thrown again from there, to the same mailbox (a self-loop in the dependency
// graph, closed by the runtime's quiescence detection).
#include "randperm/randperm.hpp"

namespace mailroom::apps::randperm {

std::vector<std::int64_t> selector(std::int64_t n_per_pe, std::uint64_t seed) {
  const int P = num_pes();
  const std::int64_t slots = 2 * n_per_pe * P;
  const auto slot = [=](std::int64_t d) { return slot_of(d, seed, slots); };
  std::vector<std::int64_t> target(static_cast<std::size_t>(2 * n_per_pe), -1);
  mailroom::selector darts{
      graph{{0, 0}},
      mailbox<std::int64_t>([slots_here = target.data(), slot, P](std::int64_t d, pe, auto& self) {
        std::int64_t& t = slots_here[slot(d) / P];
        if ((d & k_value) < (t & k_value)) std::swap(d, t);
        if (d != -1) self.template send<0>(pe(slot(d + k_missed) % P), d + k_missed);
      })};
  const std::int64_t first = this_pe().rank() * n_per_pe;  // (not a call per dart)
  for (std::int64_t d = first; d < first + n_per_pe; ++d) darts.send<0>(pe(slot(d) % P), d);
  darts.done<0>();
  darts.wait();
  std::vector<std::int64_t> part;
  for (const std::int64_t t : target)
    if (t != -1) part.push_back(t & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
