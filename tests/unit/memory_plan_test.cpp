// SPDX-License-Identifier: MIT
// The sizing functions the runtime and the capacity plan share (src/aggregation/memory_plan.hpp):
// node buffers, node credits, the shared pool, and what a mailbox takes from the pool and the
// budget (pure functions: no MPI job).
#include "aggregation/memory_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using namespace mailroom::detail;
using mailroom::routing;
using mailroom::routing_name;
constexpr std::size_t k_kib = 1024;

TEST(MemoryPlan, NodeBuffersShrinkAsNodesGrowDownToFourKiB) {
  EXPECT_EQ(node_buffer_bytes(0, 1, 32 * k_kib), 32 * k_kib);
  EXPECT_EQ(node_buffer_bytes(0, 2, 32 * k_kib), 32 * k_kib);  // at most the buffer size
  EXPECT_EQ(node_buffer_bytes(0, 8, 32 * k_kib), 16 * k_kib);
  EXPECT_EQ(node_buffer_bytes(0, 32, 32 * k_kib), 4 * k_kib);
  EXPECT_EQ(node_buffer_bytes(0, 128, 32 * k_kib), 4 * k_kib);
  EXPECT_EQ(node_buffer_bytes(0, 24, 32 * k_kib), 4 * k_kib);  // 128 KiB / 24, rounded down
  EXPECT_EQ(node_buffer_bytes(0, 2, 256), 256u);               // small buffers stay small
  // Set by hand: a multiple of 64, at least 256, at most the buffer size.
  EXPECT_EQ(node_buffer_bytes(1000, 32, 32 * k_kib), 1024u);
  EXPECT_EQ(node_buffer_bytes(10, 32, 32 * k_kib), 256u);
  EXPECT_EQ(node_buffer_bytes(1 << 20, 32, 32 * k_kib), 32 * k_kib);
}

TEST(MemoryPlan, NodeCreditsFallWithTheNodeWithinOneAndTheConfigured) {
  EXPECT_EQ(node_credits(1, 4), 4u);
  EXPECT_EQ(node_credits(2, 4), 4u);
  EXPECT_EQ(node_credits(8, 4), 2u);
  EXPECT_EQ(node_credits(16, 4), 1u);
  EXPECT_EQ(node_credits(128, 4), 1u);
  EXPECT_EQ(node_credits(2, 2), 2u);
}

TEST(MemoryPlan, PoolGrowsWithTheNodeOnlyAndStaysInAnEighthOfTheBudget) {
  const std::size_t budget = 256 * k_kib * k_kib;
  EXPECT_EQ(pool_slots(32, 1), 0u);  // one PE on the node: nothing to share
  EXPECT_EQ(pool_slots(32, 2), 32u * 4);
  EXPECT_EQ(pool_slots(32, 32), 32u * 31);
  EXPECT_EQ(pool_per_peer(32, budget, 32, 4 * k_kib), 32u);
  // 1 MiB budget, 8 KiB slots: an eighth is 16 slots, 4 per peer on a node of 4 (as for 4).
  EXPECT_EQ(pool_per_peer(32, k_kib * k_kib, 4, 8 * k_kib), 4u);
  EXPECT_EQ(pool_per_peer(0, budget, 32, 4 * k_kib), 0u);
  for (int node = 2; node <= 128; node *= 2) {
    const std::size_t cap = node_buffer_bytes(0, node, 32 * k_kib);
    const auto slots = pool_slots(pool_per_peer(32, budget, node, cap), node);
    EXPECT_LE(static_cast<std::size_t>(slots) * cap, budget / 8) << node;
  }
}

TEST(MemoryPlan, RingsArePowersOfTwoOfAtMost256Entries) {
  EXPECT_EQ(ring_entries(0), 1u);
  EXPECT_EQ(ring_entries(100), 128u);
  EXPECT_EQ(ring_entries(992), 256u);
  EXPECT_EQ(ring_bytes(256), 128u + 2 * 1024);
  EXPECT_EQ(pool_bytes(0, 32, 4096), 0u);
  EXPECT_EQ(pool_bytes(992, 32, 4096), 32 * ring_bytes(256) + 992u * 4096);
}

TEST(MemoryPlan, DirectRoutingOnOneNodeTakesEverythingFromThePoolOrAsBefore) {
  // 4 PEs on one node: 3 node lanes and the own PE's, 3 links in from the node.
  const routes r = routes::direct(1, 4);
  const mailbox_shape s = shape_of(r, [](int) { return true; });
  EXPECT_EQ(s.self_lanes, 1u);
  EXPECT_EQ(s.node_lanes, 3u);
  EXPECT_EQ(s.far_lanes, 0u);
  EXPECT_EQ(s.node_links_in, 3u);
  EXPECT_EQ(s.far_links_in, 0u);
  EXPECT_EQ(mailbox_slots(s, 4), 3u + 9);  // own slot per node lane, 1 + 2C for itself
  EXPECT_EQ(mailbox_reservation(s, 32 * k_kib, 4, true), 0u);
  // Without slots, the reservation is the direct formula: P x buffer x (1 + 2C).
  EXPECT_EQ(mailbox_reservation(s, 32 * k_kib, 4, false), 4 * 32 * k_kib * 9);
  EXPECT_EQ(credits_that_fit(s, 32 * k_kib, 0, 4, true), 4u);  // nothing from the budget
  EXPECT_EQ(credits_that_fit(s, 32 * k_kib, 4 * 32 * k_kib * 5, 4, false), 2u);
  EXPECT_EQ(credits_that_fit(s, 32 * k_kib, 4 * 32 * k_kib * 2, 4, false), 0u);
}

TEST(MemoryPlan, NodeRoutingTakesOnlyTheNetworkLinksFromTheBudget) {
  // 8 nodes of 4: PE 5 (node 1) owns the links to nodes 1 + 4k (5 only: b % 4 == 1, b != 1).
  std::vector<int> node_of, local_of;
  for (int p = 0; p < 32; ++p) {
    node_of.push_back(p / 4);
    local_of.push_back(p % 4);
  }
  const routes r = routes::node(5, node_of, local_of);
  const mailbox_shape s = shape_of(r, [](int p) { return p / 4 == 1; });
  EXPECT_EQ(s.self_lanes, 2u);      // final and delivery to itself
  EXPECT_EQ(s.node_lanes, 3u * 3);  // final, transit and delivery to the 3 others
  EXPECT_EQ(s.far_lanes, static_cast<std::size_t>(r.network_peers() > 0 ? 1 : 0));
  EXPECT_EQ(s.far_lanes + s.self_lanes + s.node_lanes, static_cast<std::size_t>(r.lanes()));
  // Per lane to another node one buffer of the mailbox's own (filling or in flight), per link
  // in one arrived, whatever the credits: the link pool holds the rest, once per PE.
  for (const std::uint32_t c : {1u, 2u, 4u})
    EXPECT_EQ(mailbox_reservation(s, 8 * k_kib, c, true),
              8 * k_kib * (s.far_lanes + s.far_links_in));
  EXPECT_EQ(link_pool_bytes(s, 8 * k_kib, 4), 8 * k_kib * 4 * (s.far_lanes + s.far_links_in));
  EXPECT_EQ(mailbox_slots(s, 1), 9u + 2u * 3);
}

TEST(MemoryPlan, TheLinkPoolTakesAtMostHalfOfWhatIsLeft) {
  mailbox_shape s;
  s.far_lanes = 2;
  s.far_links_in = 3;
  const std::size_t one = link_pool_bytes(s, 32 * k_kib, 1);
  EXPECT_EQ(one, 5 * 32 * k_kib);
  EXPECT_EQ(link_credits_that_fit(s, 32 * k_kib, 100 * one, 4), 4u);
  EXPECT_EQ(link_credits_that_fit(s, 32 * k_kib, 6 * one, 4), 3u);
  EXPECT_EQ(link_credits_that_fit(s, 32 * k_kib, one, 4), 0u);              // own credits only
  EXPECT_EQ(link_credits_that_fit(mailbox_shape{}, 32 * k_kib, 0, 4), 4u);  // no link: free
  // auto's test: the pool once and four mailboxes.
  const std::size_t mailbox = mailbox_reservation(s, 32 * k_kib, 4, true);
  EXPECT_TRUE(auto_fits(s, 32 * k_kib, 4, 4 * one + 4 * mailbox));
  EXPECT_FALSE(auto_fits(s, 32 * k_kib, 4, 4 * one + 4 * mailbox - 1));
}

TEST(MemoryPlan, RoutedTablesDoNotGrowWithThePes) {
  // Nodes of 32: 64 nodes and 1,024 (32,768 PEs). Per PE there is nothing: per node its hop
  // and, under node routing, the send's masks (4 and 8 bytes), a PE's lanes and links in, the
  // PEs of its node. (They took 28 bytes per PE: 0.9 MiB at 32,768.)
  for (const routing how : {routing::node, routing::mesh, routing::mesh3d, routing::hypercube}) {
    std::size_t small = 0;
    for (const int nodes : {64, 1024}) {
      const node_layout l = node_layout::blocked(nodes * 32, 32);
      std::size_t most = 0;
      for (const int pe : {0, 17, nodes * 32 - 1}) {
        const routes r = routes::of(how, pe, l);
        most = std::max(most, routing_table_bytes(r));
      }
      if (small == 0) small = most;
      // Node routing's links grow with nodes / 32, a grid's with their square or cube root or
      // their logarithm, and its transit lanes (31 per stage) with its dimensions.
      const auto stages = [&](int n) {
        return how == routing::node ? 1 : node_grid(how, n).dimensions();
      };
      const auto more_stages = static_cast<std::size_t>(stages(nodes) - stages(64));
      const std::size_t per_node = how == routing::node ? 12 : 4;
      EXPECT_LE(most, small + per_node * static_cast<std::size_t>(nodes) + 40 * (nodes / 32 + 1) +
                          16 * 31 * more_stages)
          << routing_name(static_cast<std::uint64_t>(how)) << " routing, " << nodes << " nodes";
      EXPECT_LT(most, 32 * k_kib);
      // (And what grows with the nodes is counted: the hop, and node routing's masks.)
      EXPECT_GE(most, per_node * static_cast<std::size_t>(nodes));
    }
  }
}

}  // namespace
