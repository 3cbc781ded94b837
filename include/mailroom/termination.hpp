// SPDX-License-Identifier: MIT
// Termination: the mailbox dependency graph (which mailbox's handlers may send to which), its
// strongly connected components in topological order, and the quiescence detector that closes a
// component with cycles. See docs/design.md for the argument and the cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace mailroom::transport {
class collective_context;  // (src/transport/transport.hpp)
}  // namespace mailroom::transport

namespace mailroom {

/// Declares a selector's mailbox dependency graph: an edge {x, y} says mailbox x's handler may
/// send to mailbox y. Entries are the mailboxes that code outside the selector's handlers sends
/// to; the user calls done() on exactly those. When no entries are given, they are the
/// mailboxes with no incoming edge from another mailbox, and for a cycle with no such mailbox,
/// its lowest-numbered one.
struct graph {
  /// {x, y}: mailbox x's handler may send to mailbox y (x == y: to its own mailbox).
  std::vector<std::pair<int, int>> edges;
  /// The mailboxes that code outside the handlers sends to; empty: derived from the edges.
  std::vector<int> entries;

  /// No edges: every mailbox an entry.
  graph() = default;
  /// The edges, entries derived: `mailroom::graph{{0, 1}, {1, 1}}`.
  graph(std::initializer_list<std::pair<int, int>> e) : edges(e) {}
  /// The edges and, if not empty, the entries.
  graph(std::vector<std::pair<int, int>> e, std::vector<int> entry_list = {})
      : edges(std::move(e)), entries(std::move(entry_list)) {}

  /// The default: the chain 0 -> 1 -> ... -> n-1.
  static graph chain(int n);
};

namespace termination {

/// A strongly connected component of the dependency graph.
struct component {
  std::vector<int> members;       ///< mailbox indices
  std::vector<int> predecessors;  ///< indices of components with an edge into this one
  bool cyclic = false;            ///< has a cycle (including a self-loop): closed by quiescence
};

/// The analysed graph: components in topological order (predecessors come first).
struct plan {
  /// The components, in topological order.
  std::vector<component> components;
  std::vector<int> component_of;             ///< per mailbox
  std::vector<bool> entry;                   ///< per mailbox
  std::vector<std::vector<int>> successors;  ///< per mailbox: where its handlers send (no self)
};

/// Validates the graph for n mailboxes (fatal error naming the bad edge) and analyses it.
plan analyse(const graph& g, int n);

/// Mattern's four-counter quiescence detection over non-blocking allreduce waves.
class quiescence {
 public:
  quiescence() = default;
  /// Call repeatedly once the component is closed on this PE (no more sends from outside).
  /// `ready` says that every item pushed so far has been handed to the transport, so the
  /// counters may be sampled now. Returns true once the component has terminated everywhere.
  bool step(transport::collective_context& ctx, bool ready, std::int64_t sent,
            std::int64_t processed);
  /// The allreduce waves completed so far (at least two before it reports termination).
  [[nodiscard]] int waves() const noexcept { return waves_; }

 private:
  std::int64_t in_[2] = {0, 0};
  std::int64_t out_[2] = {0, 0};
  std::int64_t prev_[2] = {-1, -1};
  bool in_flight_ = false;
  bool done_ = false;
  int waves_ = 0;
  double wave_started_ = 0;  // (MAILROOM_TRACE)
};

}  // namespace termination
}  // namespace mailroom
