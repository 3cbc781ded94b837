// SPDX-License-Identifier: MIT
// Histogram, distribution variant: the selector variant written with mailroom::cyclic instead of
// the hand-written (g % P, g / P); the message is the local index the distribution gives.
#include "histogram/histogram.hpp"

#include <span>

namespace mailroom::apps::histogram {

void dist(const problem& pb, symmetric_array<std::int64_t> counts) {
  const cyclic table(pb.table_per_pe * num_pes());
  actor a{mailbox<std::int64_t>([counts](std::int64_t slot) { counts[slot] += 1; })};
  parallel_for_chunks(std::size_t{0}, pb.index.size(),
                      [&a, &pb, table](std::size_t lo, std::size_t hi) {
                        for (const std::int64_t g : std::span(pb.index).subspan(lo, hi - lo))
                          a.send(table, g);
                      });
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::histogram
