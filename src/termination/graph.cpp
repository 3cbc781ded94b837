// SPDX-License-Identifier: MIT
// Dependency-graph analysis: validation, Tarjan's SCC, topological order of components, entries;
// and the quiescence detector (detail::quiescence).
#include "aggregation/exchange.hpp"
#include "mailroom/detail/scheduler.hpp"
#include "mailroom/detail/signature.hpp"
#include "mailroom/error.hpp"
#include "mailroom/termination.hpp"

#include "common/trace.hpp"
#include "transport/transport.hpp"

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

namespace detail {

// Why this is correct (Mattern's four-counter method). Counters are per PE and monotonic: S
// counts items of the component's mailboxes handed to the transport, R counts items whose
// handler has returned. A PE samples only after its component is closed (it will never again
// send into the component from outside it) and after shipping every partly filled buffer, so
// every push it ever made before the sample is counted in S. Wave k+1 samples on every PE only
// after wave k completed everywhere (its result needs every contribution). Let T be the end of
// wave k. If R summed over wave k equals S summed over wave k+1, then: every item sent before T
// (at most S_{k+1}) was processed before T (at least R_k), and no item was sent between T and
// the wave k+1 samples. After T no handler of the component can run (nothing is left to
// process) and no outside code sends, so nothing is ever sent again: the component terminated,
// and every PE learns it from the same wave. Cost: at least two waves, each one non-blocking
// allreduce of two integers (O(log P) rounds); a wave is started only when the PE has nothing of
// the component left to process, so waves do not compete with work.
bool quiescence::step(transport::collective_context& ctx, bool ready, std::int64_t sent,
                      std::int64_t processed) {
  if (done_) return true;
  if (MAILROOM_UNLIKELY(disagreed_)) return false;
  if (in_flight_) {
    if (!ctx.test()) return false;
    in_flight_ = false;
    ++waves_;
    const std::int64_t h = signature_ >> 12, members = out_[2];
    if (MAILROOM_UNLIKELY(out_[3] != members * h || out_[4] != members * h * h)) {
      disagree();
      return false;  // (for ever: the PE that differs stops the job)
    }
    if (MAILROOM_UNLIKELY(detail::trace::g_on))
      detail::trace::record(detail::trace::builtin().wave, wave_started_,
                            detail::trace::now() - wave_started_, {waves_, out_[0], out_[1], 0});
    if (prev_[1] >= 0 && prev_[1] == out_[0] && out_[0] == out_[1]) {
      done_ = true;
      return true;
    }
    prev_[0] = out_[0];
    prev_[1] = out_[1];
  }
  if (!ready) return false;
  in_[0] = sent;
  in_[1] = processed;
  const std::int64_t h = signature_ >> 12;
  in_[2] = 1;
  in_[3] = h;
  in_[4] = h * h;
  in_[5] = first_ ? static_cast<std::int64_t>(signature_) : 0;
  in_[6] = first_ ? transport::rank() : 0;
  if (MAILROOM_UNLIKELY(detail::trace::g_on)) wave_started_ = detail::trace::now();
  ctx.start_allreduce_sum(in_, out_, k_wave);
  in_flight_ = true;
  return false;
}

void quiescence::disagree() {
  const auto theirs = static_cast<std::uint32_t>(out_[5]);
  const auto first = static_cast<int>(out_[6]);
  // A PE whose signature differs from the first member's speaks for both; the others wait for
  // it to stop the job (it has this wave too), starting no more waves.
  disagreed_ = true;
  if (theirs == signature_) return;
  MAILROOM_FAIL(
      "PEs constructed their selectors, or closed their cycles of selectors, in different "
      "orders: the termination waves of {} here met, on PE {}, those of {}. Every PE must "
      "construct its selectors and declare the receives_from that close cycles in the same "
      "order",
      describe_signature(signature_), first, exchange::get().describe_on(first, theirs));
}

}  // namespace detail
}  // namespace mailroom
