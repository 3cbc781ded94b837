// SPDX-License-Identifier: MIT
// Direct, node and grid routing tables (aggregation/routes.hpp).
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
// node (this one included); when there are other nodes, transit lanes of stage 0 to the others,
// delivery lanes to all, and transit lanes of each later stage to the others.
void add_node_lanes(routes& r, int me, int my_local, const std::vector<int>& mine, bool others,
                    int stages) {
  r.my_local = my_local;
  r.node_members = mine;
  r.stages = others ? stages : 0;
  for (int p : mine) add_lane(r, p, k_final);
  r.in_peers[k_final] = mine;
  if (!others) return;
  r.transit_base.assign(static_cast<std::size_t>(stages), -1);
  const auto add_transit = [&](int s) {
    r.transit_base[static_cast<std::size_t>(s)] = r.lanes();
    for (int p : mine)
      if (p != me) {
        add_lane(r, p, static_cast<link_class>(transit_class(s)));
        r.in_peers[transit_class(s)].push_back(p);
      }
  };
  add_transit(0);
  r.delivery_base = r.lanes();
  for (int p : mine) add_lane(r, p, k_delivery);
  r.in_peers[k_delivery] = mine;
  for (int s = 1; s < stages; ++s) add_transit(s);
}

// A hop entry holds a lane in k_lane_bits bits and an index on the node in 16.
void check_room(const routes& r, int size, const char* routing) {
  MAILROOM_CHECK(r.lanes() < (1 << routes::k_lane_bits) && size <= 0x10000,
                 "{} routing: {} lanes on a node of {} PEs, more than its tables hold (use "
                 "smaller nodes: MAILROOM_NODE_SIZE)",
                 routing, r.lanes(), size);
}

// Node routing's links (routes::node). With at least as many other nodes as PEs on node a, one
// PE owns a's link to node b: PE b mod size(a), and the link lands on PE a mod size(b) of node b.
// With fewer, every PE owns one: PE i the link to the (i mod (nodes - 1))-th other node, landing
// on PE i mod size(b) there; a PE reaches another node through the PE of its own group of
// nodes - 1 that owns that link (the group below if its own group is short of it), and through
// its own link when that leads there (at 2 nodes, every PE: no transit hop).
int node_link_owner(const node_layout& l, int a, int i, int b) {
  const int size = l.size(a), others = l.nodes() - 1;
  if (others >= size) return b % size;
  const int k = b < a ? b : b - 1;  // b's place among a's other nodes
  const int owner = i - i % others + k;
  return owner < size ? owner : owner - others;
}
int node_link_landing(const node_layout& l, int a, int owner, int b) {
  return (l.nodes() - 1 >= l.size(a) ? a : owner) % l.size(b);
}

// The transit lane of stage s to the PE of this node with index i.
std::uint32_t transit_lane(const routes& r, int s, int i) {
  const int base = r.transit_base[static_cast<std::size_t>(s)];
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
  if (c == k_final) return here ? i : -1;
  if (c == k_delivery) return here && delivery_base >= 0 ? delivery_base + i : -1;
  if (!forwarded_class(c) || stage_of(c) >= stages) return -1;
  if (!network_link(c)) {
    const int base = transit_base[static_cast<std::size_t>(stage_of(c))];
    return here && p != me ? base + (i < my_local ? i : i - 1) : -1;
  }
  for (int l = network_base; l < lanes(); ++l)
    if (peer[static_cast<std::size_t>(l)] == p && cls[static_cast<std::size_t>(l)] == c) return l;
  return -1;
}

int routes::in_link(std::uint32_t c, int source) const noexcept {
  // Links in of the classes within the node mirror this PE's lanes out of the same class to the
  // same PEs, in the same order; network links in do not (a few: searched).
  if (network_link(c)) {
    const auto& in = in_peers[c];
    const auto it = std::find(in.begin(), in.end(), source);
    return it == in.end() ? -1 : static_cast<int>(it - in.begin());
  }
  const int l = lane(c, source);
  if (l < 0) return -1;
  return l - (c == k_final      ? 0
              : c == k_delivery ? delivery_base
                                : transit_base[static_cast<std::size_t>(stage_of(c))]);
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

namespace {
// The integer r with r^k >= n > (r - 1)^k.
int root_up(int n, int k) {
  const auto power = [k](int r) {
    std::int64_t x = 1;
    for (int j = 0; j < k; ++j) x *= r;
    return x;
  };
  auto r = static_cast<int>(std::ceil(std::pow(static_cast<double>(n), 1.0 / k)));
  while (r > 1 && power(r - 1) >= n) --r;  // (rounding)
  while (power(r) < n) ++r;
  return r;
}
}  // namespace

node_grid::node_grid(routing r, int n) : nodes(std::max(n, 1)) {
  std::vector<int> sides;
  if (r == routing::hypercube) {
    for (int reach = 1; reach < nodes; reach *= 2) sides.push_back(2);
  } else {
    const int k = r == routing::mesh3d ? 3 : 2;
    const int side = root_up(nodes, k);
    sides.assign(static_cast<std::size_t>(k - 1), side);
  }
  // The top dimension holds what the ones below leave: every slab but the last full.
  int below = 1;
  for (const int s : sides) {
    if (s <= 1 || below >= nodes) break;
    radix.push_back(s);
    span.push_back(below);
    below *= s;
  }
  if (below < nodes && r != routing::hypercube) {
    radix.push_back((nodes + below - 1) / below);
    span.push_back(below);
  }
  // (A hypercube of 2^k places already holds the nodes; a dimension of 2 per bit.)
  MAILROOM_CHECK(dimensions() <= k_max_stages,
                 "{} routing over {} nodes: {} dimensions, more than {}",
                 routing_name(static_cast<std::uint64_t>(r)), nodes, dimensions(), k_max_stages);
}

node_grid::step node_grid::next(int a, int b) const noexcept {
  // The lowest dimension in which they differ: b's coordinate there, hosted when that place is
  // past the last node (only below the top dimension, whose move reaches b itself).
  for (int d = 0; d < dimensions(); ++d) {
    const int v = coordinate(b, d);
    if (coordinate(a, d) != v) return {d, host(moved(a, d, v))};
  }
  return {-1, a};
}

int routes::network_peers() const {
  std::vector<int> seen;
  for (int l = 0; l < lanes(); ++l)
    if (network_link(cls[static_cast<std::size_t>(l)]))
      seen.push_back(peer[static_cast<std::size_t>(l)]);
  for (std::uint32_t c = 0; c < static_cast<std::uint32_t>(k_link_classes); ++c)
    if (network_link(c)) seen.insert(seen.end(), in_peers[c].begin(), in_peers[c].end());
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

  routes r;
  r.routed = true;
  r.me = me;
  r.pes = l.pes();
  r.layout = l;
  // The lanes within the node, then a network lane per node whose link this PE owns.
  add_node_lanes(r, me, i, mine, nodes > 1, 1);
  r.network_base = r.lanes();
  // Per other node: its network lane if this PE owns the link, else the transit lane to the
  // owner (this node: 0, the final lanes).
  r.node_hop.assign(static_cast<std::size_t>(nodes), 0);
  for (int b = 0; b < nodes; ++b) {
    if (b == a) continue;
    const int owner = node_link_owner(l, a, i, b);
    std::uint32_t lane = 0;
    if (owner == i)
      lane = static_cast<std::uint32_t>(
          add_lane(r, l.pe(b, node_link_landing(l, a, i, b)), k_network));
    else
      lane = transit_lane(r, 0, owner);
    r.node_hop[static_cast<std::size_t>(b)] = k_prefixed | lane;
  }
  r.own.assign(static_cast<std::size_t>(nodes), own_hop{});
  r.own[static_cast<std::size_t>(a)].local = -1;  // (this node: the final lanes)
  for (int b = 0; b < nodes; ++b) {
    if (b == a) continue;
    const std::uint32_t lane = r.node_hop[static_cast<std::size_t>(b)] & ~k_prefixed;
    const auto through = static_cast<std::int16_t>(r.cls[lane] == k_network ? 0 : -1);
    r.own[static_cast<std::size_t>(b)] = {static_cast<std::uint16_t>(lane), 0, through, 4};
  }
  check_room(r, l.widest(), "node");

  // What ends here besides the node's lanes: the network lanes of the PEs of other nodes whose
  // link to this node lands here. The owners of node c's links to this node: PE a mod size(c),
  // or with fewer other nodes than PEs there, every PE whose index is this node's place among
  // c's other nodes, mod nodes - 1.
  for (int c = 0; c < nodes; ++c) {
    if (c == a) continue;
    const int c_size = l.size(c), others = nodes - 1;
    const bool one = others >= c_size;
    for (int j = one ? a % c_size : (a < c ? a : a - 1); j < c_size; j += one ? c_size : others) {
      MAILROOM_ASSERT(node_link_owner(l, c, j, a) == j);
      if (node_link_landing(l, c, j, a) == i) r.in_peers[k_network].push_back(l.pe(c, j));
    }
  }
  return r;
}

routes routes::grid(int me, const node_layout& l, const node_grid& g) {
  MAILROOM_CHECK(me >= 0 && me < l.pes(), "routing: PE {} of {}", me, l.pes());
  MAILROOM_CHECK(g.nodes == l.nodes(), "routing: a grid of {} nodes for {}", g.nodes, l.nodes());
  const int nodes = l.nodes(), dims = g.dimensions();
  const auto member = [&](int n, int k) { return l.pe(n, k % l.size(n)); };  // PE k mod size
  const auto [a, i] = l.where(me);
  const std::vector<int> mine = l.members(a);
  const int size = l.size(a);

  routes r;
  r.routed = true;
  r.gridded = true;
  r.me = me;
  r.pes = l.pes();
  r.layout = l;
  add_node_lanes(r, me, i, mine, nodes > 1, dims);
  r.network_base = r.lanes();
  // A node numbers its links by dimension, then by the coordinate they lead to (its own
  // skipped): link (d, v) of a node at coordinate u is base[d] + (v < u ? v : v - 1).
  std::vector<int> base(static_cast<std::size_t>(dims) + 1, 0);
  for (int d = 0; d < dims; ++d)
    base[static_cast<std::size_t>(d) + 1] =
        base[static_cast<std::size_t>(d)] + g.radix[static_cast<std::size_t>(d)] - 1;
  const auto number = [&](int d, int u, int v) {
    return base[static_cast<std::size_t>(d)] + (v < u ? v : v - 1);
  };
  // Where node x's link of dimension d towards coordinate v leads, or -1 (the top dimension
  // reaches destinations only: no place past the last node).
  const auto far = [&](int x, int d, int v) {
    const int m = g.moved(x, d, v);
    return d == dims - 1 ? (m < nodes ? m : -1) : g.host(m);
  };
  // This PE's network lanes, by link number (-1: another PE of the node owns it).
  std::vector<int> own(static_cast<std::size_t>(base.back()), -1);
  for (int d = 0; d < dims; ++d) {
    const int u = g.coordinate(a, d);
    for (int v = 0; v < g.radix[static_cast<std::size_t>(d)]; ++v) {
      const int m = v == u ? -1 : far(a, d, v);
      if (m < 0 || number(d, u, v) % size != i) continue;
      own[static_cast<std::size_t>(number(d, u, v))] =
          add_lane(r, member(m, number(d, v, u)), static_cast<link_class>(network_class(d)));
    }
  }
  check_room(r, l.widest(), "grid");

  r.node_hop.assign(static_cast<std::size_t>(nodes), 0);  // this node: the final lanes
  for (int b = 0; b < nodes; ++b) {
    if (b == a) continue;
    const node_grid::step s = g.next(a, b);
    const int k = number(s.stage, g.coordinate(a, s.stage), g.coordinate(s.node, s.stage));
    r.node_hop[static_cast<std::size_t>(b)] =
        k_prefixed | (k % size == i ? static_cast<std::uint32_t>(own[static_cast<std::size_t>(k)])
                                    : transit_lane(r, s.stage, k % size));
  }

  // Links in, per dimension: from the nodes of this node's line in that dimension, and from
  // those of the line above it in the top dimension whose place on this line is past the last
  // node (this node hosts it), each landing on the PE of its number here.
  for (int d = 0; d < dims; ++d) {
    const int u = g.coordinate(a, d);
    const bool hosts = d < dims - 1 && a + g.span.back() >= nodes;  // the place above: none
    for (int v = 0; v < g.radix[static_cast<std::size_t>(d)]; ++v) {
      if (v == u || number(d, u, v) % size != i) continue;
      for (const int x : {g.moved(a, d, v), hosts ? g.moved(a + g.span.back(), d, v) : nodes})
        if (x < nodes && far(x, d, u) == a)
          r.in_peers[network_class(d)].push_back(member(x, number(d, v, u)));
    }
  }
  return r;
}

routes routes::of(routing r, int me, const node_layout& l) {
  switch (r) {
    case routing::node:
      return node(me, l);
    case routing::mesh:
    case routing::mesh3d:
    case routing::hypercube:
      return grid(me, l, node_grid(r, l.nodes()));
    default:
      return direct(me, l);
  }
}

}  // namespace mailroom::detail
