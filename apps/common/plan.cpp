// SPDX-License-Identifier: MIT
// mailroom-bench plan: what mailroom would reserve per PE on a machine of P PEs, for each
// routing (mailroom::plan_memory: the runtime's own sizing code). Needs no MPI job.
#include "common/plan.hpp"

#include <mailroom/plan.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace mailroom::apps {

namespace {

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
  cli.add_option("--per-node", per_node, "PEs per node (default 1)")->check(CLI::Range(1, 1 << 16));
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
  const machine_plan plan = plan_memory(cfg, pes, per_node, mailboxes);
  const int nodes = plan.nodes;
  const std::vector<routing_plan>& plans = plan.routings;
  const routing chosen = plan.automatic;

  fmt::print(
      "plan: {} PEs, {} per node ({} nodes), {} typed mailboxes; buffers of {} bytes "
      "between nodes, 1 credit per mailbox and {} in the link pool per lane to another "
      "node; shared pool of {} slots of {} bytes per PE, {} credits per lane in the "
      "node; budget {} MiB; auto is {}\n",
      pes, per_node, nodes, mailboxes, plan.buffer_bytes, cfg.link_credits, plan.pool_slots,
      plan.node_buffer_bytes, plan.node_credits, mib(cfg.budget_bytes),
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
    j["config"] = {
        {"buffer_bytes", cfg.buffer_bytes},  {"credits", cfg.credits},
        {"link_credits", cfg.link_credits},  {"budget_bytes", cfg.budget_bytes},
        {"shared_slots", cfg.shared_slots},  {"node_buffer_bytes", plan.node_buffer_bytes},
        {"node_credits", plan.node_credits}, {"pool_slots", plan.pool_slots}};
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
