// SPDX-License-Identifier: MIT
// BFS, naive variant: level-synchronous, one-sided. Each frontier vertex claims its neighbours
// with a remote compare-and-swap on their parent; the winner appends the neighbour to its
// owner's next frontier (a remote fetch-and-add for the slot, then a put). A barrier ends each
// level.
#include "bfs/graph500.hpp"

namespace mailroom::apps::bfs {

void naive(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent) {
  symmetric_scope scope;  // frees the arrays on return
  symmetric_array<std::int64_t> next(g.most_local()), count(1);
  const pe me = this_pe();
  by_levels(g, root, parent, [&](const auto& frontier, auto& out) {
    count.store(me, 0, 0);
    barrier();
    for (const std::size_t l : frontier) {
      const std::int64_t u = g.dist.global(me, l);
      for (const std::int64_t v : g.neighbours(l)) {
        const place p = place_of(g.dist, v);
        if (parent.compare_exchange(p.owner, p.local, -1, u) != -1) continue;
        const std::int64_t slot = count.fetch_add(p.owner, 0, 1);
        next.put(p.owner, static_cast<std::size_t>(slot), static_cast<std::int64_t>(p.local));
      }
    }
    barrier();
    const std::int64_t n = count.load(me, 0);
    for (std::int64_t k = 0; k < n; ++k) out.push_back(static_cast<std::size_t>(next[k]));
  });
}

}  // namespace mailroom::apps::bfs
