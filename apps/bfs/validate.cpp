// SPDX-License-Identifier: MIT
// Graph500's validation of one search (specification 2.0, section 7), distributed: each PE
// checks its vertices and its share of the input tuples, reading other PEs' vertices with
// mailroom::gather. Levels come from the parents (as the reference code computes them), so the
// tree-edge check on levels holds by construction; the checks on the input tuples are what show
// the levels to be BFS levels.
#include "bfs/graph500.hpp"

#include "common/driver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

namespace mailroom::apps::bfs {

namespace {
constexpr std::int64_t k_unreached = -1, k_pending = -2, k_broken = -3;
}  // namespace

const char* describe(check c) {
  switch (c) {
    case check::none:
      return "passed";
    case check::root:
      return "the root is its own parent, and no other vertex is";
    case check::parent_range:
      return "every parent is -1 or a vertex";
    case check::tree:
      return "the parents form a tree whose root is the search key";
    case check::edge_levels:
      return "every input edge joins levels that differ by at most one";
    case check::component:
      return "every vertex of the root's component is reached";
    case check::tree_edges:
      return "every tree edge is an input edge";
  }
  return "?";
}

validator::validator(const graph& g) : g_(g), nodes_(g.most_local()) {
  const auto P = static_cast<std::size_t>(num_pes());
  ghosts& x = ghosts_;
  // The distinct ends, by owner then number.
  std::vector<std::int64_t> ends;
  ends.reserve(2 * g.tuples.size());
  for (const edge& e : g.tuples) {
    ends.push_back(e.u);
    ends.push_back(e.v);
  }
  const auto before = [&](std::int64_t a, std::int64_t b) {
    return std::pair{g.dist.owner(a).rank(), a} < std::pair{g.dist.owner(b).rank(), b};
  };
  std::vector<std::int64_t> distinct(ends);
  std::sort(distinct.begin(), distinct.end(), before);
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  MAILROOM_CHECK(distinct.size() <= std::numeric_limits<std::uint32_t>::max(),
                 "bfs: {} distinct vertices at this PE's tuples' ends", distinct.size());
  x.slot.resize(ends.size());
  for (std::size_t j = 0; j < ends.size(); ++j)
    x.slot[j] = static_cast<std::uint32_t>(
        std::lower_bound(distinct.begin(), distinct.end(), ends[j], before) - distinct.begin());
  x.counts.assign(P, 0);
  x.displs.assign(P, 0);
  std::vector<std::int64_t> ask;
  ask.reserve(distinct.size());
  for (const std::int64_t v : distinct) {
    ++x.counts[static_cast<std::size_t>(g.dist.owner(v).rank())];
    ask.push_back(static_cast<std::int64_t>(g.dist.local(v)));
  }
  for (std::size_t p = 1; p < P; ++p) x.displs[p] = x.displs[p - 1] + x.counts[p - 1];
  x.serve_counts = all_to_all(std::span<const int>(x.counts));
  x.serve_displs.assign(P, 0);
  for (std::size_t p = 1; p < P; ++p)
    x.serve_displs[p] = x.serve_displs[p - 1] + x.serve_counts[p - 1];
  const std::vector<std::int64_t> serve =
      all_to_all_v(std::span<const std::int64_t>(ask), std::span<const int>(x.counts),
                   std::span<const int>(x.displs));
  x.serve.assign(serve.begin(), serve.end());
  x.reply.resize(x.serve.size());
}

// The nodes of every ghost, by slot: one all-to-all.
std::vector<validator::node> validator::read_ghosts() {
  ghosts& x = ghosts_;
  for (std::size_t i = 0; i < x.reply.size(); ++i) x.reply[i] = nodes_[x.serve[i]];
  return all_to_all_v(std::span<const node>(x.reply), std::span<const int>(x.serve_counts),
                      std::span<const int>(x.serve_displs));
}

validator::~validator() { symmetric_free(nodes_); }

validation validator::operator()(std::int64_t root, std::span<const std::int64_t> parent,
                                 bool say) {
  const pe me = this_pe();
  const std::size_t n = g_.local_vertices();
  const std::int64_t N = g_.vertices();
  check failed = check::none;
  int said = 0;
  const auto fail = [&](check c, const std::string& what) {
    if (failed == check::none || c < failed) failed = c;
    if (say && said++ == 0)
      fmt::print(stderr, "mailroom-bench: bfs: validation FAILED on PE {} (root {}): {} ({})\n",
                 me.rank(), root, what, describe(c));
  };
  // The whole job agrees on the first failed check (the smallest).
  const auto agreed = [&] {
    const int code = all_reduce(failed == check::none ? 255 : static_cast<int>(failed), min<>{});
    return code == 255 ? check::none : static_cast<check>(code);
  };
  validation out;

  // The root, and every parent a vertex or -1.
  for (std::size_t l = 0; l < n; ++l) {
    const std::int64_t v = g_.dist.global(me, l), p = parent[l];
    nodes_[l] = {v == root ? 0 : (p == -1 ? k_unreached : k_pending), p};
    if (p < -1 || p >= N)
      fail(check::parent_range, fmt::format("vertex {} has parent {}", v, p));
    else if (v == root && p != root)
      fail(check::root, fmt::format("the root's parent is {}", p));
    else if (v != root && p == v)
      fail(check::root, fmt::format("vertex {} is its own parent but not the root", v));
  }
  if ((out.failed = agreed()) != check::none) return out;

  // Levels from the parents, a round per level: a vertex whose parent has a level is one deeper.
  // A parent that is unreached breaks the chains through it; chains that never end at the root
  // (a cycle) are left pending when a round resolves nothing anywhere.
  std::vector<std::size_t> pending;
  for (std::size_t l = 0; l < n; ++l)
    if (nodes_[l].level == k_pending) pending.push_back(l);
  std::vector<std::int64_t> ask;
  std::vector<node> got;
  for (;;) {
    ask.clear();
    for (const std::size_t l : pending) ask.push_back(nodes_[l].parent);
    got.resize(ask.size());
    gather(nodes_, std::span<const std::int64_t>(ask), std::span<node>(got), g_.dist);
    std::int64_t resolved = 0;
    std::size_t kept = 0;
    for (std::size_t k = 0; k < pending.size(); ++k) {
      const std::size_t l = pending[k];
      const std::int64_t lp = got[k].level;
      if (lp >= 0) {
        nodes_[l].level = lp + 1;
        ++resolved;
      } else if (lp == k_unreached || lp == k_broken) {
        if (lp == k_unreached)
          fail(check::tree, fmt::format("vertex {}'s parent {} is not in the tree",
                                        g_.dist.global(me, l), nodes_[l].parent));
        nodes_[l].level = k_broken;
        ++resolved;
      } else {
        pending[kept++] = l;
      }
    }
    pending.resize(kept);
    if (all_reduce(static_cast<std::int64_t>(pending.size())) == 0) break;
    if (all_reduce(resolved) == 0) {
      for (const std::size_t l : pending)
        fail(check::tree, fmt::format("vertex {}'s parents never reach the root (a cycle)",
                                      g_.dist.global(me, l)));
      break;
    }
  }
  if ((out.failed = agreed()) != check::none) return out;

  // Every input tuple against the levels of its ends (read with one all-to-all); the tree edges
  // it carries are marked on their child's owner.
  const std::vector<node> ghost = read_ghosts();
  std::vector<std::int64_t> children;  // v for each tuple (u, v) with parent[v] = u, or (v, u)
  std::int64_t edges = 0;
  for (std::size_t k = 0; k < g_.tuples.size(); ++k) {
    const edge& e = g_.tuples[k];
    const node& a = ghost[ghosts_.slot[2 * k]];
    const node& b = ghost[ghosts_.slot[2 * k + 1]];
    if ((a.level >= 0) != (b.level >= 0)) {
      fail(check::component,
           fmt::format("edge ({}, {}) joins a reached vertex and an unreached one", e.u, e.v));
      continue;
    }
    if (a.level < 0) continue;
    ++edges;  // Graph500 counts every tuple of the component, self-loops and repeats included
    if (std::abs(a.level - b.level) > 1)
      fail(check::edge_levels,
           fmt::format("edge ({}, {}) joins levels {} and {}", e.u, e.v, a.level, b.level));
    if (e.u == e.v) continue;
    if (a.parent == e.v) children.push_back(e.u);
    if (b.parent == e.u) children.push_back(e.v);
  }
  std::vector<char> has_edge(n, 0);
  for (const std::int64_t v :
       to_owners(children, [this](std::int64_t v) { return g_.dist.owner(v).rank(); }))
    has_edge[g_.dist.local(v)] = 1;
  std::int64_t reached = 0, depth = 0;
  for (std::size_t l = 0; l < n; ++l) {
    if (nodes_[l].level < 0) continue;
    ++reached;
    depth = std::max(depth, nodes_[l].level);
    const std::int64_t v = g_.dist.global(me, l);
    if (v != root && has_edge[l] == 0)
      fail(check::tree_edges, fmt::format("vertex {}'s parent {} is not its neighbour in the input",
                                          v, nodes_[l].parent));
  }
  out.failed = agreed();
  out.edges = all_reduce(edges);
  out.reached = all_reduce(reached);
  out.depth = static_cast<int>(all_reduce(depth, max<>{}));
  return out;
}

}  // namespace mailroom::apps::bfs
