// SPDX-License-Identifier: MIT
// Routing tables, checked by following every item's path: direct, node and grid routing (mesh,
// mesh3d, hypercube), uniform and uneven nodes, up to the paper's 2,048 PEs (pure functions: no
// MPI job).
#include "aggregation/routes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using mailroom::routing;
using mailroom::detail::forwarded_class;
using mailroom::detail::k_delivery;
using mailroom::detail::k_final;
using mailroom::detail::k_link_classes;
using mailroom::detail::k_network;
using mailroom::detail::k_transit;
using mailroom::detail::network_class;
using mailroom::detail::network_link;
using mailroom::detail::node_grid;
using mailroom::detail::node_layout;
using mailroom::detail::routes;
using mailroom::detail::transit_class;

constexpr routing k_grids[] = {routing::mesh, routing::mesh3d, routing::hypercube};

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

std::vector<routes> all_routes(const layout& l, routing how = routing::node) {
  std::vector<routes> r;
  const node_layout x = node_layout::of(l.node_of, l.local_of);
  for (int p = 0; p < static_cast<int>(l.node_of.size()); ++p) r.push_back(routes::of(how, p, x));
  return r;
}

// Follows the item from `src` to `dest` as conveyors forward it (a class only ever to a later
// stage: transit(0), network(0), transit(1), ..., delivery); returns the PEs it crosses (empty
// if a table leads nowhere, to the wrong place or back to an earlier stage).
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
  const auto stage = [](std::uint32_t c) {  // the order of the classes along a path
    return c == k_delivery ? static_cast<std::uint32_t>(k_link_classes) : c;
  };
  for (int step = 0; step < 2 * r[src].stages + 1; ++step) {
    hops.push_back(at);
    if (cls == k_final || cls == k_delivery) return at == dest ? hops : std::vector<int>{};
    const routes& here = r[at];
    const std::uint32_t next_hop = here.hop(dest);
    if ((next_hop & routes::k_prefixed) == 0) {  // on this node: delivered, from the network
      if (!network_link(cls)) return {};
      lane = here.lane(k_delivery, dest);
    } else {
      lane = routes::lane_of_hop(next_hop);
    }
    if (lane < 0 || stage(here.cls[lane]) <= stage(cls)) return {};
    // A transit lane leads to the network at once; node routing crosses it once.
    if ((forwarded_class(cls) && !network_link(cls) && here.cls[lane] != cls + 1) ||
        (!here.gridded && cls == k_network && here.cls[lane] != k_delivery))
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

// Node routing's send table (routes::own) picks, without a branch, the lane and prefix that the
// hop table names for every destination: no prefix on this node, the destination on a transit
// lane, its index and the sender's on a network lane.
void expect_own_hops(const std::vector<routes>& r) {
  for (const routes& x : r) {
    if (!x.routed || x.gridded) continue;
    ASSERT_EQ(x.own.size(), static_cast<std::size_t>(x.layout.nodes())) << "PE " << x.me;
    for (int p = 0; p < x.pes; ++p) {
      const node_layout::place w = x.layout.where(p);
      const routes::own_hop o = x.own[static_cast<std::size_t>(w.node)];
      const auto local = static_cast<std::uint32_t>(w.local);
      const std::uint32_t h = x.hop(p);
      const int lane = routes::lane_of_hop(h);
      EXPECT_EQ(static_cast<int>(o.lane + (local & o.local_mask())), lane)
          << "PE " << x.me << " to PE " << p;
      const bool prefixed = (h & routes::k_prefixed) != 0;
      EXPECT_EQ(o.prefix_bytes, prefixed ? 4 : 0) << "PE " << x.me << " to PE " << p;
      if (!prefixed) continue;
      const std::uint32_t prefix =
          (static_cast<std::uint32_t>(p) & o.transit()) |
          ((local | static_cast<std::uint32_t>(x.my_local) << 16) & ~o.transit());
      EXPECT_EQ(prefix, x.cls[static_cast<std::size_t>(lane)] == k_network
                            ? routes::local_of_hop(h) | static_cast<std::uint32_t>(x.my_local) << 16
                            : static_cast<std::uint32_t>(p))
          << "PE " << x.me << " to PE " << p;
    }
  }
}

// lane(c, p), computed from the hop table and the lane order, is the lane of class c to p that
// the lane list holds, or -1 where it holds none; in_link(c, p) is p's place among the links in
// of class c, or -1.
void expect_lane_lookup(const std::vector<routes>& r) {
  expect_own_hops(r);
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

TEST(Routes, FewerNodesThanPesPerNodeSpreadTheirLinksOverEveryPe) {
  // With fewer other nodes than PEs on a node, every PE owns one network link, PE i the one to
  // the (i mod (nodes - 1))-th other node, landing on PE i mod size there; at 2 nodes an item
  // crosses no transit lane: its sender's link, then at most a delivery lane.
  for (const auto& [pes, per_node] :
       std::vector<std::pair<int, int>>{{4, 2}, {6, 4}, {16, 8}, {12, 4}, {16, 4}, {64, 16}}) {
    const int nodes = (pes + per_node - 1) / per_node;
    const auto r = all_routes(blocks(pes, per_node));
    for (const routes& x : r) {
      int network = 0;
      for (int l = 0; l < x.lanes(); ++l) network += x.cls[l] == k_network ? 1 : 0;
      EXPECT_EQ(network, 1) << pes << " PEs, " << per_node << " per node: PE " << x.me;
      const int k = x.my_local % (nodes - 1), node = x.me / per_node;
      const int far = k < node ? k : k + 1;
      const int far_size = std::min(per_node, pes - far * per_node);
      EXPECT_EQ(x.peer[x.network_base], far * per_node + x.my_local % far_size)
          << pes << " PEs, " << per_node << " per node: PE " << x.me;
    }
    for (int s = 0; s < pes; ++s)
      for (int d = 0; d < pes; ++d) {
        const auto p = path(r, s, d);
        ASSERT_FALSE(p.empty()) << pes << " PEs, " << per_node << " per node: " << s << " -> " << d;
        if (nodes == 2) {
          EXPECT_LE(p.size(), 3u) << s << " -> " << d;
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
  for (const routing how : {routing::node, routing::mesh, routing::mesh3d, routing::hypercube}) {
    const auto r = all_routes(l, how);
    EXPECT_EQ(r[0].layout.kind(), node_layout::form::table);
    for (int s = 0; s < 12; ++s)
      for (int d = 0; d < 12; ++d)
        EXPECT_FALSE(path(r, s, d).empty())
            << s << " -> " << d << " (" << mailroom::routing_name(static_cast<std::uint64_t>(how))
            << ")";
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

TEST(Routes, GridsHaveTheirShapes) {
  // mesh: C = ceil(sqrt(nodes)) columns; mesh3d: c = ceil(cbrt(nodes)); hypercube: a bit each.
  for (const auto& [nodes, side2, side3, bits] :
       std::vector<std::array<int, 4>>{{1, 1, 1, 0},
                                       {2, 2, 2, 1},
                                       {3, 2, 2, 2},
                                       {4, 2, 2, 2},
                                       {5, 3, 2, 3},
                                       {9, 3, 3, 4},
                                       {10, 4, 3, 4},
                                       {27, 6, 3, 5},
                                       {64, 8, 4, 6},
                                       {65, 9, 5, 7},
                                       {4096, 64, 16, 12}}) {
    for (const routing how : k_grids) {
      const node_grid g(how, nodes);
      const std::string name = mailroom::routing_name(static_cast<std::uint64_t>(how));
      const int side = how == routing::mesh ? side2 : side3;
      if (how == routing::hypercube) {
        EXPECT_EQ(g.dimensions(), bits) << nodes << " nodes";
        for (const int r : g.radix) EXPECT_EQ(r, 2);
      } else if (nodes > 1) {
        EXPECT_EQ(g.radix[0], side) << name << ", " << nodes << " nodes";
        EXPECT_LE(g.dimensions(), how == routing::mesh ? 2 : 3);
      }
      // The places hold the nodes, and all slabs of the top dimension but the last are full.
      if (g.dimensions() > 0) {
        EXPECT_GE(g.span.back() * g.radix.back(), nodes) << name << ", " << nodes << " nodes";
        EXPECT_LT(g.span.back(), nodes) << name << ", " << nodes << " nodes";
      }
      // Every path: one stage per dimension at most, in order, each hop along its dimension
      // (and perhaps down the top one, to the node hosting a missing place).
      for (int a = 0; a < nodes; ++a)
        for (int b = 0; b < nodes; b += 1 + nodes / 97) {
          int at = a, last = -1;
          while (at != b) {
            const node_grid::step s = g.next(at, b);
            ASSERT_GT(s.stage, last) << name << ": " << a << " -> " << b;
            ASSERT_TRUE(s.node >= 0 && s.node < nodes && s.node != at);
            EXPECT_EQ(g.coordinate(s.node, s.stage), g.coordinate(b, s.stage));
            for (int d = 0; d < g.dimensions(); ++d)
              if (d != s.stage && d != g.dimensions() - 1) {
                EXPECT_EQ(g.coordinate(s.node, d), g.coordinate(at, d));
              }
            last = s.stage;
            at = s.node;
          }
        }
    }
  }
}

TEST(Routes, GridsReachEveryDestinationThroughTheirStages) {
  for (const routing how : k_grids)
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
      const std::string name = mailroom::routing_name(static_cast<std::uint64_t>(how));
      const auto r = all_routes(blocks(pes, per_node), how);
      const node_grid g(how, (pes + per_node - 1) / per_node);
      for (int s = 0; s < pes; ++s)
        for (int d = 0; d < pes; ++d) {
          const auto p = path(r, s, d);
          ASSERT_FALSE(p.empty()) << name << ", " << pes << " PEs, " << per_node
                                  << " per node: " << s << " -> " << d << " goes astray";
          // At most a transit and a network lane per dimension, then delivery.
          EXPECT_LE(p.size(), 2u * static_cast<std::size_t>(g.dimensions()) + 2);
          if (s / per_node == d / per_node) {
            EXPECT_EQ(p.size(), 2u);
          }
          // It crosses the network once per dimension at most, along the grid's next steps.
          int crossings = 0, at = s / per_node;
          for (std::size_t k = 1; k < p.size(); ++k) {
            const int from = p[k - 1] / per_node, to = p[k] / per_node;
            if (from == to) continue;
            ++crossings;
            EXPECT_EQ(from, at);
            EXPECT_EQ(to, g.next(from, d / per_node).node)
                << name << ": " << s << " -> " << d << " crosses " << from << " -> " << to;
            at = to;
          }
          EXPECT_LE(crossings, g.dimensions());
        }
      expect_links_agree(r);
      expect_lane_lookup(r);
    }
}

TEST(Routes, MeshIsTheTwoDimensionalGrid) {
  // The first hop leads along the row to b's column, or from a short last row to the node
  // above; the second along the column.
  for (const int nodes : {7, 10, 66}) {
    const node_grid g(routing::mesh, nodes);
    const int columns = g.radix[0];
    for (int a = 0; a < nodes; ++a)
      for (int b = 0; b < nodes; ++b) {
        if (a == b) continue;
        const node_grid::step s = g.next(a, b);
        if (a % columns == b % columns) {
          EXPECT_EQ(s.stage, 1);
          EXPECT_EQ(s.node, b);
        } else {
          const int m = a / columns * columns + b % columns;
          EXPECT_EQ(s.stage, 0);
          EXPECT_EQ(s.node, m < nodes ? m : m - columns);
        }
      }
  }
}

TEST(Routes, GridsSpreadANodesLinksOverItsPes) {
  // Where a node has at least as many links as PEs, each PE owns one and receives one: 4 nodes
  // of 2 (a 2 x 2 grid, 2 links per node), 9 of 4 (3 x 3, 4 links), 64 of 8 (8 x 8, 14 links);
  // mesh3d 64 of 8 (4 x 4 x 4, 9 links); hypercube 64 of 4 (6 links).
  for (const auto& [how, pes, per_node] :
       std::vector<std::tuple<routing, int, int>>{{routing::mesh, 8, 2},
                                                  {routing::mesh, 36, 4},
                                                  {routing::mesh, 512, 8},
                                                  {routing::mesh3d, 512, 8},
                                                  {routing::hypercube, 256, 4}}) {
    const auto r = all_routes(blocks(pes, per_node), how);
    for (const routes& x : r) {
      int out = 0;
      std::size_t in = 0;
      for (int l = 0; l < x.lanes(); ++l) out += network_link(x.cls[l]) ? 1 : 0;
      for (int c = 0; c < k_link_classes; ++c)
        if (network_link(static_cast<std::uint32_t>(c))) in += x.in_peers[c].size();
      EXPECT_GE(out, 1) << pes << " PEs in nodes of " << per_node << ": PE " << x.me;
      EXPECT_GE(in, 1u) << pes << " PEs in nodes of " << per_node << ": PE " << x.me;
    }
  }
}

// The most network lanes and network peers of any of every 37th PE.
std::pair<int, int> network_at_scale(routing how, int pes, int per_node) {
  const layout l = blocks(pes, per_node);
  const node_layout x = node_layout::of(l.node_of, l.local_of);
  int most = 0, most_lanes = 0;
  for (int p = 0; p < pes; p += 37) {
    const routes r = routes::of(how, p, x);
    most = std::max(most, r.network_peers());
    int network = 0;
    for (int k = 0; k < r.lanes(); ++k) network += network_link(r.cls[k]) ? 1 : 0;
    most_lanes = std::max(most_lanes, network);
  }
  return {most_lanes, most};
}

TEST(Routes, GridsAtScaleHaveFewNetworkPeers) {
  // 4,096 nodes of 32 PEs (131,072 PEs) is too many tables for a unit test; 1,024 nodes of 4:
  // a 32 x 32 grid, each node linked to its row and column (62 nodes) where node routing links
  // every node to 1,023: about 16 network lanes per PE, each landing as many.
  const auto [mesh_lanes, mesh_peers] = network_at_scale(routing::mesh, 4096, 4);
  EXPECT_LE(mesh_lanes, 16);
  EXPECT_LE(mesh_peers, 32);
  const layout l = blocks(4096, 4);
  EXPECT_EQ(routes::mesh(0, l.node_of, l.local_of).in_peers[transit_class(1)].size(), 3u);
  // mesh3d: 1,024 nodes on 11 x 11 x 9, 10 + 10 + 8 = 28 links per node, 7 per PE; hypercube:
  // 10 links per node, 3 per PE (and per node of one PE, 4,096 nodes: 12 each).
  const auto [m3_lanes, m3_peers] = network_at_scale(routing::mesh3d, 4096, 4);
  EXPECT_LE(m3_lanes, 7);
  EXPECT_LE(m3_peers, 16);
  const auto [h_lanes, h_peers] = network_at_scale(routing::hypercube, 4096, 4);
  EXPECT_LE(h_lanes, 3);
  EXPECT_LE(h_peers, 6);
  const auto [h1_lanes, h1_peers] = network_at_scale(routing::hypercube, 4096, 1);
  EXPECT_EQ(h1_lanes, 12);
  EXPECT_EQ(h1_peers, 12);
}

TEST(Routes, LayoutErrorsAreReported) {
  EXPECT_DEATH(routes::node(0, {0, 0}, {0, 0}), "same place on node 0");
  EXPECT_DEATH(routes::mesh(0, {0, 2}, {0, 0}), "node 1 has no PE");
  EXPECT_DEATH(routes::of(routing::hypercube, 0, node_layout::blocked(1 << 16, 1)),
               "hypercube routing over 65536 nodes: 16 dimensions");
}

}  // namespace
