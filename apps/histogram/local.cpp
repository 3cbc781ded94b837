// SPDX-License-Identifier: MIT
// Histogram, local variant: the floor. The same update loop with no communication, every update
// applied to this PE's own table.
#include "histogram/histogram.hpp"

namespace mailroom::apps::histogram {

void local(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  for (const std::int64_t g : pb.index) counts[g / P] += 1;
}

}  // namespace mailroom::apps::histogram
