// Reservations of the aggregation layer (detail/memory_plan.hpp).
#include "mailroom/detail/memory_plan.hpp"

#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/detail/exchange.hpp"

#include <algorithm>
#include <bit>

namespace mailroom::detail {

std::size_t mailbox_reservation(const routes& r, std::size_t capacity, std::uint32_t c) noexcept {
  std::size_t in_links = 0;
  for (const auto& peers : r.in_peers) in_links += peers.size();
  const auto lanes = static_cast<std::size_t>(r.lanes());
  return capacity * (lanes + static_cast<std::size_t>(c) * (lanes + in_links));
}

std::uint32_t credits_that_fit(const routes& r, std::size_t capacity, std::size_t left,
                               std::uint32_t most) noexcept {
  if (most == 0 || left < mailbox_reservation(r, capacity, 1)) return 0;
  const std::size_t base = mailbox_reservation(r, capacity, 0);
  const std::size_t per_credit = mailbox_reservation(r, capacity, 1) - base;
  return static_cast<std::uint32_t>(std::min<std::size_t>(most, (left - base) / per_credit));
}

std::uint32_t shared_slots_per_pair(std::uint64_t wanted, std::size_t budget, int node_size,
                                    std::size_t capacity) noexcept {
  if (node_size <= 1) return 0;
  std::uint64_t slots = std::min<std::uint64_t>(wanted, 1u << 16);
  slots = std::min<std::uint64_t>(slots, budget / 8 / (static_cast<std::size_t>(node_size) * capacity));
  return static_cast<std::uint32_t>(std::bit_floor(slots));
}

std::size_t shared_slot_reservation(std::uint32_t slots, int node_size,
                                    std::size_t capacity) noexcept {
  return node_size > 1 ? static_cast<std::size_t>(node_size - 1) * slots * capacity : 0;
}

std::size_t mailbox_table_bytes(const routes& r, bool delta_records) noexcept {
  return conveyor_core::table_bytes(r, delta_records);
}

std::size_t routing_table_bytes(const routes& r) noexcept {
  std::size_t in_links = 0;
  for (const auto& peers : r.in_peers) in_links += peers.size();
  const auto pes = static_cast<std::size_t>(r.pes);
  // The hop table, the lane maps per class, per lane its peer and class, the links in; the node
  // of each PE; the buffers that always look full (routed conveyors' fast path); the exchange's
  // per-PE state for shared memory.
  return sizeof(std::uint32_t) * r.hop.size() + sizeof(std::int32_t) * k_link_classes * pes +
         (sizeof(int) + 1) * static_cast<std::size_t>(r.lanes()) + sizeof(int) * in_links +
         (r.routed ? conveyor_core::always_full_bytes(r.pes) : 0) + sizeof(int) * pes +
         exchange::per_pe_bytes(r.pes);
}

}  // namespace mailroom::detail
