// SPDX-License-Identifier: MIT
// BFS, conveyor variant: level-synchronous, one conveyor per level, pushed from a cursor over
// the frontier's edges and pulled in the same loop (Bale's exstack/conveyor style).
#include "bfs/graph500.hpp"

namespace mailroom::apps::bfs {

void conveyor(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent) {
  struct visit {
    std::int64_t local, from;
  };
  const pe me = this_pe();
  by_levels(g, root, parent, [&](const auto& frontier, auto& next) {
    mailroom::conveyor<visit> c;
    std::size_t f = 0;   // the frontier vertex being expanded
    std::int64_t k = 0;  // its next edge
    if (!frontier.empty()) k = g.offsets[frontier[0]];
    visit m{};
    pe from;
    while (c.advance(f == frontier.size())) {
      for (; f < frontier.size(); ++f) {
        const std::size_t l = frontier[f];
        const std::int64_t u = g.dist.global(me, l), end = g.offsets[l + 1];
        for (; k < end; ++k) {
          const std::int64_t v = g.adjacency[static_cast<std::size_t>(k)];
          if (!c.push(g.dist.owner(v), {static_cast<std::int64_t>(g.dist.local(v)), u})) break;
        }
        if (k < end) break;  // full: pull, then go on from this edge
        if (f + 1 < frontier.size()) k = g.offsets[frontier[f + 1]];
      }
      while (c.pull(from, m))
        if (parent[static_cast<std::size_t>(m.local)] < 0) {
          parent[static_cast<std::size_t>(m.local)] = m.from;
          next.push_back(static_cast<std::size_t>(m.local));
        }
    }
  });
}

}  // namespace mailroom::apps::bfs
