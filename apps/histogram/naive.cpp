// SPDX-License-Identifier: MIT
// Histogram, naive variant: the natural PGAS program (Bale's AGP, the paper's UPC version). Every
// update is one remote atomic add on the owner's counter, completed before the next one starts
// (a hardware atomic within a node, MPI's across nodes).
#include "histogram/histogram.hpp"

namespace mailroom::apps::histogram {

void naive(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  for (const std::int64_t g : pb.index) counts.add(pe(g % P), static_cast<std::size_t>(g / P), 1);
}

}  // namespace mailroom::apps::histogram
