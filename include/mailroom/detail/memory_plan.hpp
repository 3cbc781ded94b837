// What aggregation reserves per PE, as functions of the routing, the buffer size and the
// credits: the runtime sizes its mailboxes and shared slots with these, and the capacity plan
// (`mailroom-bench plan`) calls them for machines it is not running on. Not API.
#pragma once

#include "mailroom/detail/routes.hpp"

#include <cstddef>
#include <cstdint>

namespace mailroom::detail {

/// Bytes a mailbox over routes `r` reserves with c credits (buffers of `capacity` bytes): per
/// lane one buffer filling and c sent and unacknowledged, per link into this PE c arrived and
/// unhandled (or waiting to be forwarded). The own PE's lanes count both ways (2c waiting).
[[nodiscard]] std::size_t mailbox_reservation(const routes& r, std::size_t capacity,
                                              std::uint32_t c) noexcept;
/// The credits a new mailbox gets when `left` bytes of the budget are free: `most`, or fewer
/// if they do not fit; 0 (reserving nothing) when not even one does.
[[nodiscard]] std::uint32_t credits_that_fit(const routes& r, std::size_t capacity,
                                             std::size_t left, std::uint32_t most) noexcept;
/// Shared-memory slots per pair of PEs on a node of `node_size` PEs: `wanted` (at most 65,536),
/// fewer if all of a PE's would take more than an eighth of the budget, rounded down to a power
/// of two; 0 with one PE on the node.
[[nodiscard]] std::uint32_t shared_slots_per_pair(std::uint64_t wanted, std::size_t budget,
                                                  int node_size, std::size_t capacity) noexcept;
/// Bytes those slots reserve per PE (the buffers it fills for the other PEs of its node).
[[nodiscard]] std::size_t shared_slot_reservation(std::uint32_t slots, int node_size,
                                                  std::size_t capacity) noexcept;
/// Bytes of a mailbox's bookkeeping per lane and per PE (fill state, counters, credits, end of
/// stream), with delta records (lambda mailboxes) or without.
[[nodiscard]] std::size_t mailbox_table_bytes(const routes& r, bool delta_records) noexcept;
/// Bytes of the per-PE routing tables (the hop table and lane maps, and the exchange's per-PE
/// arrays).
[[nodiscard]] std::size_t routing_table_bytes(const routes& r) noexcept;

}  // namespace mailroom::detail
