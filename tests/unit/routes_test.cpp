// SPDX-License-Identifier: MIT
// Routing tables, checked by following every item's path: direct, node and mesh routing,
// uniform and uneven nodes, up to the paper's 2,048 PEs (pure functions: no MPI job).
#include "aggregation/routes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace {

using mailroom::detail::forwarded_class;
using mailroom::detail::k_delivery;
using mailroom::detail::k_final;
using mailroom::detail::k_link_classes;
using mailroom::detail::k_network;
using mailroom::detail::k_network2;
using mailroom::detail::k_transit;
using mailroom::detail::k_transit2;
using mailroom::detail::mesh_grid;
using mailroom::detail::node_layout;
using mailroom::detail::routes;

struct layout {
  std::vector<int> node_of, local_of;
};

// PEs in consecutive blocks of `per_node` (the last node may be smaller).
layout blocks(int pes, int per_node) {
  layout l;
  for (int p = 0; p < pes; ++p) {
    l.node_of.push_back(p / per_node);
    l.local_of.push_back(p % per_node);
  }
  return l;
}

std::vector<routes> all_routes(const layout& l, bool mesh = false) {
  std::vector<routes> r;
  for (int p = 0; p < static_cast<int>(l.node_of.size()); ++p)
    r.push_back(mesh ? routes::mesh(p, l.node_of, l.local_of)
                     : routes::node(p, l.node_of, l.local_of));
  return r;
}

// Follows the item from `src` to `dest` as conveyors forward it (a class only ever to a later
// stage: transit, network, transit2, network2, delivery); returns the PEs it crosses (empty if
// a table leads nowhere, to the wrong place or back to an earlier stage).
std::vector<int> path(const std::vector<routes>& r, int src, int dest) {
  std::vector<int> hops{src};
  const std::uint32_t h = r[src].hop(dest);
  int lane = routes::lane_of_hop(h);
  // A prefixed hop also names the destination's index on its node (its position there).
  if ((h & routes::k_prefixed) != 0 && r[dest].node_members[routes::local_of_hop(h)] != dest)
    return {};
  int at = r[src].peer[lane];
  std::uint32_t cls = r[src].cls[lane];
  if (((h & routes::k_prefixed) != 0) != forwarded_class(cls)) return {};
  const auto stage = [](std::uint32_t c) {       // the order of the classes along a path
    constexpr int order[] = {0, 1, 2, 5, 3, 4};  // final, transit, network, delivery, t2, n2
    return order[c];
  };
  for (int step = 0; step < 5; ++step) {
    hops.push_back(at);
    if (cls == k_final || cls == k_delivery) return at == dest ? hops : std::vector<int>{};
    const routes& here = r[at];
    const std::uint32_t next_hop = here.hop(dest);
    if ((next_hop & routes::k_prefixed) == 0) {  // on this node: delivered, from the network
      if (cls != k_network && cls != k_network2) return {};
      lane = here.lane(k_delivery, dest);
    } else {
      lane = routes::lane_of_hop(next_hop);
    }
    if (lane < 0 || stage(here.cls[lane]) <= stage(cls)) return {};
    // A transit lane leads to the network at once; node routing crosses it once.
    if ((cls == k_transit && here.cls[lane] != k_network) ||
        (cls == k_transit2 && here.cls[lane] != k_network2) ||
        (!here.meshed && cls == k_network && here.cls[lane] != k_delivery))
      return {};
    cls = here.cls[lane];
    at = here.peer[lane];
  }
  return {};
}

// Every lane of class c from x to y is one of y's in-links of class c, and only those.
void expect_links_agree(const std::vector<routes>& r) {
  const int pes = static_cast<int>(r.size());
  std::vector<std::vector<std::vector<int>>> in(static_cast<std::size_t>(pes),
                                                std::vector<std::vector<int>>(k_link_classes));
  for (int x = 0; x < pes; ++x)
    for (int l = 0; l < r[x].lanes(); ++l) in[r[x].peer[l]][r[x].cls[l]].push_back(x);
  for (int y = 0; y < pes; ++y)
    for (int c = 0; c < k_link_classes; ++c) {
      auto expected = r[y].in_peers[c];
      std::sort(expected.begin(), expected.end());
      std::sort(in[y][c].begin(), in[y][c].end());
      EXPECT_EQ(in[y][c], expected) << "PE " << y << ", link class " << c;
    }
}

// lane(c, p), computed from the hop table and the lane order, is the lane of class c to p that
// the lane list holds, or -1 where it holds none; in_link(c, p) is p's place among the links in
// of class c, or -1.
void expect_lane_lookup(const std::vector<routes>& r) {
  const int pes = static_cast<int>(r.size());
  for (int x = 0; x < pes; ++x)
    for (int c = 0; c < k_link_classes; ++c)
      for (int p = 0; p < pes; ++p) {
        int want = -1;
        for (int l = 0; l < r[x].lanes(); ++l)
          if (r[x].peer[l] == p && r[x].cls[l] == c) want = l;
        EXPECT_EQ(r[x].lane(static_cast<std::uint32_t>(c), p), want)
            << "PE " << x << ", class " << c << ", to PE " << p;
        const auto& in = r[x].in_peers[c];
        const auto at = std::find(in.begin(), in.end(), p);
        EXPECT_EQ(r[x].in_link(static_cast<std::uint32_t>(c), p),
                  at == in.end() ? -1 : static_cast<int>(at - in.begin()))
            << "PE " << x << ", class " << c << ", from PE " << p;
      }
}

TEST(Routes, DirectIsALanePerPe) {
  const routes r = routes::direct(3, 8);
  EXPECT_FALSE(r.routed);
  ASSERT_EQ(r.lanes(), 8);
  for (int p = 0; p < 8; ++p) {
    EXPECT_EQ(r.hop(p), static_cast<std::uint32_t>(p));
    EXPECT_EQ(r.peer[p], p);
    EXPECT_EQ(r.cls[p], k_final);
  }
  EXPECT_EQ(r.in_peers[k_final].size(), 8u);
  expect_lane_lookup(
      std::vector<routes>{routes::direct(0, 3), routes::direct(1, 3), routes::direct(2, 3)});
}

TEST(Routes, EveryItemReachesItsDestinationInAtMostThreeHops) {
  for (const auto& [pes, per_node] : std::vector<std::pair<int, int>>{
           {1, 1}, {4, 1}, {4, 2}, {6, 4}, {8, 3}, {11, 3}, {11, 4}, {16, 4}, {33, 8}}) {
    const auto r = all_routes(blocks(pes, per_node));
    for (int s = 0; s < pes; ++s)
      for (int d = 0; d < pes; ++d) {
        const auto p = path(r, s, d);
        ASSERT_FALSE(p.empty()) << pes << " PEs, " << per_node << " per node: " << s << " -> " << d
                                << " goes astray";
        EXPECT_LE(p.size(), 4u);
        // Within a node: straight there.
        if (s / per_node == d / per_node) {
          EXPECT_EQ(p.size(), 2u);
        }
      }
    expect_links_agree(r);
    expect_lane_lookup(r);
  }
}

TEST(Routes, NodesInterleavedAmongRanks) {
  // Ranks dealt round-robin over 3 nodes of uneven size (as a cyclic launcher mapping does).
  layout l;
  std::vector<int> next(3, 0);
  for (int p = 0; p < 10; ++p) {
    l.node_of.push_back(p % 3);
    l.local_of.push_back(next[p % 3]++);
  }
  const auto r = all_routes(l);
  EXPECT_EQ(r[0].layout.kind(), node_layout::form::cyclic);  // a formula: no table per PE
  for (int s = 0; s < 10; ++s)
    for (int d = 0; d < 10; ++d) EXPECT_FALSE(path(r, s, d).empty()) << s << " -> " << d;
  expect_links_agree(r);
  expect_lane_lookup(r);
}

TEST(Routes, NodesShuffledAmongRanks) {
  // No formula places these: the layout keeps its table, and routing is the same.
  layout l;
  const int place[12][2] = {{2, 0}, {0, 0}, {1, 0}, {0, 1}, {2, 1}, {1, 1},
                            {0, 2}, {3, 0}, {1, 2}, {2, 2}, {3, 1}, {0, 3}};
  for (const auto& [node, local] : place) {
    l.node_of.push_back(node);
    l.local_of.push_back(local);
  }
  for (const bool mesh : {false, true}) {
    const auto r = all_routes(l, mesh);
    EXPECT_EQ(r[0].layout.kind(), node_layout::form::table);
    for (int s = 0; s < 12; ++s)
      for (int d = 0; d < 12; ++d)
        EXPECT_FALSE(path(r, s, d).empty()) << s << " -> " << d << (mesh ? " (mesh)" : "");
    expect_links_agree(r);
    expect_lane_lookup(r);
  }
}

// The layout's formulas against the placement they stand for, PE by PE.
void expect_layout(const layout& l, node_layout::form kind) {
  const node_layout x = node_layout::of(l.node_of, l.local_of);
  EXPECT_EQ(x.kind(), kind);
  EXPECT_EQ(x.table_bytes() == 0, kind != node_layout::form::table);
  const int pes = static_cast<int>(l.node_of.size());
  std::vector<int> size(static_cast<std::size_t>(x.nodes()), 0);
  for (int p = 0; p < pes; ++p) {
    const auto [node, local] = x.where(p);
    ASSERT_EQ(node, l.node_of[p]) << "PE " << p;
    ASSERT_EQ(local, l.local_of[p]) << "PE " << p;
    ASSERT_EQ(x.pe(node, local), p);
    ++size[static_cast<std::size_t>(node)];
  }
  for (int n = 0; n < x.nodes(); ++n) {
    EXPECT_EQ(x.size(n), size[static_cast<std::size_t>(n)]) << "node " << n;
    EXPECT_LE(x.size(n), x.widest());
  }
}

TEST(NodeLayout, KeepsNoTableWhereAFormulaPlacesThePes) {
  for (const auto& [pes, per_node] :
       std::vector<std::pair<int, int>>{{1, 1}, {7, 1}, {8, 4}, {10, 4}, {2048, 32}, {4097, 2}})
    expect_layout(blocks(pes, per_node), node_layout::form::blocked);
  for (const auto& [pes, nodes] : std::vector<std::pair<int, int>>{{10, 3}, {64, 8}, {1001, 7}}) {
    layout l;
    for (int p = 0; p < pes; ++p) {
      l.node_of.push_back(p % nodes);
      l.local_of.push_back(p / nodes);
    }
    expect_layout(l, node_layout::form::cyclic);
  }
  layout l = blocks(12, 4);
  std::swap(l.local_of[0], l.local_of[1]);  // one pair out of place: a table
  expect_layout(l, node_layout::form::table);
  EXPECT_EQ(node_layout::blocked(12, 4).table_bytes(), 0u);
}

TEST(NodeLayout, DivisionByAConstantIsExact) {
  const std::uint32_t top = (1u << 31) - 1;
  for (const std::uint32_t d : {1u,
                                2u,
                                3u,
                                5u,
                                7u,
                                31u,
                                32u,
                                33u,
                                100u,
                                127u,
                                128u,
                                1000u,
                                1023u,
                                1024u,
                                65535u,
                                65537u,
                                (1u << 20) + 1,
                                (1u << 30) - 1,
                                1u << 30,
                                top}) {
    const node_layout::divider div(d);
    std::vector<std::uint32_t> n{0, 1, d - 1, d, d + 1, top, top - 1, top / d * d, top / d * d - 1};
    std::uint64_t x = 0x9e3779b97f4a7c15ull;  // a fixed sequence of values across the range
    for (int k = 0; k < 2000; ++k) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      n.push_back(static_cast<std::uint32_t>(x) & top);
      n.push_back(static_cast<std::uint32_t>(k) * d + d - 1);  // just below multiples
    }
    for (const std::uint32_t v : n) {
      if (v <= top) {
        ASSERT_EQ(div(v), v / d) << v << " / " << d;
      }
    }
  }
}

TEST(Routes, PaperScaleHasFewNetworkPeers) {
  // 2,048 PEs, 32 per node: each PE owns the links to 2 of the 64 nodes (about nodes / PEs per
  // node) and receives 2, where direct routing has 2,016 PEs of other nodes.
  const auto r = all_routes(blocks(2048, 32));
  EXPECT_EQ(r[0].layout.kind(), node_layout::form::blocked);
  int most = 0;
  for (const routes& x : r) {
    most = std::max(most, x.network_peers());
    EXPECT_EQ(x.lanes(), 32 + 31 + 32 + 2 - (x.me / 32 % 32 == x.me % 32 ? 1 : 0));
  }
  EXPECT_LE(most, 4);
  expect_links_agree(r);
  for (int s : {0, 31, 1000, 2047})
    for (int d : {0, 33, 1024, 2047}) EXPECT_FALSE(path(r, s, d).empty()) << s << " -> " << d;
}

TEST(Routes, MeshGridIsAboutSquare) {
  for (const auto& [nodes, columns] : std::vector<std::pair<int, int>>{
           {1, 1}, {2, 2}, {3, 2}, {4, 2}, {5, 3}, {9, 3}, {10, 4}, {64, 8}, {65, 9}, {4096, 64}}) {
    const mesh_grid g(nodes);
    EXPECT_EQ(g.columns, columns) << nodes << " nodes";
    // Every first hop leads to a node of the column asked for.
    for (int a = 0; a < nodes; ++a)
      for (int c = 0; c < g.columns && c < nodes; ++c) {
        const int m = g.first_hop(a, c);
        EXPECT_TRUE(m >= 0 && m < nodes && g.column(m) == c) << a << " to column " << c;
      }
  }
}

TEST(Routes, MeshReachesEveryDestinationThroughItsStages) {
  for (const auto& [pes, per_node] : std::vector<std::pair<int, int>>{{1, 1},
                                                                      {4, 1},
                                                                      {7, 1},
                                                                      {9, 1},
                                                                      {10, 1},
                                                                      {8, 2},
                                                                      {11, 3},
                                                                      {16, 4},
                                                                      {40, 3},
                                                                      {66, 4},
                                                                      {100, 1}}) {
    const auto r = all_routes(blocks(pes, per_node), true);
    const mesh_grid g((pes + per_node - 1) / per_node);
    for (int s = 0; s < pes; ++s)
      for (int d = 0; d < pes; ++d) {
        const auto p = path(r, s, d);
        ASSERT_FALSE(p.empty()) << pes << " PEs, " << per_node << " per node: " << s << " -> " << d
                                << " goes astray";
        // At most: transit, network, transit2, network2, delivery.
        EXPECT_LE(p.size(), 6u);
        const int a = s / per_node, b = d / per_node;
        if (a == b) {
          EXPECT_EQ(p.size(), 2u);
        }
        // It crosses the network at most twice, through a node of a's row (or the one above)
        // in b's column.
        int crossings = 0;
        for (std::size_t k = 1; k < p.size(); ++k) {
          if (p[k - 1] / per_node == p[k] / per_node) continue;
          ++crossings;
          const int from = p[k - 1] / per_node, to = p[k] / per_node;
          EXPECT_TRUE(g.column(to) == g.column(b) &&
                      (g.column(from) == g.column(b) || g.row(to) >= g.row(a) - 1))
              << s << " -> " << d << " crosses " << from << " -> " << to;
        }
        EXPECT_LE(crossings, 2);
      }
    expect_links_agree(r);
    expect_lane_lookup(r);
  }
}

TEST(Routes, MeshSpreadsANodesLinksOverItsPes) {
  // Where a node has at least as many links as PEs, each PE owns one and receives one: 4 nodes
  // of 2 (a 2 x 2 grid, 2 links per node), 9 of 4 (3 x 3, 4 links), 64 of 8 (8 x 8, 14 links).
  for (const auto& [pes, per_node] : std::vector<std::pair<int, int>>{{8, 2}, {36, 4}, {512, 8}}) {
    const auto r = all_routes(blocks(pes, per_node), true);
    for (const routes& x : r) {
      int out = 0;
      for (int l = 0; l < x.lanes(); ++l) out += x.cls[l] == k_network || x.cls[l] == k_network2;
      const auto in = x.in_peers[k_network].size() + x.in_peers[k_network2].size();
      EXPECT_GE(out, 1) << pes << " PEs in nodes of " << per_node << ": PE " << x.me;
      EXPECT_GE(in, 1u) << pes << " PEs in nodes of " << per_node << ": PE " << x.me;
    }
  }
}

TEST(Routes, MeshAtScaleHasFewNetworkPeers) {
  // 4,096 nodes of 32 PEs (131,072 PEs) is too many tables for a unit test; 1,024 nodes of 4:
  // a 32 x 32 grid, each node linked to its row and column (62 nodes) where node routing links
  // every node to 1,023: about 16 network lanes per PE, each landing as many.
  const int per_node = 4, pes = 4096;
  const layout l = blocks(pes, per_node);
  int most = 0, most_lanes = 0;
  for (int p = 0; p < pes; p += 37) {
    const routes x = routes::mesh(p, l.node_of, l.local_of);
    most = std::max(most, x.network_peers());
    int network = 0;
    for (int k = 0; k < x.lanes(); ++k) network += x.cls[k] == k_network || x.cls[k] == k_network2;
    most_lanes = std::max(most_lanes, network);
  }
  EXPECT_LE(most_lanes, 16);
  EXPECT_LE(most, 32);
  EXPECT_EQ(routes::mesh(0, l.node_of, l.local_of).in_peers[k_transit2].size(), 3u);
}

TEST(Routes, LayoutErrorsAreReported) {
  EXPECT_DEATH(routes::node(0, {0, 0}, {0, 0}), "same place on node 0");
  EXPECT_DEATH(routes::mesh(0, {0, 2}, {0, 0}), "node 1 has no PE");
}

}  // namespace
