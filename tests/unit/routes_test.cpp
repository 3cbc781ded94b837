// Routing tables, checked by following every item's path: direct and node routing, uniform and
// uneven nodes, up to the paper's 2,048 PEs (pure functions: no MPI job).
#include "mailroom/detail/routes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using mailroom::detail::k_delivery;
using mailroom::detail::k_final;
using mailroom::detail::k_link_classes;
using mailroom::detail::k_network;
using mailroom::detail::k_transit;
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

std::vector<routes> all_routes(const layout& l) {
  std::vector<routes> r;
  for (int p = 0; p < static_cast<int>(l.node_of.size()); ++p)
    r.push_back(routes::node(p, l.node_of, l.local_of));
  return r;
}

// Follows the item from `src` to `dest` as conveyors forward it; returns the PEs it crosses
// (empty if a table leads nowhere or to the wrong place).
std::vector<int> path(const std::vector<routes>& r, int src, int dest) {
  std::vector<int> hops{src};
  const std::uint32_t h = r[src].hop[dest];
  int lane = routes::lane_of_hop(h);
  // A prefixed hop also names the destination's index on its node (its position there).
  if ((h & routes::k_prefixed) != 0 &&
      r[dest].node_members[routes::local_of_hop(h)] != dest)
    return {};
  int at = r[src].peer[lane];
  auto cls = r[src].cls[lane];
  if (((h & routes::k_prefixed) != 0) != (cls == k_transit || cls == k_network)) return {};
  for (int step = 0; step < 3; ++step) {
    hops.push_back(at);
    if (cls == k_final || cls == k_delivery) return at == dest ? hops : std::vector<int>{};
    const routes& here = r[at];
    if (cls == k_transit) {
      lane = routes::lane_of_hop(here.hop[dest]);
      if (here.cls[lane] != k_network) return {};
    } else {
      lane = here.lane(k_delivery, dest);
      if (lane < 0) return {};
    }
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
    EXPECT_EQ(r.hop[p], static_cast<std::uint32_t>(p));
    EXPECT_EQ(r.peer[p], p);
    EXPECT_EQ(r.cls[p], k_final);
  }
  EXPECT_EQ(r.in_peers[k_final].size(), 8u);
  expect_lane_lookup(std::vector<routes>{routes::direct(0, 3), routes::direct(1, 3),
                                         routes::direct(2, 3)});
}

TEST(Routes, EveryItemReachesItsDestinationInAtMostThreeHops) {
  for (const auto& [pes, per_node] : std::vector<std::pair<int, int>>{
           {1, 1}, {4, 1}, {4, 2}, {6, 4}, {8, 3}, {11, 3}, {11, 4}, {16, 4}, {33, 8}}) {
    const auto r = all_routes(blocks(pes, per_node));
    for (int s = 0; s < pes; ++s)
      for (int d = 0; d < pes; ++d) {
        const auto p = path(r, s, d);
        ASSERT_FALSE(p.empty()) << pes << " PEs, " << per_node << " per node: " << s << " -> "
                                << d << " goes astray";
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
  for (int s = 0; s < 10; ++s)
    for (int d = 0; d < 10; ++d) EXPECT_FALSE(path(r, s, d).empty()) << s << " -> " << d;
  expect_links_agree(r);
  expect_lane_lookup(r);
}

TEST(Routes, PaperScaleHasFewNetworkPeers) {
  // 2,048 PEs, 32 per node: each PE owns the links to 2 of the 64 nodes (about nodes / PEs per
  // node) and receives 2, where direct routing has 2,016 PEs of other nodes.
  const auto r = all_routes(blocks(2048, 32));
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

TEST(Routes, LayoutErrorsAreReported) {
  EXPECT_DEATH(routes::node(0, {0, 0}, {0, 0}), "same place on node 0");
}

}  // namespace
