// Histogram, selector variant: an actor with one typed mailbox; each update is a message carrying
// the local slot to its owner, whose handler (inlined into the delivery loop) increments it.
#include "histogram/histogram.hpp"

namespace mailroom::apps::histogram {

void selector(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  actor a{mailbox<std::int64_t>([counts](std::int64_t slot) { counts[slot] += 1; })};
  for (const std::int64_t g : pb.index) a.send(pe(g % P), g / P);
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::histogram
