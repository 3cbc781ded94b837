// SPDX-License-Identifier: MIT
// Reductions, blocking variant (the SPMD way): compute a partition, all-reduce it, wait, next.
#include "reductions/reductions.hpp"

namespace mailroom::apps::reductions {

void blocking(const problem& pb, std::span<std::int64_t> sum) {
  std::vector<std::int64_t> y(pb.x.size());
  for (std::int64_t k = 0; k < pb.partitions; ++k) {
    const std::size_t b = pb.begin(k), e = pb.begin(k + 1);
    compute(pb, k, std::span(y).subspan(b, e - b));
    all_reduce(std::span<const std::int64_t>(y).subspan(b, e - b), sum.subspan(b, e - b));
  }
}

}  // namespace mailroom::apps::reductions
