// SPDX-License-Identifier: MIT
// Dependency-graph analysis: validation, Tarjan's SCC, topological order of components, entries
// (the protocols that close them: protocols.cpp).
#include "mailroom/termination.hpp"

#include "mailroom/error.hpp"

#include <algorithm>
#include <functional>

namespace mailroom {

graph graph::chain(int n) {
  graph g;
  for (int i = 0; i + 1 < n; ++i) g.edges.emplace_back(i, i + 1);
  return g;
}

namespace termination {

plan analyse(const graph& g, int n) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(n));
  std::vector<bool> self_loop(static_cast<std::size_t>(n), false);
  for (auto [x, y] : g.edges) {
    MAILROOM_CHECK(x >= 0 && x < n && y >= 0 && y < n,
                   "graph edge {{{}, {}}} names a mailbox out of range [0, {})", x, y, n);
    out[static_cast<std::size_t>(x)].push_back(y);
    if (x == y) self_loop[static_cast<std::size_t>(x)] = true;
  }

  // Tarjan: components come out in reverse topological order.
  std::vector<int> index(static_cast<std::size_t>(n), -1), low(static_cast<std::size_t>(n), 0);
  std::vector<bool> on_stack(static_cast<std::size_t>(n), false);
  std::vector<int> stack;
  std::vector<std::vector<int>> sccs;
  int counter = 0;
  std::function<void(int)> visit = [&](int v) {
    const auto vi = static_cast<std::size_t>(v);
    index[vi] = low[vi] = counter++;
    stack.push_back(v);
    on_stack[vi] = true;
    for (int w : out[vi]) {
      const auto wi = static_cast<std::size_t>(w);
      if (index[wi] < 0) {
        visit(w);
        low[vi] = std::min(low[vi], low[wi]);
      } else if (on_stack[wi]) {
        low[vi] = std::min(low[vi], index[wi]);
      }
    }
    if (low[vi] == index[vi]) {
      std::vector<int> scc;
      int w = -1;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[static_cast<std::size_t>(w)] = false;
        scc.push_back(w);
      } while (w != v);
      std::sort(scc.begin(), scc.end());
      sccs.push_back(std::move(scc));
    }
  };
  for (int v = 0; v < n; ++v)
    if (index[static_cast<std::size_t>(v)] < 0) visit(v);
  std::reverse(sccs.begin(), sccs.end());

  plan p;
  p.component_of.assign(static_cast<std::size_t>(n), -1);
  for (std::size_t c = 0; c < sccs.size(); ++c)
    for (int m : sccs[c]) p.component_of[static_cast<std::size_t>(m)] = static_cast<int>(c);
  p.components.resize(sccs.size());
  for (std::size_t c = 0; c < sccs.size(); ++c) {
    auto& comp = p.components[c];
    comp.members = sccs[c];
    comp.cyclic = sccs[c].size() > 1 || self_loop[static_cast<std::size_t>(sccs[c][0])];
  }
  std::vector<bool> has_in(static_cast<std::size_t>(n), false);
  p.successors.resize(static_cast<std::size_t>(n));
  for (auto [x, y] : g.edges) {
    auto& succ = p.successors[static_cast<std::size_t>(x)];
    if (x != y && std::find(succ.begin(), succ.end(), y) == succ.end()) succ.push_back(y);
    const int cx = p.component_of[static_cast<std::size_t>(x)];
    const int cy = p.component_of[static_cast<std::size_t>(y)];
    if (x != y) has_in[static_cast<std::size_t>(y)] = true;
    if (cx != cy) {
      auto& preds = p.components[static_cast<std::size_t>(cy)].predecessors;
      if (std::find(preds.begin(), preds.end(), cx) == preds.end()) preds.push_back(cx);
    }
  }

  p.entry.assign(static_cast<std::size_t>(n), false);
  if (!g.entries.empty()) {
    for (int e : g.entries) {
      MAILROOM_CHECK(e >= 0 && e < n, "graph entry {} is out of range [0, {})", e, n);
      p.entry[static_cast<std::size_t>(e)] = true;
    }
  } else {
    for (int m = 0; m < n; ++m)
      if (!has_in[static_cast<std::size_t>(m)]) p.entry[static_cast<std::size_t>(m)] = true;
    for (auto& comp : p.components) {
      if (!comp.predecessors.empty()) continue;
      const bool any = std::any_of(comp.members.begin(), comp.members.end(),
                                   [&](int m) { return p.entry[static_cast<std::size_t>(m)]; });
      if (!any) p.entry[static_cast<std::size_t>(comp.members.front())] = true;
    }
  }
  return p;
}

}  // namespace termination

}  // namespace mailroom
