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

// One routing's figures for the worst PE of node 0 (every node alike when they are full).
struct routing_plan {
  std::string name;
  int lanes = 0, links_in = 0, network_peers = 0, links = 0;
  std::uint32_t credits = 0;  // of the last mailbox (they only go down)
  std::size_t buffers = 0, shared = 0, receives = 0, tables = 0;
  bool fits = true;
  [[nodiscard]] std::size_t total() const { return buffers + shared + receives + tables; }
};

routing_plan plan_for(routing r, const config& cfg, int pes, int per_node, int mailboxes) {
  routing_plan out;
  out.name = routing_name(static_cast<std::uint64_t>(r));
  std::vector<int> node_of(static_cast<std::size_t>(pes)), local_of(node_of.size());
  for (int p = 0; p < pes; ++p) {
    node_of[static_cast<std::size_t>(p)] = p / per_node;
    local_of[static_cast<std::size_t>(p)] = p % per_node;
  }
  const std::size_t capacity = (cfg.buffer_bytes + 63) / 64 * 64;  // as the exchange rounds
  const std::uint32_t slots =
      detail::shared_slots_per_pair(cfg.shared_slots, cfg.budget_bytes, std::min(per_node, pes),
                                    capacity);
  for (int pe = 0; pe < std::min(per_node, pes); ++pe) {
    const detail::routes job = r == routing::node ? detail::routes::node(pe, node_of, local_of)
                                                  : detail::routes::direct(pe, pes);
    std::size_t in = 0;
    for (const auto& peers : job.in_peers) in += peers.size();
    routing_plan p;
    p.lanes = job.lanes();
    p.links_in = static_cast<int>(in);
    p.network_peers = r == routing::node ? job.network_peers() : pes - std::min(per_node, pes);
    p.receives = cfg.receives_posted * capacity;
    p.shared = detail::shared_slot_reservation(slots, std::min(per_node, pes), capacity);
    // Mailboxes take their reservations in turn from what the budget leaves, as the runtime's.
    std::size_t reserved = p.receives + p.shared;
    for (int m = 0; m < mailboxes; ++m) {
      const std::size_t left = cfg.budget_bytes > reserved ? cfg.budget_bytes - reserved : 0;
      const std::uint32_t c = detail::credits_that_fit(job, capacity, left,
                                                       static_cast<std::uint32_t>(cfg.credits));
      if (c == 0) p.fits = false;
      p.credits = c;
      const std::size_t bytes = detail::mailbox_reservation(job, capacity, std::max(c, 1u));
      reserved += bytes;
      p.buffers += bytes;
      p.tables += detail::mailbox_table_bytes(job, false);
    }
    p.tables += detail::routing_table_bytes(job);
    p.links = p.lanes + p.links_in;
    if (pe == 0 || p.total() > out.total()) {
      p.name = out.name;
      out = p;
    }
  }
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
  const routing chosen =
      detail::resolve_routing(routing::automatic, pes, nodes, std::min(per_node, pes));
  std::vector<routing_plan> plans;
  for (routing r : {routing::direct, routing::node})
    plans.push_back(plan_for(r, cfg, pes, per_node, mailboxes));

  fmt::print("plan: {} PEs, {} per node ({} nodes), {} typed mailboxes; buffers of {} bytes, {} "
             "credits, budget {} MiB; auto is {}\n",
             pes, per_node, nodes, mailboxes, cfg.buffer_bytes, cfg.credits,
             mib(cfg.budget_bytes), routing_name(static_cast<std::uint64_t>(chosen)));
  fmt::print("{:<8} {:>7} {:>6} {:>8} {:>7} {:>11} {:>8} {:>8} {:>10} {:>9}  {}\n", "routing",
             "network", "lanes", "links in", "credits", "buffers MiB", "shm MiB", "recv MiB",
             "tables MiB", "total MiB", "fits");
  for (const auto& p : plans)
    fmt::print("{:<8} {:>7} {:>6} {:>8} {:>7} {:>11} {:>8} {:>8} {:>10} {:>9}  {}\n", p.name,
               p.network_peers, p.lanes, p.links_in, p.credits, mib(p.buffers),
               mib(p.shared), mib(p.receives), mib(p.tables), mib(p.total()),
               p.fits ? "yes" : "no");
  if (!json_file.empty()) {
    nlohmann::json j;
    j["pes"] = pes;
    j["per_node"] = per_node;
    j["nodes"] = nodes;
    j["mailboxes"] = mailboxes;
    j["config"] = {{"buffer_bytes", cfg.buffer_bytes},
                   {"credits", cfg.credits},
                   {"budget_bytes", cfg.budget_bytes},
                   {"shared_slots", cfg.shared_slots}};
    j["auto"] = routing_name(static_cast<std::uint64_t>(chosen));
    for (const auto& p : plans)
      j["routings"][p.name] = {{"network_peers_per_pe", p.network_peers},
                               {"lanes_per_mailbox", p.lanes},
                               {"links_in_per_mailbox", p.links_in},
                               {"credits", p.credits},
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
