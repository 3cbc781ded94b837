// SPDX-License-Identifier: MIT
// BFS, selector variant: level-synchronous, one actor per level. A frontier vertex sends each
// neighbour a visit addressed by the distribution (at<parent>{u, local index}); the handler
// on the neighbour's owner keeps the first visit's parent and adds the vertex to the next
// frontier.
#include "bfs/graph500.hpp"

namespace mailroom::apps::bfs {

void selector(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent) {
  const pe me = this_pe();
  by_levels(g, root, parent, [&](const auto& frontier, auto& next) {
    actor level{mailbox<at<std::int64_t>>([&](const at<std::int64_t>& m) {
      if (parent[m.index] >= 0) return;
      parent[m.index] = m.value;
      next.push_back(m.index);
    })};
    for (const std::size_t l : frontier) {
      const std::int64_t u = g.dist.global(me, l);
      for (const std::int64_t v : g.neighbours(l)) level.send(g.dist, v, u);
    }
    level.done();
    level.wait();
  });
}

}  // namespace mailroom::apps::bfs
