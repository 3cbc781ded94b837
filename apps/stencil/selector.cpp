// SPDX-License-Identifier: MIT
// Stencil, selector variant: an actor of variable-size messages (span_of<double>), one per halo
// row: the iteration, then the row. Each iteration a PE sends its first row up and its last row
// down, sweeps the rows that need neither, waits until both rows have arrived (running the
// handlers, which copy them aside), and sweeps its first and last rows. (mailroom::progress()
// after each row of the sweep cost 5% on 2 PEs of one node at 4096^2 points, and won nothing
// there: the rows wait in their buffers until the handlers run.) A PE is at most one iteration
// ahead of its neighbours, so the rows of two iterations are kept apart.
#include "stencil/stencil.hpp"

#include <algorithm>

namespace mailroom::apps::stencil {

void selector(const problem& pb, grid& a, grid& b) {
  const int me = this_pe().rank();
  const auto w = static_cast<std::size_t>(pb.width);
  const int need = (pb.has_above() ? 1 : 0) + (pb.has_below() ? 1 : 0);
  // halo[iteration % 2][0]: the row above this PE's block; [1]: the row below it.
  std::vector<double> halo[2][2];
  for (auto& h : halo)
    for (auto& row : h) row.resize(w);
  std::vector<int> arrived(static_cast<std::size_t>(pb.iterations), 0);
  std::vector<promise<void>> ready(static_cast<std::size_t>(pb.iterations));
  actor rows{mailbox<span_of<double>>([&](std::span<const double> m, pe from) {
    const auto it = static_cast<std::size_t>(m[0]);
    std::copy(m.begin() + 1, m.end(), halo[it % 2][from.rank() < me ? 0 : 1].begin());
    if (++arrived[it] == need) ready[it].set_value();
  })};
  std::vector<double> out(w + 1);
  const auto send_row = [&](int to, std::int64_t it, const double* row) {
    out[0] = static_cast<double>(it);
    std::copy(row, row + w, out.begin() + 1);
    rows.send(pe(to), out);
  };
  grid* from = &a;
  grid* to = &b;
  for (std::int64_t it = 0; it < pb.iterations; ++it) {
    const double* old = from->local().data();
    double* next = to->local().data();
    if (pb.has_above()) send_row(me - 1, it, old);
    if (pb.has_below()) send_row(me + 1, it, old + (pb.count - 1) * pb.width);
    rows.flush();
    sweep_inner(pb, old, next);
    if (need > 0) ready[static_cast<std::size_t>(it)].get_future().wait();
    const auto& h = halo[it % 2];
    sweep_edges(pb, old, next, h[0].data(), h[1].data());
    std::swap(from, to);
  }
  rows.done();
  rows.wait();
}

}  // namespace mailroom::apps::stencil
