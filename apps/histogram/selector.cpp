// SPDX-License-Identifier: MIT
// Histogram, selector variant: an actor with one typed mailbox; each update is a message carrying
// the local slot to its owner, whose handler (inlined into the delivery loop) increments it.
// The updates are sent from a parallel loop: with several workers (--workers), from all of them.
#include "histogram/histogram.hpp"

#include <span>

namespace mailroom::apps::histogram {

void selector(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  actor a{mailbox<std::int64_t>([counts](std::int64_t slot) { counts[slot] += 1; })};
  parallel_for_chunks(std::size_t{0}, pb.index.size(),
                      [&a, &pb, P](std::size_t lo, std::size_t hi) {
                        for (const std::int64_t g : std::span(pb.index).subspan(lo, hi - lo))
                          a.send(pe(g % P), g / P);
                      });
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::histogram
