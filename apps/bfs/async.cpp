// SPDX-License-Identifier: MIT
// BFS, asynchronous variant, as Active Pebbles recommends: one mailbox that sends to itself,
// no levels kept in step. A visit carries a level and a parent; a vertex takes any visit that
// lowers its level and passes level + 1 on to its neighbours. Visits to one vertex that wait at
// the sender combine into the lowest (reduce(min)). Termination: the mailbox's self-loop.
#include "bfs/graph500.hpp"

#include <limits>

namespace mailroom::apps::bfs {

void async(const graph& g, std::int64_t root, symmetric_array<std::int64_t> parent) {
  struct visit {
    std::int64_t level, from;
    bool operator<(const visit& o) const { return level < o.level; }
  };
  const pe me = this_pe();
  std::vector<std::int64_t> level(g.local_vertices(), std::numeric_limits<std::int64_t>::max());
  mailroom::selector search{mailroom::graph{{0, 0}},
                            mailbox<at<visit>>([&](const at<visit>& m, pe, auto& self) {
                              if (m.value.level >= level[m.index]) return;
                              level[m.index] = m.value.level;
                              parent[m.index] = m.value.from;
                              const std::int64_t v = g.dist.global(me, m.index);
                              for (const std::int64_t w : g.neighbours(m.index))
                                self.template send<0>(g.dist, w, visit{m.value.level + 1, v});
                            }).reduce(min<>{})};
  if (g.dist.owner(root) == me) search.send<0>(g.dist, root, visit{0, root});
  search.done<0>();
  search.wait();
}

}  // namespace mailroom::apps::bfs
