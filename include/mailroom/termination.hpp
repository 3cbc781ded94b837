// SPDX-License-Identifier: MIT
// Termination: the mailbox dependency graph (which mailbox's handlers may send to which), its
// strongly connected components in topological order. (The protocols that close them, the end
// of stream and quiescence waves, are the termination layer's too, in src/termination.) See
// docs/design.md for the argument and the cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

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

}  // namespace termination
}  // namespace mailroom
