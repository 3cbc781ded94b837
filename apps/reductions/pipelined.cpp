// SPDX-License-Identifier: MIT
// Reductions, pipelined variant: each partition's all-reduce is started without waiting, and the
// next partition is computed while the earlier ones are in flight; a callback counts them as
// they complete, and the PE waits once, at the end, for all of them.
#include "reductions/reductions.hpp"

namespace mailroom::apps::reductions {

void pipelined(const problem& pb, std::span<std::int64_t> sum) {
  std::vector<std::int64_t> y(pb.x.size());
  std::vector<future<void>> parts;
  parts.reserve(static_cast<std::size_t>(pb.partitions));
  std::int64_t completed = 0;
  for (std::int64_t k = 0; k < pb.partitions; ++k) {
    const std::size_t b = pb.begin(k), e = pb.begin(k + 1);
    compute(pb, k, std::span(y).subspan(b, e - b));
    parts.push_back(
        all_reduce_async(std::span<const std::int64_t>(y).subspan(b, e - b), sum.subspan(b, e - b))
            .then([&completed] { ++completed; }));
  }
  when_all(parts).wait();
  MAILROOM_CHECK(completed == pb.partitions, "{} of {} reductions completed", completed,
                 pb.partitions);
}

}  // namespace mailroom::apps::reductions
