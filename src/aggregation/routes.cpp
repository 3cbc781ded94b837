// Direct, node and mesh routing tables (detail/routes.hpp).
#include "mailroom/detail/routes.hpp"

#include "mailroom/error.hpp"

#include <algorithm>
#include <cmath>

namespace mailroom::detail {

namespace {
int add_lane(routes& r, int peer, link_class c) {
  r.peer.push_back(peer);
  r.cls.push_back(static_cast<std::uint8_t>(c));
  return r.lanes() - 1;
}

// members[n][i]: the PE of node n with local index i (checked: each place once, no gaps).
std::vector<std::vector<int>> members_of(int me, const std::vector<int>& node_of,
                                         const std::vector<int>& local_of) {
  const int pes = static_cast<int>(node_of.size());
  MAILROOM_CHECK(local_of.size() == node_of.size() && me >= 0 && me < pes,
                 "routing: a layout of {} PEs and {} local indices", node_of.size(),
                 local_of.size());
  int nodes = 0;
  for (int n : node_of) nodes = std::max(nodes, n + 1);
  std::vector<std::vector<int>> members(static_cast<std::size_t>(nodes));
  for (int p = 0; p < pes; ++p) {
    auto& m = members[static_cast<std::size_t>(node_of[static_cast<std::size_t>(p)])];
    const auto i = static_cast<std::size_t>(local_of[static_cast<std::size_t>(p)]);
    if (m.size() <= i) m.resize(i + 1, -1);
    MAILROOM_CHECK(m[i] < 0, "routing: PEs {} and {} have the same place on node {}", m[i],
                   p, node_of[static_cast<std::size_t>(p)]);
    m[i] = p;
  }
  for (int n = 0; n < nodes; ++n) {
    MAILROOM_CHECK(!members[static_cast<std::size_t>(n)].empty(), "routing: node {} has no PE",
                   n);
    for (int p : members[static_cast<std::size_t>(n)])
      MAILROOM_CHECK(p >= 0, "routing: node {} has a gap in its local indices", n);
  }
  return members;
}

// The lanes within the node, in the order routes::lane derives: final lanes to every PE of the
// node (this one included); when there are other nodes, transit lanes to the others and
// delivery lanes to all, and with mesh routing transit2 lanes to the others.
void add_node_lanes(routes& r, int me, int my_local, const std::vector<int>& mine, bool others,
                    bool second_hop) {
  r.my_local = my_local;
  r.node_members = mine;
  for (int p : mine) add_lane(r, p, k_final);
  r.in_peers[k_final] = mine;
  if (!others) return;
  r.transit_base = r.lanes();
  for (int p : mine)
    if (p != me) add_lane(r, p, k_transit);
  r.delivery_base = r.lanes();
  for (int p : mine) add_lane(r, p, k_delivery);
  for (int p : mine)
    if (p != me) r.in_peers[k_transit].push_back(p);
  r.in_peers[k_delivery] = mine;
  if (!second_hop) return;
  r.transit2_base = r.lanes();
  for (int p : mine)
    if (p != me) {
      add_lane(r, p, k_transit2);
      r.in_peers[k_transit2].push_back(p);
    }
}

// A hop entry holds a lane in k_lane_bits bits and an index on the node in 16.
void check_room(const routes& r, int size, const char* routing) {
  MAILROOM_CHECK(r.lanes() < (1 << routes::k_lane_bits) && size <= 0x10000,
                 "{} routing: {} lanes on a node of {} PEs, more than its tables hold (use "
                 "smaller nodes: MAILROOM_NODE_SIZE)", routing, r.lanes(), size);
}

// The transit lane of class c (k_transit or k_transit2) to the PE of this node with index i.
std::uint32_t transit_lane(const routes& r, std::uint32_t c, int i) {
  const int base = c == k_transit ? r.transit_base : r.transit2_base;
  return static_cast<std::uint32_t>(base + (i < r.my_local ? i : i - 1));
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
    case k_transit2: {
      const int base = c == k_transit ? transit_base : transit2_base;
      return here && base >= 0 && p != me ? base + (i < my_local ? i : i - 1) : -1;
    }
    case k_delivery:
      return here && delivery_base >= 0 ? delivery_base + i : -1;
    case k_network:
    case k_network2:
      for (int l = network_base; l < lanes(); ++l)
        if (peer[static_cast<std::size_t>(l)] == p && cls[static_cast<std::size_t>(l)] == c)
          return l;
      return -1;
    default:
      return -1;
  }
}

int routes::in_link(std::uint32_t c, int source) const noexcept {
  // Links in of the classes within the node mirror this PE's lanes out of the same class to the
  // same PEs, in the same order; network links in do not (a few: searched).
  if (c == k_network || c == k_network2) {
    const auto& in = in_peers[c];
    const auto it = std::find(in.begin(), in.end(), source);
    return it == in.end() ? -1 : static_cast<int>(it - in.begin());
  }
  const int l = lane(c, source);
  if (l < 0) return -1;
  return l - (c == k_transit    ? transit_base
              : c == k_transit2 ? transit2_base
              : c == k_delivery ? delivery_base
                                : 0);
}

routing resolve_routing(routing wanted, int pes, int nodes, int widest) noexcept {
  if (wanted != routing::automatic) return wanted;
  if (pes <= 64 || nodes <= 1) return routing::direct;
  if (nodes > 1024) return routing::mesh;
  return widest > 1 ? routing::node : routing::direct;
}

routing next_routing(routing r, int widest) noexcept {
  return r == routing::direct && widest > 1 ? routing::node : routing::mesh;
}

mesh_grid::mesh_grid(int n) noexcept : nodes(std::max(n, 1)) {
  columns = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(nodes))));
  while (columns > 1 && (columns - 1) * (columns - 1) >= nodes) --columns;  // (rounding)
  while (columns * columns < nodes) ++columns;
}

int mesh_grid::first_hop(int a, int c) const noexcept {
  const int m = row(a) * columns + c;
  // A short last row has no node in column c: the node above (rows before the last are full).
  return m < nodes ? m : m - columns;
}

int routes::network_peers() const {
  std::vector<int> seen;
  for (int l = 0; l < lanes(); ++l)
    if (cls[static_cast<std::size_t>(l)] == k_network || cls[static_cast<std::size_t>(l)] == k_network2)
      seen.push_back(peer[static_cast<std::size_t>(l)]);
  for (const std::uint32_t c : {k_network, k_network2})
    seen.insert(seen.end(), in_peers[c].begin(), in_peers[c].end());
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
  const std::vector<std::vector<int>> members = members_of(me, node_of, local_of);
  const int nodes = static_cast<int>(members.size());
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
  // The lanes within the node, then a network lane per node whose link this PE owns.
  add_node_lanes(r, me, i, mine, nodes > 1, false);
  r.network_base = r.lanes();
  std::vector<int> network_lane(static_cast<std::size_t>(nodes), -1);  // by far node
  for (int b = 0; b < nodes; ++b)
    if (b != a && b % size == i)
      network_lane[static_cast<std::size_t>(b)] = add_lane(
          r, members[static_cast<std::size_t>(b)][static_cast<std::size_t>(a % size_of(b))],
          k_network);

  check_room(r, size, "node");
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
          (owner == me ? static_cast<std::uint32_t>(network_lane[static_cast<std::size_t>(b)])
                       : transit_lane(r, k_transit, b % size));
    }
    r.hop[static_cast<std::size_t>(q)] = h;
  }

  // What ends here besides the node's lanes: the network lanes of the nodes whose link to this
  // one lands here (node c's link to node a is owned by its PE a mod size(c), lands on PE
  // c mod size).
  for (int c = 0; c < nodes; ++c)
    if (c != a && c % size == i) {
      r.in_peers[k_network].push_back(members[static_cast<std::size_t>(c)][static_cast<std::size_t>(a % size_of(c))]);
      r.far_members.push_back(members[static_cast<std::size_t>(c)]);
    }
  return r;
}

routes routes::mesh(int me, const std::vector<int>& node_of, const std::vector<int>& local_of) {
  const int pes = static_cast<int>(node_of.size());
  const std::vector<std::vector<int>> members = members_of(me, node_of, local_of);
  const int nodes = static_cast<int>(members.size());
  const mesh_grid g(nodes);
  const auto member = [&](int n, int k) {  // node n's PE k mod its size
    const auto& m = members[static_cast<std::size_t>(n)];
    return m[static_cast<std::size_t>(k) % m.size()];
  };
  const int a = node_of[static_cast<std::size_t>(me)];
  const int i = local_of[static_cast<std::size_t>(me)];
  const auto& mine = members[static_cast<std::size_t>(a)];
  const int size = static_cast<int>(mine.size());

  routes r;
  r.routed = true;
  r.meshed = true;
  r.me = me;
  r.pes = pes;
  add_node_lanes(r, me, i, mine, nodes > 1, true);
  r.network_base = r.lanes();
  // A node numbers its links: first hops by the column they lead to (its own skipped), then
  // second hops by row (its own skipped). Link k is owned by PE k mod size, and lands on the
  // PE of the far node that has the same link number there (towards this node).
  const auto first_k = [&](int from_column, int to_column) {
    return to_column - (to_column > from_column ? 1 : 0);
  };
  const auto second_k = [&](int from_row, int to_row) {
    return g.columns - 1 + to_row - (to_row > from_row ? 1 : 0);
  };
  std::vector<int> first_lane(static_cast<std::size_t>(g.columns), -1);  // by column
  for (int c = 0; c < g.columns; ++c) {
    if (c == g.column(a) || first_k(g.column(a), c) % size != i) continue;
    const int m = g.first_hop(a, c);
    first_lane[static_cast<std::size_t>(c)] =
        add_lane(r, member(m, first_k(c, g.column(a))), k_network);
  }
  std::vector<int> second_lane(static_cast<std::size_t>(nodes), -1);  // by node
  for (int b = g.column(a); b < nodes; b += g.columns)
    if (b != a && second_k(g.row(a), g.row(b)) % size == i)
      second_lane[static_cast<std::size_t>(b)] =
          add_lane(r, member(b, second_k(g.row(b), g.row(a))), k_network2);
  check_room(r, size, "mesh");

  r.hop.resize(static_cast<std::size_t>(pes));
  for (int q = 0; q < pes; ++q) {
    const int b = node_of[static_cast<std::size_t>(q)];
    const auto local = static_cast<std::uint32_t>(local_of[static_cast<std::size_t>(q)]);
    std::uint32_t h = local;  // on this node: its final lane
    if (b != a) {
      const bool first = g.column(b) != g.column(a);
      const int k = (first ? first_k(g.column(a), g.column(b)) : second_k(g.row(a), g.row(b))) %
                    size;  // the owner's index here
      const int own = first ? first_lane[static_cast<std::size_t>(g.column(b))]
                            : second_lane[static_cast<std::size_t>(b)];
      h = k_prefixed | local << k_lane_bits |
          (k == i ? static_cast<std::uint32_t>(own)
                  : transit_lane(r, first ? k_transit : k_transit2, k));
    }
    r.hop[static_cast<std::size_t>(q)] = h;
  }

  // Links in: the first hops of the nodes that reach this node's column through it, and the
  // second hops of the other nodes of this column, each landing on the PE of its number here.
  for (int x = 0; x < nodes; ++x) {
    if (x == a) continue;
    if (g.column(x) != g.column(a)) {
      if (g.first_hop(x, g.column(a)) == a && first_k(g.column(a), g.column(x)) % size == i)
        r.in_peers[k_network].push_back(member(x, first_k(g.column(x), g.column(a))));
    } else if (second_k(g.row(a), g.row(x)) % size == i) {
      r.in_peers[k_network2].push_back(member(x, second_k(g.row(x), g.row(a))));
    }
  }
  return r;
}

}  // namespace mailroom::detail
