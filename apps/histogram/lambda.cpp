// Histogram, lambda variant: each update is a closure sent to the owner of its slot, capturing
// the symmetric counts handle (one pointer) and the local slot.
#include "histogram/histogram.hpp"

namespace mailroom::apps::histogram {

void lambda(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  actor<> l;
  for (const std::int64_t g : pb.index)
    l.send(pe(g % P), [counts, slot = g / P] { counts[slot] += 1; });
  l.done();
  l.wait();
}

}  // namespace mailroom::apps::histogram
