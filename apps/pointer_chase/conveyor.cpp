// SPDX-License-Identifier: MIT
// PointerChase, conveyor variant: Bale's push/pull/advance loop; a pulled hop is pushed on to
// the successor at once, or held until the conveyor has room. This PE is done once it has
// handled its chains x hops hops and holds none.
#include "pointer_chase/pointer_chase.hpp"

#include <vector>

namespace mailroom::apps::pointer_chase {

void conveyor(const problem& pb) {
  const pe to{pb.next[0]};
  const std::int64_t mine = pb.chains * pb.hops;
  mailroom::conveyor<hop> c;
  // Hops to push on (or start) when there is room.
  std::vector<hop> held(static_cast<std::size_t>(pb.chains), hop{pb.hops - 1, this_pe().rank()});
  std::int64_t handled = 0;
  hop h{};
  pe from;
  while (c.advance(handled == mine && held.empty())) {
    while (!held.empty() && c.push(to, held.back())) held.pop_back();
    while (c.pull(from, h)) {
      ++handled;
      if (h.left == 0)
        pb.ended[0] += h.origin + 1;
      else if (!c.push(to, hop{h.left - 1, h.origin}))
        held.push_back(hop{h.left - 1, h.origin});
    }
  }
  pb.handled[0] = handled;
}

}  // namespace mailroom::apps::pointer_chase
