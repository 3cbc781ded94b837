// SPDX-License-Identifier: MIT
// Histogram, conveyor variant: mailroom's aggregation layer used directly, with the explicit
// push/pull/advance loop of Bale's Conveyor version.
#include "histogram/histogram.hpp"

namespace mailroom::apps::histogram {

void conveyor(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  const std::size_t n = pb.index.size();
  mailroom::conveyor<std::int64_t> c;
  std::size_t i = 0;
  std::int64_t slot = 0;
  pe from;
  while (c.advance(i == n)) {
    for (; i < n; ++i)
      if (!c.push(pe(pb.index[i] % P), pb.index[i] / P)) break;
    while (c.pull(from, slot)) counts[slot] += 1;
  }
}

}  // namespace mailroom::apps::histogram
