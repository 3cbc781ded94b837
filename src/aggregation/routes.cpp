// SPDX-License-Identifier: MIT
// Direct, node and mesh routing tables (aggregation/routes.hpp).
#include "aggregation/routes.hpp"

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
                 "smaller nodes: MAILROOM_NODE_SIZE)",
                 routing, r.lanes(), size);
}

// The transit lane of class c (k_transit or k_transit2) to the PE of this node with index i.
std::uint32_t transit_lane(const routes& r, std::uint32_t c, int i) {
  const int base = c == k_transit ? r.transit_base : r.transit2_base;
  return static_cast<std::uint32_t>(base + (i < r.my_local ? i : i - 1));
}
}  // namespace

node_layout::divider::divider(std::uint32_t divisor) noexcept : d(divisor) {
  MAILROOM_ASSERT(divisor >= 1 && divisor < (1u << 31));
  std::uint32_t l = 0;
  while ((std::uint64_t{1} << l) < divisor) ++l;
  shift = 31 + l;
  m = ((std::uint64_t{1} << shift) + divisor - 1) / divisor;
}

node_layout node_layout::blocked(int pes, int size) {
  MAILROOM_CHECK(pes >= 1 && size >= 1, "node layout: {} PEs in nodes of {}", pes, size);
  node_layout l;
  l.form_ = form::blocked;
  l.pes_ = pes;
  l.widest_ = std::min(size, pes);
  l.nodes_ = (pes + l.widest_ - 1) / l.widest_;
  l.div_ = divider(static_cast<std::uint32_t>(l.widest_));
  return l;
}

node_layout node_layout::of(const std::vector<int>& node_of, const std::vector<int>& local_of) {
  const int pes = static_cast<int>(node_of.size());
  MAILROOM_CHECK(pes >= 1 && local_of.size() == node_of.size(),
                 "node layout: {} PEs and {} local indices", node_of.size(), local_of.size());
  int nodes = 0;
  for (int n : node_of) {
    MAILROOM_CHECK(n >= 0, "node layout: node {}", n);
    nodes = std::max(nodes, n + 1);
  }
  // Every place once, no gaps: count the PEs per node and check each index against them.
  std::vector<int> first(static_cast<std::size_t>(nodes) + 1, 0);
  for (int n : node_of) ++first[static_cast<std::size_t>(n) + 1];
  for (int n = 0; n < nodes; ++n) {
    MAILROOM_CHECK(first[static_cast<std::size_t>(n) + 1] > 0, "routing: node {} has no PE", n);
    first[static_cast<std::size_t>(n) + 1] += first[static_cast<std::size_t>(n)];
  }
  std::vector<int> members(static_cast<std::size_t>(pes), -1);
  int widest = 0;
  for (int p = 0; p < pes; ++p) {
    const auto n = static_cast<std::size_t>(node_of[static_cast<std::size_t>(p)]);
    const int i = local_of[static_cast<std::size_t>(p)];
    const int size = first[n + 1] - first[n];
    MAILROOM_CHECK(i >= 0 && i < size, "routing: node {} has a gap in its local indices", n);
    int& at = members[static_cast<std::size_t>(first[n]) + static_cast<std::size_t>(i)];
    MAILROOM_CHECK(at < 0, "routing: PEs {} and {} have the same place on node {}", at, p, n);
    at = p;
    widest = std::max(widest, size);
  }
  const auto matches = [&](const node_layout& l) {
    for (int p = 0; p < pes; ++p) {
      const place w = l.where(p);
      if (w.node != node_of[static_cast<std::size_t>(p)] ||
          w.local != local_of[static_cast<std::size_t>(p)])
        return false;
    }
    return true;
  };
  if (node_layout b = blocked(pes, widest); b.nodes_ == nodes && matches(b)) return b;
  node_layout c;
  c.form_ = form::cyclic;
  c.pes_ = pes;
  c.nodes_ = nodes;
  c.widest_ = widest;
  c.div_ = divider(static_cast<std::uint32_t>(nodes));
  if (matches(c)) return c;
  node_layout t;
  t.form_ = form::table;
  t.pes_ = pes;
  t.nodes_ = nodes;
  t.widest_ = widest;
  t.node_of_ = node_of;
  t.local_of_ = local_of;
  t.first_ = std::move(first);
  t.members_ = std::move(members);
  return t;
}

int node_layout::size(int n) const noexcept {
  switch (form_) {
    case form::blocked:
      return std::min(widest_, pes_ - n * widest_);
    case form::cyclic:
      return pes_ / nodes_ + (n < pes_ % nodes_ ? 1 : 0);
    default:
      return first_[static_cast<std::size_t>(n) + 1] - first_[static_cast<std::size_t>(n)];
  }
}

int node_layout::pe(int n, int i) const noexcept {
  switch (form_) {
    case form::blocked:
      return n * widest_ + i;
    case form::cyclic:
      return i * nodes_ + n;
    default:
      return members_[static_cast<std::size_t>(first_[static_cast<std::size_t>(n)]) +
                      static_cast<std::size_t>(i)];
  }
}

std::vector<int> node_layout::members(int n) const {
  std::vector<int> m(static_cast<std::size_t>(size(n)));
  for (int i = 0; i < size(n); ++i) m[static_cast<std::size_t>(i)] = pe(n, i);
  return m;
}

std::size_t node_layout::table_bytes() const noexcept {
  return sizeof(int) * (node_of_.size() + local_of_.size() + first_.size() + members_.size());
}

int routes::lane(std::uint32_t c, int p) const noexcept {
  if (p < 0 || p >= pes) return -1;
  const std::uint32_t h = hop(p);
  if (!member_rank.empty()) return c == k_final ? rank_of(p) : -1;
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
    if (cls[static_cast<std::size_t>(l)] == k_network ||
        cls[static_cast<std::size_t>(l)] == k_network2)
      seen.push_back(peer[static_cast<std::size_t>(l)]);
  for (const std::uint32_t c : {k_network, k_network2})
    seen.insert(seen.end(), in_peers[c].begin(), in_peers[c].end());
  std::sort(seen.begin(), seen.end());
  return static_cast<int>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

routes routes::direct(int me, const node_layout& l) {
  routes r;
  r.me = me;
  r.pes = l.pes();
  r.layout = l;
  for (int p = 0; p < r.pes; ++p) {
    add_lane(r, p, k_final);
    r.in_peers[k_final].push_back(p);
  }
  return r;
}

routes routes::members(int me, int pes, const std::vector<int>& members) {
  routes r;
  r.me = me;
  r.pes = pes;
  r.layout = node_layout::blocked(pes, 1);
  for (std::size_t k = 0; k < members.size(); ++k) {
    const int p = members[k];
    MAILROOM_CHECK(p >= 0 && p < pes, "team routes: member PE {} of {}", p, pes);
    add_lane(r, p, k_final);
    r.in_peers[k_final].push_back(p);
    r.member_rank.emplace_back(p, static_cast<int>(k));
  }
  std::sort(r.member_rank.begin(), r.member_rank.end());
  MAILROOM_CHECK(r.rank_of(me) >= 0, "team routes: PE {} is not a member", me);
  return r;
}

int routes::rank_of(int p) const noexcept {
  const auto it = std::lower_bound(member_rank.begin(), member_rank.end(), std::pair{p, -1});
  return it != member_rank.end() && it->first == p ? it->second : -1;
}

routes routes::node(int me, const node_layout& l) {
  MAILROOM_CHECK(me >= 0 && me < l.pes(), "routing: PE {} of {}", me, l.pes());
  const int nodes = l.nodes();
  const auto [a, i] = l.where(me);
  const std::vector<int> mine = l.members(a);
  const int size = l.size(a);

  routes r;
  r.routed = true;
  r.me = me;
  r.pes = l.pes();
  r.layout = l;
  // The lanes within the node, then a network lane per node whose link this PE owns.
  add_node_lanes(r, me, i, mine, nodes > 1, false);
  r.network_base = r.lanes();
  // Per other node: its network lane if this PE owns the link, else the transit lane to the
  // owner (this node: 0, the final lanes).
  r.node_hop.assign(static_cast<std::size_t>(nodes), 0);
  for (int b = 0; b < nodes; ++b)
    if (b != a)
      r.node_hop[static_cast<std::size_t>(b)] =
          k_prefixed |
          (b % size == i
               ? static_cast<std::uint32_t>(add_lane(r, l.pe(b, a % l.size(b)), k_network))
               : transit_lane(r, k_transit, b % size));
  check_room(r, l.widest(), "node");

  // What ends here besides the node's lanes: the network lanes of the nodes whose link to this
  // one lands here (node c's link to node a is owned by its PE a mod size(c), lands on PE
  // c mod size).
  for (int c = 0; c < nodes; ++c)
    if (c != a && c % size == i) r.in_peers[k_network].push_back(l.pe(c, a % l.size(c)));
  return r;
}

routes routes::mesh(int me, const node_layout& l) {
  MAILROOM_CHECK(me >= 0 && me < l.pes(), "routing: PE {} of {}", me, l.pes());
  const int nodes = l.nodes();
  const mesh_grid g(nodes);
  const auto member = [&](int n, int k) { return l.pe(n, k % l.size(n)); };  // PE k mod size
  const auto [a, i] = l.where(me);
  const std::vector<int> mine = l.members(a);
  const int size = l.size(a);

  routes r;
  r.routed = true;
  r.meshed = true;
  r.me = me;
  r.pes = l.pes();
  r.layout = l;
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
  check_room(r, l.widest(), "mesh");

  r.node_hop.assign(static_cast<std::size_t>(nodes), 0);  // this node: the final lanes
  for (int b = 0; b < nodes; ++b) {
    if (b == a) continue;
    const bool first = g.column(b) != g.column(a);
    const int k = (first ? first_k(g.column(a), g.column(b)) : second_k(g.row(a), g.row(b))) %
                  size;  // the owner's index here
    const int own = first ? first_lane[static_cast<std::size_t>(g.column(b))]
                          : second_lane[static_cast<std::size_t>(b)];
    r.node_hop[static_cast<std::size_t>(b)] =
        k_prefixed | (k == i ? static_cast<std::uint32_t>(own)
                             : transit_lane(r, first ? k_transit : k_transit2, k));
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
