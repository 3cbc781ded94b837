// SPDX-License-Identifier: MIT
// What aggregation reserves per PE, as functions of the routing, the node, the buffer sizes and
// the credits: the runtime sizes its mailboxes and its shared pool with these, and the capacity
// plan (`mailroom-bench plan`) calls them for machines it is not running on. Not API.
//
// A mailbox's lanes to the PEs of its node (itself included) fill slots of the PE's shared pool
// when the pool has room for them (its "slot lanes"): small buffers, one slot of its own per
// lane and the rest of the pool shared, and nothing reserved on the receiving side, whose
// handlers read the sender's slot in place. Its lanes to other nodes take heap buffers from the
// budget: per lane one of its own, filling or in flight, per link in one arrived; more come from
// the PE's link pool, shared by its mailboxes. When the pool is full, a mailbox's lanes within
// the node take heap buffers too, C_node credits each (docs/design.md, memory).
#pragma once

#include "aggregation/routes.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mailroom::detail {

/// A mailbox's lanes and links in, split by where they lead: to this PE, to other PEs of its
/// node, to other nodes.
struct mailbox_shape {
  std::size_t self_lanes = 0, node_lanes = 0, far_lanes = 0;
  std::size_t node_links_in = 0, far_links_in = 0;  // from other PEs (this one not counted)
};
/// The shape of a mailbox over routes `r`; `on_node(p)` tells whether PE p shares this PE's node
/// memory.
template <class OnNode>
[[nodiscard]] mailbox_shape shape_of(const routes& r, OnNode&& on_node) {
  mailbox_shape s;
  for (const int p : r.peer) (p == r.me ? s.self_lanes : on_node(p) ? s.node_lanes : s.far_lanes)++;
  for (const auto& peers : r.in_peers)
    for (const int p : peers)
      if (p != r.me) (on_node(p) ? s.node_links_in : s.far_links_in)++;
  return s;
}

/// Bytes a buffer of a lane to a PE of the node holds when it is a slot: MAILROOM_NODE_BUFFER_BYTES
/// if set (`wanted`), else 128 KiB / node_size, at least 4 KiB: what a PE fills for the whole node
/// stays the same as nodes grow. At most `capacity`; a multiple of 64.
[[nodiscard]] std::size_t node_buffer_bytes(std::uint64_t wanted, int node_size,
                                            std::size_t capacity) noexcept;
/// Credits of a slot lane: 16 / node_size, at least 1, at most `credits`. A PE of a large node
/// has many slot lanes, and what keeps the node's memory busy is the buffers in flight over all
/// of them, not per lane.
[[nodiscard]] std::uint32_t node_credits(int node_size, std::uint32_t credits) noexcept;
/// Slots per other PE of the node in a PE's shared pool: `wanted` (MAILROOM_SHARED_SLOTS), fewer
/// if the pool would take more than an eighth of the budget. (The PEs of a node take the least
/// of theirs: they lay out their parts alike.)
[[nodiscard]] std::uint64_t pool_per_peer(std::uint64_t wanted, std::size_t budget, int node_size,
                                          std::size_t node_capacity) noexcept;
/// Slots of a PE's shared pool: `per_peer` per other PE of its node (as for 4 others on smaller
/// nodes); 0 with one PE on the node.
[[nodiscard]] std::uint32_t pool_slots(std::uint64_t per_peer, int node_size) noexcept;
/// Entries of a hand-over ring for a pool of `slots`: a power of two, at most 256.
[[nodiscard]] std::uint32_t ring_entries(std::uint32_t slots) noexcept;
/// Bytes of one hand-over ring of `entries`.
[[nodiscard]] std::size_t ring_bytes(std::uint32_t entries) noexcept;
/// Bytes of a PE's part of the node memory: a ring per PE of the node, then the slots.
[[nodiscard]] std::size_t pool_bytes(std::uint32_t slots, int node_size,
                                     std::size_t node_capacity) noexcept;
/// Slots a mailbox reserves in its PE's pool: one per lane to another PE of the node (filling
/// or handed over: the lane can always move one buffer at a time; it takes the slots beyond the
/// reservations, which all mailboxes share, to keep up to c_node in flight), and for the own PE
/// one filling and 2 c_node arrived.
[[nodiscard]] std::size_t mailbox_slots(const mailbox_shape& s, std::uint32_t c_node) noexcept;
/// Heap bytes a mailbox reserves (buffers of `capacity` bytes): per lane to another node one of
/// its own, filling or in flight, per link in from another node one arrived (the link pool holds
/// the rest: link_pool_bytes); and when its node lanes are not in slots, those
/// lanes and links with c credits each (the own PE's lanes count both ways: 2c arrived).
[[nodiscard]] std::size_t mailbox_reservation(const mailbox_shape& s, std::size_t capacity,
                                              std::uint32_t c, bool in_slots) noexcept;
/// Heap bytes of a PE's link pool with k credits per lane to and link in from another node:
/// buffers in flight that any mailbox may use beyond its own credit, reserved once, not per
/// mailbox (docs/design.md, flow control).
[[nodiscard]] std::size_t link_pool_bytes(const mailbox_shape& s, std::size_t capacity,
                                          std::uint32_t k) noexcept;
/// The link pool's credits when `left` bytes of the budget are free: `most`, or as many as half
/// of `left` holds (the other half is for the mailboxes).
[[nodiscard]] std::uint32_t link_credits_that_fit(const mailbox_shape& s, std::size_t capacity,
                                                  std::size_t left, std::uint32_t most) noexcept;
/// The budget test of `auto` routing: whether the link pool with `credits` credits and
/// k_auto_mailboxes mailboxes of shape `s` hold their lanes and links to other nodes (the shared
/// pool takes the others) within `budget`. A routing that fails it is widened
/// (aggregation/routes.hpp, next_routing): direct at 1,024 PEs on nodes of one PE reserves 512 MiB
/// for the link pool and 96 MiB per mailbox.
inline constexpr std::size_t k_auto_mailboxes = 4;
[[nodiscard]] bool auto_fits(const mailbox_shape& s, std::size_t capacity, std::uint32_t credits,
                             std::size_t budget) noexcept;
/// The credits a new mailbox gets when `left` bytes of the budget are free: `most`, or fewer
/// if they do not fit; 0 (reserving nothing) when not even one does.
[[nodiscard]] std::uint32_t credits_that_fit(const mailbox_shape& s, std::size_t capacity,
                                             std::size_t left, std::uint32_t most,
                                             bool in_slots) noexcept;
/// Bytes of a mailbox's bookkeeping per lane and per PE (fill state, counters, credits, end of
/// stream), with delta records (lambda mailboxes) or without.
[[nodiscard]] std::size_t mailbox_table_bytes(const routes& r, bool delta_records) noexcept;
/// Bytes of a PE's routing tables (lanes, links in, the hop per node, the PEs of its node, and
/// the node layout's tables where it has no formula).
[[nodiscard]] std::size_t routing_table_bytes(const routes& r) noexcept;

}  // namespace mailroom::detail
