// SPDX-License-Identifier: MIT
// The capacity plan: what mailroom would reserve per PE on a machine of P PEs in nodes of a
// given size, for each routing, computed by the runtime's own sizing code over the routing
// tables it would build. Needs no MPI job (mailroom-bench plan prints it).
#pragma once

#include "mailroom/config.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mailroom {

/// One routing's figures for its worst PE (of node 0, where every node is alike when they are
/// full, and with mesh routing also of the node with the most links in).
struct routing_plan {
  /// "direct", "node" or "mesh".
  std::string name;
  int lanes = 0;                   ///< lanes per typed mailbox
  int links_in = 0;                ///< links in per typed mailbox
  int network_peers = 0;           ///< PEs of other nodes this PE sends buffers to
  int links = 0;                   ///< lanes + links in
  std::uint32_t credits = 0;       ///< of the last mailbox (they only go down)
  std::uint32_t link_credits = 0;  ///< of the link pool, per lane to another node
  int in_slots = 0;                ///< mailboxes whose lanes within the node are shared slots
  ///@{
  /// Bytes: buffers are the link pool's and every mailbox's reservations, shared the PE's pool
  /// of node-shared memory, receives the posted receives, tables the mailbox and routing tables.
  std::size_t buffers = 0, shared = 0, receives = 0, tables = 0;  ///< bytes
  ///@}
  bool fits = true;       ///< every mailbox fits the budget
  bool auto_fits = true;  ///< auto's budget test holds on every PE planned
  /// The PE's aggregation memory in bytes: buffers + shared + receives + tables.
  [[nodiscard]] std::size_t total() const { return buffers + shared + receives + tables; }
};

/// The plan of a machine: its node memory as the runtime lays it out, and each routing's.
struct machine_plan {
  ///@{
  /// As planned: PEs, PEs per node, nodes (the last one may be partly filled) and typed
  /// mailboxes alive at once.
  int pes = 1, per_node = 1, nodes = 1, mailboxes = 1;
  ///@}
  std::size_t buffer_bytes = 0;         ///< between nodes (rounded as the runtime does)
  std::size_t node_buffer_bytes = 0;    ///< of a shared slot
  std::uint32_t node_credits = 0;       ///< per lane within the node
  std::uint32_t pool_slots = 0;         ///< slots in each PE's shared pool
  std::vector<routing_plan> routings;   ///< direct, node, mesh, mesh3d, hypercube
  routing automatic = routing::direct;  ///< what MAILROOM_ROUTING=auto resolves to
};

/// Plans `mailboxes` typed mailboxes alive at once on `pes` PEs in nodes of `per_node`, with the
/// settings of `cfg` (MAILROOM_* as read by config::from_environment). No MPI needed.
[[nodiscard]] machine_plan plan_memory(const config& cfg, int pes, int per_node, int mailboxes);

}  // namespace mailroom
