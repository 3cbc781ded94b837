// SPDX-License-Identifier: MIT
// Where a PE's items go next: the lanes a conveyor fills, the link each leads over, and the
// links whose end of stream a PE waits for. Direct routing gives a lane per PE; node routing
// gives lanes per PE of the node plus one per network link this PE owns; grid routing (mesh,
// mesh3d, hypercube) puts the nodes on a grid of 2, 3 or log2(nodes) dimensions and crosses the
// network once per dimension, so that a node has links along its own lines only (docs/design.md,
// routing). Not installed: conveyors and the exchange use it; the capacity plan computes it for
// machines it is not running on.
#pragma once

#include "mailroom/config.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mailroom::detail {

/// What a receiver does with a buffer, by the link it came over (the wire header's flags carry
/// it): final buffers hold the sender's own items, for the receiver's handlers; transit buffers
/// (from a PE of the same node) and network buffers (from another node) hold items for other
/// PEs, and are forwarded: transit to the network, network to the PEs of the receiver's node in
/// delivery buffers, whose items carry their origin ([origin] then the item, 4 bytes) for the
/// handlers. Under node routing typed items carry 4 bytes on each hop: on a transit lane their
/// destination PE (the origin is the lane's sender), on a network lane the destination's and
/// the origin's indices on their nodes (2 bytes each: the link tells the nodes). Lambda records,
/// whose words stay 8-byte aligned, carry [dest][origin] PEs (4 bytes each) on both.
///
/// Grid routing (mesh, mesh3d, hypercube: node_grid) crosses the network once per dimension of
/// the grid, each crossing a stage s of two classes, transit(s) then network(s); delivery
/// follows the last. Every item there carries [dest][origin] PEs (4 bytes each) on the
/// forwarding classes and its origin on delivery lanes. Node routing is the grid of one
/// dimension (stage 0). The classes are numbered in the order of their stages (transit(0),
/// network(0), transit(1), ..., then delivery): an item only ever moves to a later one, which is
/// what keeps forwarding and the end of stream free of cycles.
enum link_class : std::uint32_t {
  k_final = 0,
  k_delivery = 1,
  k_transit = 2,  ///< transit_class(0)
  k_network = 3,  ///< network_class(0)
};
/// The most network crossings a route may have (a hypercube of 2^15 nodes): the classes fit the
/// 5 bits that buffer headers and acknowledgements give them.
inline constexpr int k_max_stages = 15;
inline constexpr int k_link_classes = 2 + 2 * k_max_stages;
[[nodiscard]] constexpr std::uint32_t transit_class(int stage) noexcept {
  return 2 + 2 * static_cast<std::uint32_t>(stage);
}
[[nodiscard]] constexpr std::uint32_t network_class(int stage) noexcept {
  return 3 + 2 * static_cast<std::uint32_t>(stage);
}
/// Whether items on a link of class c go on to another PE.
[[nodiscard]] constexpr bool forwarded_class(std::uint32_t c) noexcept {
  return c >= k_transit && c < static_cast<std::uint32_t>(k_link_classes);
}
/// Whether class c crosses the network (one of the forwarded classes).
[[nodiscard]] constexpr bool network_link(std::uint32_t c) noexcept {
  return forwarded_class(c) && (c & 1u) != 0;
}
/// The stage of a forwarded class.
[[nodiscard]] constexpr int stage_of(std::uint32_t c) noexcept {
  return static_cast<int>((c - 2) / 2);
}

/// Which node each PE is on and its index there. Where the placement has a formula it keeps no
/// table per PE: blocked (PE p on node p / size at index p % size, the last node perhaps short:
/// `--map-by core`, MAILROOM_NODE_SIZE, the simulated machine) or cyclic (node p % nodes at index
/// p / nodes: `--map-by node`). Any other placement keeps three ints per PE.
class node_layout {
 public:
  /// One PE on one node.
  node_layout() = default;
  /// `pes` PEs in blocks of `size` (at least 1).
  static node_layout blocked(int pes, int size);
  /// From node_of[p] and local_of[p] of every PE p (checked: nodes numbered 0..nodes-1, every
  /// place on a node once, no gaps); takes a formula when one matches.
  static node_layout of(const std::vector<int>& node_of, const std::vector<int>& local_of);

  enum class form : std::uint8_t { blocked, cyclic, table };
  [[nodiscard]] form kind() const noexcept { return form_; }
  [[nodiscard]] int pes() const noexcept { return pes_; }
  [[nodiscard]] int nodes() const noexcept { return nodes_; }
  /// PEs on the largest node.
  [[nodiscard]] int widest() const noexcept { return widest_; }
  struct place {
    int node, local;
  };
  /// PE p's node and its index there.
  [[nodiscard]] place where(int p) const noexcept;
  [[nodiscard]] int node(int p) const noexcept { return where(p).node; }
  /// PEs on node n (inline, as pe: forwarding asks per item).
  [[nodiscard]] int size(int n) const noexcept {
    switch (form_) {
      case form::blocked:
        return std::min(widest_, pes_ - n * widest_);
      case form::cyclic:
        return pes_ / nodes_ + (n < pes_ % nodes_ ? 1 : 0);
      default:
        return first_[static_cast<std::size_t>(n) + 1] - first_[static_cast<std::size_t>(n)];
    }
  }
  /// Node n's PEs by index, as a value a loop keeps in locals: base + i * step, or list[i].
  struct members_view {
    int base = 0, step = 1;
    const int* list = nullptr;
    [[nodiscard]] int pe(int i) const noexcept {
      return list != nullptr ? list[i] : base + i * step;
    }
  };
  [[nodiscard]] members_view members_of(int n) const noexcept {
    switch (form_) {
      case form::blocked:
        return {n * widest_, 1, nullptr};
      case form::cyclic:
        return {n, nodes_, nullptr};
      default:
        return {0, 1, members_.data() + first_[static_cast<std::size_t>(n)]};
    }
  }
  /// The PE of node n at index i.
  [[nodiscard]] int pe(int n, int i) const noexcept {
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
  /// The PEs of node n, by index.
  [[nodiscard]] std::vector<int> members(int n) const;
  /// Bytes of its tables (0 for a formula).
  [[nodiscard]] std::size_t table_bytes() const noexcept;

  /// Division of n < 2^31 by a constant d (1 <= d < 2^31) with a multiply and a shift: m =
  /// ceil(2^(31+l) / d) with 2^l >= d is exact there (Granlund and Montgomery, 1994).
  struct divider {
    std::uint64_t m = 1u << 31;
    std::uint32_t shift = 31;
    std::uint32_t d = 1;
    divider() = default;
    explicit divider(std::uint32_t divisor) noexcept;
    std::uint32_t operator()(std::uint32_t n) const noexcept {
      return static_cast<std::uint32_t>((n * m) >> shift);
    }
  };
  /// where() as a small value a loop keeps in locals (forwarding asks it per item, and would
  /// reload the layout's members after every copy, which may alias them).
  struct locator {
    form f = form::blocked;
    divider div;
    const int* node_of = nullptr;
    const int* local_of = nullptr;
    [[nodiscard]] place where(int p) const noexcept {
      return where_by(f, div, node_of, local_of, p);
    }
  };
  // where()'s one body, over the layout's tables or a locator's pointers to them (both read
  // only on the branch that needs them).
  template <class Table>
  [[nodiscard]] static place where_by(form f, const divider& div, const Table& node_of,
                                      const Table& local_of, int p) noexcept {
    const auto u = static_cast<std::uint32_t>(p);
    switch (f) {
      case form::blocked: {
        const std::uint32_t n = div(u);
        return {static_cast<int>(n), static_cast<int>(u - n * div.d)};
      }
      case form::cyclic: {
        const std::uint32_t i = div(u);
        return {static_cast<int>(u - i * div.d), static_cast<int>(i)};
      }
      default:
        return {node_of[static_cast<std::size_t>(p)], local_of[static_cast<std::size_t>(p)]};
    }
  }
  [[nodiscard]] locator locate() const noexcept {
    return {form_, div_, node_of_.data(), local_of_.data()};
  }

 private:
  form form_ = form::blocked;
  int pes_ = 1, nodes_ = 1, widest_ = 1;
  divider div_;
  // The table form: per PE its node and index, and per node its PEs (first_[n] ..
  // first_[n + 1] - 1 in members_).
  std::vector<int> node_of_, local_of_, first_, members_;
};

/// The grid that grid routing places the nodes on: node n has coordinate (n / span[d]) %
/// radix[d] in dimension d, the lowest dimension first; all slabs of the top dimension are full
/// but perhaps the last. mesh: a 2-D grid C = ceil(sqrt(nodes)) wide; mesh3d: c x c x
/// ceil(nodes / c^2) with c = ceil(cbrt(nodes)); hypercube: ceil(log2(nodes)) dimensions of 2.
/// Dimensions of radix 1 are left out.
inline node_layout::place node_layout::where(int p) const noexcept {
  return where_by(form_, div_, node_of_, local_of_, p);
}

struct node_grid {
  int nodes = 1;
  std::vector<int> radix, span;  ///< per dimension, the lowest first

  node_grid() = default;
  /// The grid of routing r (mesh, mesh3d or hypercube) over `nodes` nodes.
  node_grid(routing r, int nodes);
  [[nodiscard]] int dimensions() const noexcept { return static_cast<int>(radix.size()); }
  [[nodiscard]] int coordinate(int n, int d) const noexcept {
    return n / span[static_cast<std::size_t>(d)] % radix[static_cast<std::size_t>(d)];
  }
  /// Node n moved to coordinate v in dimension d (perhaps past the last node).
  [[nodiscard]] int moved(int n, int d, int v) const noexcept {
    return n + (v - coordinate(n, d)) * span[static_cast<std::size_t>(d)];
  }
  /// Where a place of the grid is: itself, or past the last node, the place below it in the
  /// top dimension (a full slab).
  [[nodiscard]] int host(int m) const noexcept { return m < nodes ? m : m - span.back(); }
  /// The stage (dimension) and node of an item's next hop from node a towards node b != a.
  struct step {
    int stage, node;
  };
  [[nodiscard]] step next(int a, int b) const noexcept;
};

struct routes {
  /// A hop's flag: items for this destination go through another PE and carry a prefix.
  static constexpr std::uint32_t k_prefixed = 1u << 31;
  /// A prefixed hop holds its lane in its low k_lane_bits bits and the destination's index on
  /// its node in the 16 above (node routing has fewer lanes; routes::node checks).
  static constexpr std::uint32_t k_lane_bits = 15;
  [[nodiscard]] static int lane_of_hop(std::uint32_t h) noexcept {
    return static_cast<int>((h & k_prefixed) != 0 ? h & ((1u << k_lane_bits) - 1) : h);
  }
  [[nodiscard]] static std::uint32_t local_of_hop(std::uint32_t h) noexcept {
    return (h >> k_lane_bits) & 0xffffu;
  }

  bool routed = false;   ///< node or grid routing (else direct: lane d leads to PE d, all final)
  bool gridded = false;  ///< grid routing (items carry [dest][origin] on forwarding lanes)
  int stages = 0;        ///< network crossings an item may make: node 1, a grid its dimensions
  int me = 0;
  int pes = 1;
  /// Where every PE is (routing and the driver's counters ask it).
  node_layout layout;
  /// Per node: the hop of its PEs (routed; this PE's node: 0), without their index there.
  std::vector<std::uint32_t> node_hop;
  /// Node routing (not grid): per node, where this PE's own items for its PEs go, as masks, so
  /// that a send picks lane and prefix without a branch (a random destination mispredicts one
  /// between this node and another about every other send). For the PE of index `local` there:
  /// lane `lane + (local & local_mask)`, prefix `(dest & transit) | (local | my_local << 16) &
  /// ~transit` (on a transit lane the destination, on a network lane the two indices), in
  /// `prefix_bytes` bytes (0 on this node, else 4). In 8 bytes (a lane and an index fit in 16
  /// bits: check_room), the masks widened by sign extension, which their loads do for free.
  struct own_hop {
    std::uint16_t lane = 0;
    std::int16_t local = 0, through = 0;  // the masks: 0 or -1
    std::uint16_t prefix_bytes = 0;
    [[nodiscard]] std::uint32_t local_mask() const noexcept {
      return static_cast<std::uint32_t>(std::int32_t{local});
    }
    [[nodiscard]] std::uint32_t transit() const noexcept {
      return static_cast<std::uint32_t>(std::int32_t{through});
    }
  };
  std::vector<own_hop> own;
  /// Per destination PE: the lane this PE's own items go to, | k_prefixed when they go through
  /// another PE (then with the destination's index on its node). Items forwarded from the
  /// transit lanes follow it too; those from the network go to the delivery lanes. From the
  /// layout and a table per node: nothing per PE.
  [[nodiscard]] std::uint32_t hop(int p) const noexcept {
    if (!routed) return static_cast<std::uint32_t>(p);
    const node_layout::place w = layout.where(p);
    const std::uint32_t h = node_hop[static_cast<std::size_t>(w.node)];
    const auto local = static_cast<std::uint32_t>(w.local);
    return (h & k_prefixed) != 0 ? h | local << k_lane_bits : local;
  }
  std::vector<int> peer;          ///< per lane: the PE it leads to
  std::vector<std::uint8_t> cls;  ///< per lane: its link_class
  /// Per class: the PEs whose lane of that class leads here (this PE itself among the final
  /// ones: its own items count like any link's).
  std::array<std::vector<int>, k_link_classes> in_peers;
  /// Node and grid routing: this PE's index on its node, the PEs of its node by index, per
  /// stage the first of its transit lanes, the first delivery lane (the lanes follow as final,
  /// transit(0), delivery, transit(1), transit(2), ...; -1: none), and the first network lane
  /// (they come last, by stage).
  int my_local = 0;
  std::vector<int> node_members;
  std::vector<int> transit_base;
  int delivery_base = -1, network_base = 0;

  /// The lane of class c to PE `peer`, or -1 (from the hop table and the lane order: no table
  /// per PE and class).
  [[nodiscard]] int lane(std::uint32_t c, int peer) const noexcept;
  /// The position of PE `source` in in_peers[c], or -1 (the same way, no table per PE).
  [[nodiscard]] int in_link(std::uint32_t c, int source) const noexcept;

  [[nodiscard]] int lanes() const noexcept { return static_cast<int>(peer.size()); }
  /// PEs of other nodes this PE sends to or receives from directly.
  [[nodiscard]] int network_peers() const;

  /// A team's conveyors (members()): per member, its PE and its rank in the team, by PE (a
  /// binary search maps a sender back to its lane). Empty for the job's routes.
  std::vector<std::pair<int, int>> member_rank;
  /// The rank in the team of PE p, or -1 if p is not a member (a team's routes only).
  [[nodiscard]] int rank_of(int p) const noexcept;

  /// Direct routing among the layout's PEs (lane p leads to PE p: the layout only tells nodes).
  static routes direct(int me, const node_layout& l);
  static routes direct(int me, int pes) { return direct(me, node_layout::blocked(pes, 1)); }
  /// Direct routing among a team's members (PEs of the job, by rank; `me` among them): lane r
  /// leads to member r, and only members send here. A team's lanes grow with its size, which
  /// for the rows and columns of a grid is sqrt(P).
  static routes members(int me, int pes, const std::vector<int>& members);
  /// Node routing. With at least as many other nodes as PEs on node a, its link to node b is
  /// owned by PE b mod size(a) and lands on PE a mod size(b) of node b; with fewer, each PE i
  /// of a owns the link to the (i mod (nodes - 1))-th other node, landing on PE i mod size(b)
  /// there (routes.cpp, node_link_owner).
  static routes node(int me, const node_layout& l);
  /// (node_of[p] is PE p's node, local_of[p] its index there: node_layout::of.)
  static routes node(int me, const std::vector<int>& node_of, const std::vector<int>& local_of) {
    return node(me, node_layout::of(node_of, local_of));
  }
  /// Grid routing over the same layout (node_grid): an item for node b leaves node a along
  /// the lowest dimension in which they differ, to the node that has b's coordinate there (or,
  /// where the grid's last slab is short and that node is missing, the one below it in the top
  /// dimension), and so on, one stage per dimension. A node numbers its links by dimension and
  /// then by the coordinate they lead to (its own skipped); link k is owned by its PE k mod size
  /// and lands on the far node's PE of the same link's number there (towards this node).
  static routes grid(int me, const node_layout& l, const node_grid& g);
  /// The routes that routing r (not automatic) gives PE `me` of layout l.
  static routes of(routing r, int me, const node_layout& l);
  static routes mesh(int me, const std::vector<int>& node_of, const std::vector<int>& local_of) {
    return of(routing::mesh, me, node_layout::of(node_of, local_of));
  }
};

/// What MAILROOM_ROUTING=`wanted` gives for `pes` PEs on `nodes` nodes of at most `widest` PEs:
/// auto is direct up to 64 PEs or on one node, mesh beyond 1,024 nodes, else node on nodes of
/// several PEs (every PE then owns at most 1,024 / PEs-per-node network links), else direct.
/// (The runtime and the plan then widen it with next_routing while the budget cannot hold
/// k_auto_mailboxes mailboxes over it: src/aggregation/memory_plan.hpp, auto_fits.)
[[nodiscard]] routing resolve_routing(routing wanted, int pes, int nodes, int widest) noexcept;
/// The routing `auto` moves to when `r` does not fit the budget: node after direct on nodes of
/// several PEs, else mesh (mesh is the last).
[[nodiscard]] routing next_routing(routing r, int widest) noexcept;

}  // namespace mailroom::detail
