// SPDX-License-Identifier: MIT
// PointerChase, naive variant: one-sided operations only. A hop is an atomic add of 1 to the
// successor's arrival count; each PE polls its own count and passes arrivals on. Hops carry no
// count of their own: every PE sends exactly chains x hops (its chains' first hops, then
// arrivals) and handles as many; which chain ended where it cannot tell.
#include "pointer_chase/pointer_chase.hpp"

#include <thread>

namespace mailroom::apps::pointer_chase {

void naive(const problem& pb) {
  const pe to{pb.next[0]}, me = this_pe();
  const std::int64_t mine = pb.chains * pb.hops;
  symmetric_array<std::int64_t> arrived(1);
  barrier();
  for (std::int64_t c = 0; c < pb.chains; ++c) arrived.add(to, 0, 1);
  std::int64_t sent = pb.chains, seen = 0;
  while (seen < mine) {
    const std::int64_t now = arrived.load(me, 0);
    if (now == seen) std::this_thread::yield();  // (a crowded node: let the sender run)
    for (; seen < now; ++seen)
      if (sent < mine) {
        arrived.add(to, 0, 1);
        ++sent;
      }
  }
  pb.handled[0] = seen;
  barrier();
  symmetric_free(arrived);
}

}  // namespace mailroom::apps::pointer_chase
