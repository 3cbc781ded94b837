// SPDX-License-Identifier: MIT
// Stencil, global variant: the grids are global arrays (the global view). Each iteration starts
// prefetching the rows next to this PE's block, sweeps the rows that need no other PE's, reads
// the two rows through the global view, sweeps the first and last rows, and syncs (a barrier
// that drops the cached pages: the next iteration reads the neighbours' new rows).
#include "stencil/stencil.hpp"

namespace mailroom::apps::stencil {

void global(const problem& pb, grid& a, grid& b) {
  const std::int64_t w = pb.width;
  const std::int64_t up = (pb.first - 1) * w, down = (pb.first + pb.count) * w;
  std::vector<double> above(pb.has_above() ? static_cast<std::size_t>(w) : 0);
  std::vector<double> below(pb.has_below() ? static_cast<std::size_t>(w) : 0);
  grid* from = &a;
  grid* to = &b;
  for (std::int64_t it = 0; it < pb.iterations; ++it) {
    const future<void> fetch_above =
        pb.has_above() ? from->prefetch(up, above.size()) : make_ready_future();
    const future<void> fetch_below =
        pb.has_below() ? from->prefetch(down, below.size()) : make_ready_future();
    const double* old = from->local().data();
    double* next = to->local().data();
    sweep_inner(pb, old, next);
    fetch_above.wait();
    fetch_below.wait();
    if (pb.has_above()) from->read(up, above);
    if (pb.has_below()) from->read(down, below);
    sweep_edges(pb, old, next, above.data(), below.data());
    sync();
    std::swap(from, to);
  }
}

}  // namespace mailroom::apps::stencil
