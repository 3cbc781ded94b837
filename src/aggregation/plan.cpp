// SPDX-License-Identifier: MIT
// The capacity plan (mailroom/plan.hpp): the runtime's sizing functions (memory_plan.hpp) over
// the routing tables it would build (routes.hpp), for a machine described rather than joined.
#include "mailroom/plan.hpp"

#include "aggregation/memory_plan.hpp"
#include "aggregation/routes.hpp"

#include <algorithm>

namespace mailroom {

namespace {

// The node memory as the runtime lays it out (exchange::start_shared).
struct node_plan {
  int size = 1;
  std::size_t capacity = 0, node_capacity = 0;
  std::uint32_t node_credits = 0, slots = 0;
};

node_plan node_for(const config& cfg, int pes, int per_node) {
  node_plan n;
  n.size = std::min(per_node, pes);
  n.capacity = (cfg.buffer_bytes + 63) / 64 * 64;  // as the exchange rounds
  n.node_capacity = detail::node_buffer_bytes(cfg.node_buffer_bytes, n.size, n.capacity);
  n.node_credits = detail::node_credits(n.size, static_cast<std::uint32_t>(cfg.credits));
  n.slots = detail::pool_slots(
      detail::pool_per_peer(cfg.shared_slots, cfg.budget_bytes, n.size, n.node_capacity), n.size);
  return n;
}

routing_plan plan_for(routing r, const config& cfg, const node_plan& node, int pes, int per_node,
                      int mailboxes) {
  routing_plan out;
  out.name = routing_name(static_cast<std::uint64_t>(r));
  const detail::node_layout layout = detail::node_layout::blocked(pes, per_node);
  const int nodes = (pes + per_node - 1) / per_node;
  std::vector<int> planned{0};
  // On a grid whose last slab is short, the last node of the slab below it hosts the places
  // missing there, and has the most links.
  if (r == routing::mesh || r == routing::mesh3d || r == routing::hypercube)
    if (const detail::node_grid g(r, nodes); g.dimensions() > 1 && nodes % g.span.back() != 0)
      planned.push_back((nodes - 1) / g.span.back() * g.span.back() - 1);
  std::vector<int> pe_list;
  for (int n : planned)
    for (int p = n * per_node; p < std::min(pes, (n + 1) * per_node); ++p) pe_list.push_back(p);
  std::vector<detail::routes> jobs;
  std::vector<detail::mailbox_shape> shapes;
  std::size_t slot_need = 0;  // the most of any PE, as the runtime takes it
  for (int pe : pe_list) {
    jobs.push_back(detail::routes::of(r, pe, layout));
    shapes.push_back(
        detail::shape_of(jobs.back(), [&](int p) { return p / per_node == pe / per_node; }));
    slot_need = std::max(slot_need, detail::mailbox_slots(shapes.back(), node.node_credits));
  }
  bool auto_fits = true;
  // Reserved at start: the posted receives and the shared pool (a pool too small for any
  // mailbox stays unused, and is not reserved from the budget).
  const std::size_t receives = cfg.receives_posted * node.capacity;
  const std::size_t pool =
      slot_need <= node.slots ? detail::pool_bytes(node.slots, node.size, node.node_capacity) : 0;
  // The link pool's credits: the least any PE's budget holds, as the runtime agrees on them.
  std::uint32_t link_credits = static_cast<std::uint32_t>(cfg.link_credits);
  const std::size_t left_at_start =
      cfg.budget_bytes > receives + pool ? cfg.budget_bytes - receives - pool : 0;
  for (const auto& shape : shapes)
    link_credits = std::min(link_credits, detail::link_credits_that_fit(
                                              shape, node.capacity, left_at_start, link_credits));
  for (std::size_t k = 0; k < pe_list.size(); ++k) {
    const int pe = pe_list[k];
    const detail::routes& job = jobs[k];
    const detail::mailbox_shape& shape = shapes[k];
    auto_fits = auto_fits &&
                detail::auto_fits(shape, node.capacity,
                                  static_cast<std::uint32_t>(cfg.link_credits), cfg.budget_bytes);
    std::size_t in = 0;
    for (const auto& peers : job.in_peers) in += peers.size();
    routing_plan p;
    p.lanes = job.lanes();
    p.links_in = static_cast<int>(in);
    p.network_peers = job.routed ? job.network_peers() : pes - node.size;
    p.receives = receives;
    p.shared = detail::pool_bytes(node.slots, node.size, node.node_capacity);
    p.link_credits = link_credits;
    p.buffers = detail::link_pool_bytes(shape, node.capacity, link_credits);
    // Mailboxes take their reservations in turn, as the runtime's: slots while the pool lasts,
    // and from what the budget leaves.
    std::size_t reserved = receives + pool + p.buffers, slots_taken = 0;
    for (int m = 0; m < mailboxes; ++m) {
      const bool in_slots = node.slots > 0 && slots_taken + slot_need <= node.slots;
      const std::size_t left = cfg.budget_bytes > reserved ? cfg.budget_bytes - reserved : 0;
      const std::uint32_t c =
          detail::credits_that_fit(shape, node.capacity, left, node.node_credits, in_slots);
      if (c == 0) p.fits = false;
      p.credits = c;
      const std::size_t bytes =
          detail::mailbox_reservation(shape, node.capacity, std::max(c, 1u), in_slots);
      reserved += bytes;
      p.buffers += bytes;
      if (in_slots) {
        slots_taken += slot_need;
        ++p.in_slots;
      }
      p.tables += detail::mailbox_table_bytes(job, false);
    }
    p.tables += detail::routing_table_bytes(job);
    p.links = p.lanes + p.links_in;
    if (pe == 0 || p.total() > out.total()) {
      p.name = out.name;
      out = p;
    }
  }
  out.auto_fits = auto_fits;
  return out;
}

}  // namespace

machine_plan plan_memory(const config& cfg, int pes, int per_node, int mailboxes) {
  machine_plan m;
  m.pes = pes;
  m.per_node = per_node;
  m.nodes = (pes + per_node - 1) / per_node;
  m.mailboxes = mailboxes;
  const node_plan node = node_for(cfg, pes, per_node);
  m.buffer_bytes = node.capacity;
  m.node_buffer_bytes = node.node_capacity;
  m.node_credits = node.node_credits;
  m.pool_slots = node.slots;
  for (routing r :
       {routing::direct, routing::node, routing::mesh, routing::mesh3d, routing::hypercube})
    m.routings.push_back(plan_for(r, cfg, node, pes, per_node, mailboxes));
  // auto as the runtime resolves it (exchange::start_routes), widened while the budget does
  // not hold a few mailboxes.
  const int widest = std::min(per_node, pes);
  routing chosen = detail::resolve_routing(routing::automatic, pes, m.nodes, widest);
  while (pes > 64 && m.nodes > 1 && chosen != routing::mesh &&
         !m.routings[static_cast<std::size_t>(chosen) - 1].auto_fits)
    chosen = detail::next_routing(chosen, widest);
  m.automatic = chosen;
  return m;
}

}  // namespace mailroom
