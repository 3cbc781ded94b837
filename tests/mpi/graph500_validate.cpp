// SPDX-License-Identifier: MIT
// Graph500's validator (mailroom-bench bfs) against parent arrays corrupted on purpose: the
// serial search's tree passes, and each corruption fails the check the specification names for
// it (and only because of it: each keeps the other checks' conditions). Every PE makes the same
// corruption of the whole array (the whole graph is on every PE) and validates its own part.
// Usage: graph500_validate [scale] (default 9).
#include "bfs/graph500.hpp"

#include "expect.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace mr = mailroom;
namespace g5 = mailroom::apps::bfs;

namespace {

using mailroom_test::g_me;

struct fixture {
  const g5::graph& g;
  const g5::whole_graph& w;
  std::int64_t root;
  std::vector<std::int64_t> parent, level;  // the serial tree, every vertex

  [[nodiscard]] std::span<const std::int64_t> adj(std::int64_t v) const {
    return {w.adjacency.data() + w.offsets[static_cast<std::size_t>(v)],
            w.adjacency.data() + w.offsets[static_cast<std::size_t>(v) + 1]};
  }
  [[nodiscard]] bool adjacent(std::int64_t a, std::int64_t b) const {
    for (const std::int64_t x : adj(a))
      if (x == b) return true;
    return false;
  }
  [[nodiscard]] bool leaf(std::int64_t v) const {
    for (std::size_t x = 0; x < parent.size(); ++x)
      if (parent[x] == v && static_cast<std::int64_t>(x) != v) return false;
    return true;
  }
  // The first vertex for which pred holds (-1: none).
  template <class P>
  [[nodiscard]] std::int64_t find(P pred) const {
    for (std::int64_t v = 0; v < std::ssize(parent); ++v)
      if (pred(v)) return v;
    return -1;
  }
  [[nodiscard]] std::int64_t lv(std::int64_t v) const { return level[static_cast<std::size_t>(v)]; }
};

g5::validation validate(g5::validator& val, const fixture& f,
                        const std::vector<std::int64_t>& all) {
  const mr::pe me = mr::this_pe();
  std::vector<std::int64_t> mine(f.g.local_vertices());
  for (std::size_t l = 0; l < mine.size(); ++l)
    mine[l] = all[static_cast<std::size_t>(f.g.dist.global(me, l))];
  return val(f.root, mine, /*say=*/false);
}

int body(int scale) {
  int failures = 0;
  const g5::graph_spec spec{scale, 8, true, 3};
  const g5::graph g = g5::construct(spec, g5::generate(spec));
  const g5::whole_graph w = g5::gather_whole(g);
  const std::vector<std::int64_t> keys = g5::search_keys(g, 1, 5);
  EXPECT(keys.size() == 1, "no search key in a graph of %lld tuples",
         static_cast<long long>(spec.edges()));
  if (keys.empty()) return failures;
  fixture f{g, w, keys[0], {}, {}};
  g5::local(w, f.root, f.parent);
  f.level.assign(f.parent.size(), -1);
  for (std::int64_t v = 0; v < std::ssize(f.parent); ++v)  // levels by walking to the root
    if (f.parent[static_cast<std::size_t>(v)] >= 0) {
      std::int64_t d = 0;
      for (std::int64_t x = v; x != f.root; x = f.parent[static_cast<std::size_t>(x)]) ++d;
      f.level[static_cast<std::size_t>(v)] = d;
    }
  g5::validator val(g);

  const g5::validation good = validate(val, f, f.parent);
  EXPECT(good.failed == g5::check::none, "the serial tree failed: %s", g5::describe(good.failed));
  EXPECT(good.edges > 0 && good.reached > 1 && good.depth >= 2,
         "the serial tree: %lld edges, %lld vertices, depth %d", static_cast<long long>(good.edges),
         static_cast<long long>(good.reached), good.depth);

  const auto expect_failure = [&](const char* what, g5::check want,
                                  const std::vector<std::int64_t>& bad) {
    const g5::validation got = validate(val, f, bad);
    EXPECT(got.failed == want, "%s: expected '%s', got '%s'", what, g5::describe(want),
           g5::describe(got.failed));
  };
  const std::int64_t N = g.vertices(), root = f.root;
  auto bad = f.parent;
  const auto at = [&](std::int64_t v) -> std::int64_t& { return bad[static_cast<std::size_t>(v)]; };

  // The root's parent is a neighbour.
  at(root) = f.adj(root)[0];
  expect_failure("root's parent moved", g5::check::root, bad);
  bad = f.parent;
  // A vertex's parent outside the graph.
  const std::int64_t some = f.find([&](std::int64_t v) { return f.lv(v) == 1; });
  at(some) = N;
  expect_failure("parent out of range", g5::check::parent_range, bad);
  bad = f.parent;
  // A cycle: a vertex at level 2 becomes its parent's parent.
  const std::int64_t two = f.find([&](std::int64_t v) { return f.lv(v) == 2; });
  at(f.parent[static_cast<std::size_t>(two)]) = two;
  expect_failure("a cycle", g5::check::tree, bad);
  bad = f.parent;
  // A leaf left unreached: its edge to its parent joins the tree and the rest.
  const std::int64_t leaf = f.find([&](std::int64_t v) { return f.lv(v) >= 1 && f.leaf(v); });
  at(leaf) = -1;
  expect_failure("a leaf unreached", g5::check::component, bad);
  bad = f.parent;
  // A leaf at level L >= 2 re-parented to a neighbour at its own level: now at L + 1, two from
  // its old parent, which is still its neighbour.
  const std::int64_t shifted = f.find([&](std::int64_t v) {
    if (f.lv(v) < 2 || !f.leaf(v)) return false;
    for (const std::int64_t x : f.adj(v))
      if (f.lv(x) == f.lv(v)) return true;
    return false;
  });
  EXPECT(shifted >= 0, "no leaf with a neighbour at its level");
  if (shifted >= 0) {
    for (const std::int64_t x : f.adj(shifted))
      if (f.lv(x) == f.lv(shifted)) at(shifted) = x;
    expect_failure("a leaf one level too deep", g5::check::edge_levels, bad);
    bad = f.parent;
  }
  // A leaf re-parented to a vertex at its parent's level that is not its neighbour: the levels
  // agree, the tree edge is not in the input.
  std::int64_t stranger = -1;
  const std::int64_t moved = f.find([&](std::int64_t v) {
    if (f.lv(v) < 1 || !f.leaf(v)) return false;
    stranger = f.find([&](std::int64_t x) { return f.lv(x) == f.lv(v) - 1 && !f.adjacent(v, x); });
    return stranger >= 0;
  });
  EXPECT(moved >= 0, "no leaf with a stranger at its parent's level");
  if (moved >= 0) {
    at(moved) = stranger;
    expect_failure("a parent that is no neighbour", g5::check::tree_edges, bad);
    bad = f.parent;
  }
  // A vertex's parent is a vertex the search did not reach.
  const std::int64_t outside = f.find([&](std::int64_t v) { return f.lv(v) < 0; });
  if (outside >= 0) {
    at(some) = outside;
    expect_failure("a parent outside the tree", g5::check::tree, bad);
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const int scale = argc > 1 ? std::atoi(argv[1]) : 9;
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    return mailroom_test::verdict(body(scale));
  });
}
