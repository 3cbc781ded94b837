// SPDX-License-Identifier: MIT
// Checks a capacity plan written by `mailroom-bench plan --json`: its parts add up, node and mesh
// routing have the few network peers and lanes the routing promises, and what fits is what the
// budget holds; that `auto` is AUTO (the routing the runtime would pick there); and, given
// MOST_MIB > 0, that it reserves at most that per PE with every mailbox in the shared pool and
// network buffers of at least 8 KiB. Usage:
// validate_plan_json FILE PES PER_NODE MAILBOXES AUTO [MOST_MIB]
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>

namespace {
int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "plan JSON: %s\n", what.c_str());
    ++failures;
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: %s FILE PES PER_NODE MAILBOXES AUTO [MOST_MIB]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "plan JSON: cannot open %s\n", argv[1]);
    return 1;
  }
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) {
    std::fprintf(stderr, "plan JSON: %s does not parse\n", argv[1]);
    return 1;
  }
  const long long pes = std::stoll(argv[2]), per_node = std::stoll(argv[3]);
  const long long nodes = (pes + per_node - 1) / per_node;
  expect(j.value("pes", 0LL) == pes && j.value("per_node", 0LL) == per_node &&
             j.value("nodes", 0LL) == nodes && j.value("mailboxes", 0LL) == std::stoll(argv[4]),
         "the machine is not the one asked for");
  const long long budget = j["config"].value("budget_bytes", 0LL);
  for (const char* name : {"direct", "node", "mesh", "mesh3d", "hypercube"}) {
    const auto& r = j["routings"][name];
    const auto& b = r["bytes"];
    const long long parts = b.value("aggregation_buffers", -1LL) + b.value("shared_memory", -1LL) +
                            b.value("posted_receives", -1LL) + b.value("tables", -1LL);
    expect(parts == b.value("total", -2LL), std::string(name) + ": the parts do not add up");
    // Fitting means every mailbox got a credit: its buffers, the slots and the receives are
    // within the budget.
    const long long reserved = b.value("aggregation_buffers", 0LL) + b.value("shared_memory", 0LL) +
                               b.value("posted_receives", 0LL);
    expect(r.value("fits", false) == (r.value("credits", 0LL) > 0),
           std::string(name) + ": fits but a mailbox has no credit, or the reverse");
    if (r.value("fits", false))
      expect(reserved <= budget, std::string(name) + ": fits, but reserves beyond the budget");
  }
  const auto& direct = j["routings"]["direct"];
  const auto& node = j["routings"]["node"];
  const auto& mesh = j["routings"]["mesh"];
  expect(direct.value("network_peers_per_pe", 0LL) == pes - std::min(pes, per_node),
         "direct: every PE of the other nodes is a network peer");
  expect(direct.value("lanes_per_mailbox", 0LL) == pes, "direct: a lane per PE");
  // Node routing: a lane per PE of the node for each of final, transit and delivery, and one per
  // network link owned (about nodes / PEs per node); its network peers are those links' far ends.
  const long long owned = (nodes + per_node - 1) / per_node;
  expect(node.value("network_peers_per_pe", -1LL) <= 2 * owned &&
             node.value("network_peers_per_pe", -1LL) <= nodes,
         "node: more network peers than nodes / PEs per node each way");
  expect(node.value("lanes_per_mailbox", 0LL) <= 3 * per_node + owned,
         "node: more lanes than the PEs of the node and the links owned");
  if (pes > per_node && per_node > 1) {  // (on nodes of one PE node routing is direct)
    expect(node["bytes"].value("total", 0LL) < direct["bytes"].value("total", 0LL),
           "node routing reserves no less than direct");
  }
  expect(j.value("auto", std::string()) == argv[5],
         "auto is " + j.value("auto", std::string()) + ", not " + argv[5]);
  // What auto picks fits the budget (beyond 64 PEs it widens until a few mailboxes fit).
  expect(pes <= 64 || j["routings"][j.value("auto", std::string("direct"))].value("fits", false),
         "auto picks a routing that does not fit");
  // Mesh routing: links to the node's row and column (a grid of about sqrt(nodes) columns),
  // spread over its PEs, in and out; lanes within the node for four classes.
  const auto columns = static_cast<long long>(std::ceil(std::sqrt(static_cast<double>(nodes))));
  const long long mesh_owned = 2 * ((columns + per_node - 1) / per_node);
  expect(mesh.value("network_peers_per_pe", -1LL) <= 2 * mesh_owned,
         "mesh: more network peers than its row and column spread over the node");
  expect(mesh.value("lanes_per_mailbox", 0LL) <= 4 * per_node + mesh_owned,
         "mesh: more lanes than the PEs of the node and the links owned");
  // mesh3d and hypercube: links along the node's three lines of about cbrt(nodes) nodes, or
  // one per dimension of the cube (log2(nodes)); a node in the slab below a short last one also
  // hosts the links of the places missing above it (as many again). Lanes within the node: two
  // classes and a transit class per dimension.
  for (const auto& [name, dims, side] :
       {std::tuple<const char*, long long, long long>{
            "mesh3d", 3, static_cast<long long>(std::ceil(std::cbrt(static_cast<double>(nodes))))},
        {"hypercube", static_cast<long long>(std::ceil(std::log2(static_cast<double>(nodes)))),
         2}}) {
    const auto& r = j["routings"][name];
    const long long links = dims * (side - 1), grid_owned = (links + per_node - 1) / per_node;
    expect(r.value("network_peers_per_pe", -1LL) <= 4 * grid_owned,
           std::string(name) + ": more network peers than its lines spread over the node");
    expect(r.value("lanes_per_mailbox", 0LL) <= (2 + dims) * per_node + 2 * grid_owned,
           std::string(name) + ": more lanes than the PEs of the node and the links owned");
  }
  if (const long long most = argc == 7 ? std::stoll(argv[6]) : 0; most > 0) {
    const std::string name = j.value("auto", std::string());
    const auto& chosen = j["routings"][name];
    expect(chosen["bytes"].value("total", most << 20) <= most << 20,
           name + ": more than " + std::to_string(most) + " MiB per PE");
    expect(chosen.value("mailboxes_in_slots", 0LL) == std::stoll(argv[4]),
           name + ": not every mailbox has its lanes within the node in the shared pool");
    expect(j["config"].value("buffer_bytes", 0LL) >= 8 << 10,
           "buffers between nodes below 8 KiB: their payload cannot reach 8 KiB");
    expect(j["config"].value("pool_slots", 0LL) > 0 &&
               j["config"].value("node_buffer_bytes", 0LL) >= 256,
           "the shared pool is missing from the plan's configuration");
  }
  if (failures == 0) std::printf("plan JSON valid (%lld PEs, %lld per node)\n", pes, per_node);
  return failures == 0 ? 0 : 1;
}
