// SPDX-License-Identifier: MIT
// Stencil, local variant: the floor. The same sweeps of this PE's block with no communication:
// the rows next to it stay at their initial values, as if they were the grid's fixed boundary.
#include "stencil/stencil.hpp"

namespace mailroom::apps::stencil {

void local(const problem& pb, grid& a, grid& b) {
  grid* from = &a;
  grid* to = &b;
  for (std::int64_t it = 0; it < pb.iterations; ++it) {
    const double* old = from->local().data();
    double* next = to->local().data();
    sweep_inner(pb, old, next);
    sweep_edges(pb, old, next, pb.fixed_above.data(), pb.fixed_below.data());
    std::swap(from, to);
  }
}

}  // namespace mailroom::apps::stencil
