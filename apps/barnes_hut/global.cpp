// SPDX-License-Identifier: MIT
// Barnes-Hut, global variant: every PE's tree is published in two global arrays (cells, bodies)
// and each body walks every tree, in PE order, through the global view: another PE's cells and
// bodies come through the cache (or in place, from a PE whose memory this one maps). The top
// levels of every other tree (its first cells: the trees are breadth first) are prefetched.
#include "barnes_hut/barnes_hut.hpp"

namespace mailroom::apps::barnes_hut {

namespace {
// Cells of each other tree to prefetch: its top levels, which every walk of it reads.
constexpr std::int64_t k_prefetch_cells = 1024;
}  // namespace

void global(const problem& pb, state& st, views& v) {
  const int P = num_pes(), me = this_pe().rank();
  const double eps2 = pb.eps * pb.eps;
  for (std::int64_t s = 0; s < pb.steps; ++s) {
    begin_step(pb, st);
    v.publish(st);
    const global_array<cell, pow2_blocks>& cells = v.cells();
    const global_array<body, pow2_blocks>& bodies = v.bodies();
    std::vector<future<void>> fetches;
    for (int q = 0; q < P; ++q)
      if (q != me && st.cells_of[static_cast<std::size_t>(q)] > 0)
        fetches.push_back(
            cells.prefetch(cells.dist().first(q),
                           static_cast<std::size_t>(std::min(
                               st.cells_of[static_cast<std::size_t>(q)], k_prefetch_cells))));
    for (std::size_t i = 0; i < st.particles.size(); ++i) {
      vec3 a;
      for (int q = 0; q < P; ++q) {
        const std::int64_t cell0 = cells.dist().first(q), body0 = bodies.dist().first(q);
        const vec3 part = walk([&](std::int32_t l) { return cells.get(cell0 + l); },
                               [&](std::int32_t l) { return bodies.get(body0 + l); },
                               st.cells_of[static_cast<std::size_t>(q)], st.at[i],
                               q == me ? static_cast<std::int64_t>(i) : -1, eps2);
        a += part;
      }
      st.acc[i] = a;
      // Another PE's gets of this PE's pages need it to call MPI now and then (a one-sided get
      // waits for its target's progress in MPI libraries without hardware RMA).
      progress();
    }
    for (future<void>& f : fetches) f.wait();
    end_step(pb, st);
  }
}

}  // namespace mailroom::apps::barnes_hut
