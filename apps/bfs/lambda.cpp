// SPDX-License-Identifier: MIT
// BFS, lambda variant: level-synchronous, one actor of lambda messages per level. A visit is a
// closure run on the neighbour's owner; what it touches there (the parent array and the next
// frontier) it reaches through one symmetric handle, the same on every PE.
#include "bfs/graph500.hpp"

namespace mailroom::apps::bfs {

void lambda(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent) {
  const pe me = this_pe();
  symmetric_scope scope;  // frees the handle on return
  const symmetric<std::vector<std::size_t>*> next_here(nullptr);
  by_levels(g, root, parent, [&](const auto& frontier, auto& next) {
    *next_here = &next;
    actor<> level;
    for (const std::size_t l : frontier) {
      const std::int64_t u = g.dist.global(me, l);
      for (const std::int64_t v : g.neighbours(l))
        level.send(g.dist.owner(v), [=, at = g.dist.local(v)] {
          if (parent[at] >= 0) return;
          parent[at] = u;
          (*next_here)->push_back(at);
        });
    }
    level.done();
    level.wait();
  });
}

}  // namespace mailroom::apps::bfs
