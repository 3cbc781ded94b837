// SPDX-License-Identifier: MIT
// Reservations of the aggregation layer (src/aggregation/memory_plan.hpp).
#include "aggregation/memory_plan.hpp"

#include "aggregation/exchange.hpp"
#include "mailroom/detail/conveyor_core.hpp"

#include <algorithm>
#include <bit>

namespace mailroom::detail {

namespace {
constexpr std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
constexpr std::size_t k_node_bytes = std::size_t{128} << 10;  // filled per PE for the node
constexpr std::size_t k_least_node_buffer = 4096;
}  // namespace

std::size_t node_buffer_bytes(std::uint64_t wanted, int node_size, std::size_t capacity) noexcept {
  std::size_t b = wanted > 0
                      ? std::max<std::size_t>(static_cast<std::size_t>(wanted), 256)
                      : std::max(k_least_node_buffer,
                                 std::bit_floor(k_node_bytes /
                                                static_cast<std::size_t>(std::max(node_size, 1))));
  return std::min(round_up(b, 64), capacity);
}

std::uint32_t node_credits(int node_size, std::uint32_t credits) noexcept {
  const auto c = static_cast<std::uint32_t>(16 / std::max(node_size, 1));
  return std::clamp(c, std::min(1u, credits), credits);
}

namespace {
// (Small nodes get the pool of a node of 5: a PE's own lanes take slots too.)
std::uint64_t pool_peers(int node_size) noexcept {
  return static_cast<std::uint64_t>(std::max(node_size - 1, 4));
}
}  // namespace

std::uint64_t pool_per_peer(std::uint64_t wanted, std::size_t budget, int node_size,
                            std::size_t node_capacity) noexcept {
  const std::uint64_t most = std::min<std::uint64_t>(budget / 8 / node_capacity, 1u << 24);
  return std::min(wanted, most / pool_peers(node_size));
}

std::uint32_t pool_slots(std::uint64_t per_peer, int node_size) noexcept {
  if (node_size <= 1) return 0;
  return static_cast<std::uint32_t>(per_peer * pool_peers(node_size));
}

std::uint32_t ring_entries(std::uint32_t slots) noexcept {
  return std::bit_ceil(std::clamp(slots, 1u, 256u));
}

std::size_t ring_bytes(std::uint32_t entries) noexcept {
  // Two cache lines of counts, then the sent and back halves, each on whole cache lines.
  return 128 + 2 * round_up(4 * static_cast<std::size_t>(entries), 64);
}

std::size_t pool_bytes(std::uint32_t slots, int node_size, std::size_t node_capacity) noexcept {
  if (slots == 0) return 0;
  return static_cast<std::size_t>(node_size) * ring_bytes(ring_entries(slots)) +
         static_cast<std::size_t>(slots) * node_capacity;
}

std::size_t mailbox_slots(const mailbox_shape& s, std::uint32_t c_node) noexcept {
  // A lane to another PE of the node: its own slot (the shared rest of the pool pipelines).
  return s.node_lanes + s.self_lanes * (1 + 2 * std::size_t{c_node});
}

std::size_t mailbox_reservation(const mailbox_shape& s, std::size_t capacity, std::uint32_t c,
                                bool in_slots) noexcept {
  // Lanes to other nodes: one buffer of its own, filling or in flight, one arrived per link in
  // (more come from the link pool: link_pool_bytes).
  std::size_t bytes = capacity * (s.far_lanes + s.far_links_in);
  if (!in_slots) {
    const std::size_t lanes = s.node_lanes + s.self_lanes, in = s.node_links_in + s.self_lanes;
    bytes += capacity * (lanes + static_cast<std::size_t>(c) * (lanes + in));
  }
  return bytes;
}

std::size_t link_pool_bytes(const mailbox_shape& s, std::size_t capacity,
                            std::uint32_t k) noexcept {
  return capacity * k * (s.far_lanes + s.far_links_in);
}

std::uint32_t link_credits_that_fit(const mailbox_shape& s, std::size_t capacity, std::size_t left,
                                    std::uint32_t most) noexcept {
  const std::size_t per_credit = link_pool_bytes(s, capacity, 1);
  if (per_credit == 0) return most;
  return static_cast<std::uint32_t>(std::min<std::size_t>(most, left / 2 / per_credit));
}

bool auto_fits(const mailbox_shape& s, std::size_t capacity, std::uint32_t credits,
               std::size_t budget) noexcept {
  return link_pool_bytes(s, capacity, credits) +
             k_auto_mailboxes * mailbox_reservation(s, capacity, credits, true) <=
         budget;
}

std::uint32_t credits_that_fit(const mailbox_shape& s, std::size_t capacity, std::size_t left,
                               std::uint32_t most, bool in_slots) noexcept {
  if (most == 0 || left < mailbox_reservation(s, capacity, 1, in_slots)) return 0;
  const std::size_t base = mailbox_reservation(s, capacity, 0, in_slots);
  const std::size_t per_credit = mailbox_reservation(s, capacity, 1, in_slots) - base;
  if (per_credit == 0) return most;  // nothing from the heap (every lane in slots)
  return static_cast<std::uint32_t>(std::min<std::size_t>(most, (left - base) / per_credit));
}

std::size_t mailbox_table_bytes(const routes& r, bool delta_records) noexcept {
  return conveyor_core::table_bytes(r, delta_records);
}

std::size_t routing_table_bytes(const routes& r) noexcept {
  std::size_t in_links = 0;
  for (const auto& peers : r.in_peers) in_links += peers.size();
  // Per lane its peer and class and the link pool's counts, the links in, per node the hop and
  // the send's masks (routes::own), the PEs of this node (the routes' and the exchange's), and
  // the layout's tables (none where it is a formula): nothing per PE of the job unless the
  // placement has no formula.
  return (sizeof(int) + 1 + 2 * sizeof(std::uint32_t)) * static_cast<std::size_t>(r.lanes()) +
         sizeof(int) * (in_links + 2 * r.node_members.size()) +
         sizeof(std::uint32_t) * r.node_hop.size() + sizeof(routes::own_hop) * r.own.size() +
         r.layout.table_bytes();
}

}  // namespace mailroom::detail
