// mailroom-bench plan: what mailroom would reserve per PE on a machine of P PEs, for each
// routing, computed by the runtime's own sizing functions (detail/memory_plan.hpp) over the
// routing tables it would build (detail/routes.hpp). Needs no MPI job.
#include "common/plan.hpp"

#include "mailroom/config.hpp"
#include "mailroom/detail/exchange.hpp"
#include "mailroom/detail/memory_plan.hpp"
#include "mailroom/detail/routes.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace mailroom::apps {

namespace {

// One routing's figures for its worst PE: of node 0 (every node alike when they are full), and
// with mesh routing also of the node with the most links in (the one a short last row's first
// hops land on instead of the missing node below it).
struct routing_plan {
  std::string name;
  int lanes = 0, links_in = 0, network_peers = 0, links = 0;
  std::uint32_t credits = 0;  // of the last mailbox (they only go down)
  std::uint32_t link_credits = 0;  // of the link pool, per lane to another node
  int in_slots = 0;           // mailboxes whose node lanes are in shared slots
  std::size_t buffers = 0, shared = 0, receives = 0, tables = 0;
  bool fits = true;
  bool auto_fits = true;  // auto's budget test (detail::auto_fits) holds on every PE planned
  [[nodiscard]] std::size_t total() const { return buffers + shared + receives + tables; }
};

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
  if (const detail::mesh_grid g(nodes); r == routing::mesh && g.nodes > g.columns)
    planned.push_back(g.nodes - g.nodes % g.columns - 1);  // the last node of the last full row
  std::vector<int> pe_list;
  for (int n : planned)
    for (int p = n * per_node; p < std::min(pes, (n + 1) * per_node); ++p) pe_list.push_back(p);
  std::vector<detail::routes> jobs;
  std::vector<detail::mailbox_shape> shapes;
  std::size_t slot_need = 0;  // the most of any PE, as the runtime takes it
  for (int pe : pe_list) {
    jobs.push_back(r == routing::node   ? detail::routes::node(pe, layout)
                   : r == routing::mesh ? detail::routes::mesh(pe, layout)
                                        : detail::routes::direct(pe, layout));
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
    auto_fits = auto_fits && detail::auto_fits(shape, node.capacity,
                                               static_cast<std::uint32_t>(cfg.link_credits),
                                               cfg.budget_bytes);
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

std::string mib(std::size_t bytes) {
  return fmt::format("{:.2f}", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

int run_plan(int argc, char** argv) {
  CLI::App cli{
      "mailroom-bench plan: the memory mailroom reserves per PE on a machine of P PEs, for each "
      "routing, sized by the runtime's own functions (MAILROOM_* settings apply). No MPI job."};
  int pes = 0, per_node = 1, mailboxes = 1;
  std::string json_file;
  cli.add_option("-P,--pes", pes, "PEs in the job")->required()->check(CLI::Range(1, 1 << 24));
  cli.add_option("--per-node", per_node, "PEs per node (default 1)")
      ->check(CLI::Range(1, 1 << 16));
  cli.add_option("--mailboxes", mailboxes, "typed mailboxes alive at once (default 1)")
      ->check(CLI::Range(1, 1024));
  cli.add_option("--json", json_file, "also write the plan as JSON to this file");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    std::fprintf(stderr, "mailroom-bench: error: plan: %s (see plan --help)\n", what.c_str());
    return 2;
  }
  const config cfg = config::from_environment();
  const int nodes = (pes + per_node - 1) / per_node;
  const node_plan node = node_for(cfg, pes, per_node);
  std::vector<routing_plan> plans;
  for (routing r : {routing::direct, routing::node, routing::mesh})
    plans.push_back(plan_for(r, cfg, node, pes, per_node, mailboxes));
  // auto as the runtime resolves it (exchange::start_routes), widened while the budget does
  // not hold a few mailboxes.
  const int widest = std::min(per_node, pes);
  routing chosen = detail::resolve_routing(routing::automatic, pes, nodes, widest);
  while (pes > 64 && nodes > 1 && chosen != routing::mesh &&
         !plans[static_cast<std::size_t>(chosen) - 1].auto_fits)
    chosen = detail::next_routing(chosen, widest);

  fmt::print("plan: {} PEs, {} per node ({} nodes), {} typed mailboxes; buffers of {} bytes "
             "between nodes, 1 credit per mailbox and {} in the link pool per lane to another "
             "node; shared pool of {} slots of {} bytes per PE, {} credits per lane in the "
             "node; budget {} MiB; auto is {}\n",
             pes, per_node, nodes, mailboxes, node.capacity, cfg.link_credits, node.slots,
             node.node_capacity, node.node_credits, mib(cfg.budget_bytes),
             routing_name(static_cast<std::uint64_t>(chosen)));
  fmt::print("{:<8} {:>7} {:>6} {:>8} {:>8} {:>7} {:>9} {:>11} {:>8} {:>8} {:>10} {:>9}  {}\n",
             "routing", "network", "lanes", "links in", "in slots", "credits", "link pool",
             "buffers MiB", "shm MiB", "recv MiB", "tables MiB", "total MiB", "fits");
  for (const auto& p : plans)
    fmt::print("{:<8} {:>7} {:>6} {:>8} {:>8} {:>7} {:>9} {:>11} {:>8} {:>8} {:>10} {:>9}  {}\n",
               p.name, p.network_peers, p.lanes, p.links_in, p.in_slots, p.credits, p.link_credits,
               mib(p.buffers), mib(p.shared), mib(p.receives), mib(p.tables), mib(p.total()),
               p.fits ? "yes" : "no");
  if (!json_file.empty()) {
    nlohmann::json j;
    j["pes"] = pes;
    j["per_node"] = per_node;
    j["nodes"] = nodes;
    j["mailboxes"] = mailboxes;
    j["config"] = {{"buffer_bytes", cfg.buffer_bytes},
                   {"credits", cfg.credits},
                   {"link_credits", cfg.link_credits},
                   {"budget_bytes", cfg.budget_bytes},
                   {"shared_slots", cfg.shared_slots},
                   {"node_buffer_bytes", node.node_capacity},
                   {"node_credits", node.node_credits},
                   {"pool_slots", node.slots}};
    j["auto"] = routing_name(static_cast<std::uint64_t>(chosen));
    for (const auto& p : plans)
      j["routings"][p.name] = {{"network_peers_per_pe", p.network_peers},
                               {"lanes_per_mailbox", p.lanes},
                               {"links_in_per_mailbox", p.links_in},
                               {"credits", p.credits},
                               {"link_pool_credits", p.link_credits},
                               {"mailboxes_in_slots", p.in_slots},
                               {"bytes",
                                {{"aggregation_buffers", p.buffers},
                                 {"shared_memory", p.shared},
                                 {"posted_receives", p.receives},
                                 {"tables", p.tables},
                                 {"total", p.total()}}},
                               {"fits", p.fits}};
    std::ofstream f(json_file);
    f << j.dump(2) << '\n';
    if (!f) {
      std::fprintf(stderr, "mailroom-bench plan: cannot write %s\n", json_file.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace mailroom::apps
