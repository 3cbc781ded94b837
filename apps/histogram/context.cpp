// SPDX-License-Identifier: MIT
// Histogram, context variant: lambda messages whose shared capture (the counts handle) is given
// once per send loop (selector::with_context), so each message carries only its slot and the
// sender compares nothing per message, as a typed send.
#include "histogram/histogram.hpp"

#include <span>

namespace mailroom::apps::histogram {

void context(const problem& pb, symmetric_array<std::int64_t> counts) {
  struct shared {
    symmetric_array<std::int64_t> counts;
  };
  const int P = num_pes();
  mailroom::selector h{lambdas{}};
  parallel_for_chunks(
      std::size_t{0}, pb.index.size(), [&h, &pb, counts, P](std::size_t lo, std::size_t hi) {
        auto out = h.with_context<0>(shared{counts});
        for (const std::int64_t g : std::span(pb.index).subspan(lo, hi - lo))
          out.send(pe(g % P), [slot = g / P](const shared& c) { c.counts[slot] += 1; });
      });
  h.done<0>();
  h.wait();
}

}  // namespace mailroom::apps::histogram
