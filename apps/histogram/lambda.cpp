// SPDX-License-Identifier: MIT
// Histogram, lambda variant: each update is a closure sent to the owner of its slot, capturing
// the symmetric counts handle (one pointer) and the local slot. Sent from a parallel loop: with
// several workers (--workers), from all of them.
#include "histogram/histogram.hpp"

#include <span>

namespace mailroom::apps::histogram {

void lambda(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  actor<> l;
  parallel_for_chunks(std::size_t{0}, pb.index.size(),
                      [&l, &pb, counts, P](std::size_t lo, std::size_t hi) {
                        for (const std::int64_t g : std::span(pb.index).subspan(lo, hi - lo))
                          l.send(pe(g % P), [counts, slot = g / P] { counts[slot] += 1; });
                      });
  l.done();
  l.wait();
}

}  // namespace mailroom::apps::histogram
