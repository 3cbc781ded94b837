// Direct and node routing tables (detail/routes.hpp).
#include "mailroom/detail/routes.hpp"

#include "mailroom/error.hpp"

#include <algorithm>

namespace mailroom::detail {

namespace {
int add_lane(routes& r, int peer, link_class c) {
  r.peer.push_back(peer);
  r.cls.push_back(static_cast<std::uint8_t>(c));
  return r.lanes() - 1;
}
}  // namespace

int routes::lane(std::uint32_t c, int p) const noexcept {
  if (p < 0 || p >= pes) return -1;
  const std::uint32_t h = hop[static_cast<std::size_t>(p)];
  if (!routed) return c == k_final ? static_cast<int>(h) : -1;
  // A PE of this node: its own items' hop is its final lane, whose number is its index here.
  const bool here = (h & k_prefixed) == 0;
  const int i = static_cast<int>(h);
  switch (c) {
    case k_final:
      return here ? i : -1;
    case k_transit:
      return here && transit_base >= 0 && p != me ? transit_base + (i < my_local ? i : i - 1) : -1;
    case k_delivery:
      return here && delivery_base >= 0 ? delivery_base + i : -1;
    case k_network:
      for (int l = network_base; l < lanes(); ++l)
        if (peer[static_cast<std::size_t>(l)] == p) return l;
      return -1;
    default:
      return -1;
  }
}

int routes::in_link(std::uint32_t c, int source) const noexcept {
  // Links in of the classes within the node mirror this PE's lanes out of the same class to the
  // same PEs, in the same order; network links in do not (a few: searched).
  if (c == k_network) {
    const auto& in = in_peers[k_network];
    const auto it = std::find(in.begin(), in.end(), source);
    return it == in.end() ? -1 : static_cast<int>(it - in.begin());
  }
  const int l = lane(c, source);
  if (l < 0) return -1;
  return l - (c == k_transit ? transit_base : c == k_delivery ? delivery_base : 0);
}

routing resolve_routing(routing wanted, int pes, int nodes, int widest) noexcept {
  if (wanted != routing::automatic) return wanted;
  return pes > 64 && nodes > 1 && widest > 1 ? routing::node : routing::direct;
}

int routes::network_peers() const {
  std::vector<int> seen;
  for (int l = 0; l < lanes(); ++l)
    if (cls[static_cast<std::size_t>(l)] == k_network) seen.push_back(peer[static_cast<std::size_t>(l)]);
  seen.insert(seen.end(), in_peers[k_network].begin(), in_peers[k_network].end());
  std::sort(seen.begin(), seen.end());
  return static_cast<int>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

routes routes::direct(int me, int pes) {
  routes r;
  r.me = me;
  r.pes = pes;
  r.hop.resize(static_cast<std::size_t>(pes));
  for (int p = 0; p < pes; ++p) {
    r.hop[static_cast<std::size_t>(p)] = static_cast<std::uint32_t>(add_lane(r, p, k_final));
    r.in_peers[k_final].push_back(p);
  }
  return r;
}

routes routes::node(int me, const std::vector<int>& node_of, const std::vector<int>& local_of) {
  const int pes = static_cast<int>(node_of.size());
  MAILROOM_CHECK(local_of.size() == node_of.size() && me >= 0 && me < pes,
                 "node routing: a layout of {} PEs and {} local indices", node_of.size(),
                 local_of.size());
  int nodes = 0;
  for (int n : node_of) nodes = std::max(nodes, n + 1);
  // members[n][i]: the PE of node n with local index i.
  std::vector<std::vector<int>> members(static_cast<std::size_t>(nodes));
  for (int p = 0; p < pes; ++p) {
    auto& m = members[static_cast<std::size_t>(node_of[static_cast<std::size_t>(p)])];
    const auto i = static_cast<std::size_t>(local_of[static_cast<std::size_t>(p)]);
    if (m.size() <= i) m.resize(i + 1, -1);
    MAILROOM_CHECK(m[i] < 0, "node routing: PEs {} and {} have the same place on node {}", m[i],
                   p, node_of[static_cast<std::size_t>(p)]);
    m[i] = p;
  }
  for (int n = 0; n < nodes; ++n)
    for (int p : members[static_cast<std::size_t>(n)])
      MAILROOM_CHECK(p >= 0 && !members[static_cast<std::size_t>(n)].empty(),
                     "node routing: node {} has a gap in its local indices", n);
  const auto size_of = [&](int n) {
    return static_cast<int>(members[static_cast<std::size_t>(n)].size());
  };
  const int a = node_of[static_cast<std::size_t>(me)];
  const int i = local_of[static_cast<std::size_t>(me)];
  const auto& mine = members[static_cast<std::size_t>(a)];
  const int size = size_of(a);

  routes r;
  r.routed = true;
  r.me = me;
  r.pes = pes;
  // Final lanes to every PE of the node (this one included); when there are other nodes,
  // transit lanes to the others and delivery lanes to all, then a network lane per node whose
  // link this PE owns.
  r.my_local = i;
  r.node_members = mine;
  for (int p : mine) add_lane(r, p, k_final);
  if (nodes > 1) {
    r.transit_base = r.lanes();
    for (int p : mine)
      if (p != me) add_lane(r, p, k_transit);
    r.delivery_base = r.lanes();
    for (int p : mine) add_lane(r, p, k_delivery);
  }
  r.network_base = r.lanes();
  std::vector<int> network_lane(static_cast<std::size_t>(nodes), -1);  // by far node
  for (int b = 0; b < nodes; ++b)
    if (b != a && b % size == i)
      network_lane[static_cast<std::size_t>(b)] = add_lane(
          r, members[static_cast<std::size_t>(b)][static_cast<std::size_t>(a % size_of(b))],
          k_network);

  MAILROOM_CHECK(r.lanes() < (1 << routes::k_lane_bits) && size <= 0x10000,
                 "node routing: {} lanes on a node of {} PEs, more than its tables hold (use "
                 "smaller nodes: MAILROOM_NODE_SIZE)", r.lanes(), size);
  r.hop.resize(static_cast<std::size_t>(pes));
  for (int q = 0; q < pes; ++q) {
    const int b = node_of[static_cast<std::size_t>(q)];
    std::uint32_t h = 0;
    if (b == a) {
      h = static_cast<std::uint32_t>(local_of[static_cast<std::size_t>(q)]);  // its final lane
    } else {
      const int owner = mine[static_cast<std::size_t>(b % size)];
      h = k_prefixed |
          static_cast<std::uint32_t>(local_of[static_cast<std::size_t>(q)]) << k_lane_bits |
          static_cast<std::uint32_t>(owner == me ? network_lane[static_cast<std::size_t>(b)]
                                                 : r.transit_base + (b % size < i ? b % size : b % size - 1));
    }
    r.hop[static_cast<std::size_t>(q)] = h;
  }

  // What ends here: final lanes of every PE of the node, transit lanes of the others (when
  // there are other nodes), and the network lanes of the nodes whose link to this one lands
  // here (node c's link to node a is owned by its PE a mod size(c), lands on PE c mod size).
  r.in_peers[k_final] = mine;
  if (nodes > 1) {
    for (int p : mine)
      if (p != me) r.in_peers[k_transit].push_back(p);
    r.in_peers[k_delivery] = mine;
  }
  for (int c = 0; c < nodes; ++c)
    if (c != a && c % size == i) {
      r.in_peers[k_network].push_back(members[static_cast<std::size_t>(c)][static_cast<std::size_t>(a % size_of(c))]);
      r.far_members.push_back(members[static_cast<std::size_t>(c)]);
    }
  return r;
}

}  // namespace mailroom::detail
