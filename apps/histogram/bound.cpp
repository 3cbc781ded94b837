// SPDX-License-Identifier: MIT
// Histogram, bound variant: lambda messages bound to one handler per send loop
// (selector::bind). The handler's capture (the counts handle) crosses the wire once per run,
// each message carries only its slot, and the sender compares nothing per message: a typed
// mailbox made where the sends are.
#include "histogram/histogram.hpp"

#include <span>

namespace mailroom::apps::histogram {

void bound(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  mailroom::selector h{lambdas{}};
  parallel_for_chunks(std::size_t{0}, pb.index.size(),
                      [&h, &pb, counts, P](std::size_t lo, std::size_t hi) {
                        auto inc = h.bind<0>([counts](std::int64_t slot) { counts[slot] += 1; });
                        for (const std::int64_t g : std::span(pb.index).subspan(lo, hi - lo))
                          inc.send(pe(g % P), g / P);
                      });
  h.done<0>();
  h.wait();
}

}  // namespace mailroom::apps::histogram
