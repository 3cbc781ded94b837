// SPDX-License-Identifier: MIT
// PointerChase, selector variant: one typed mailbox that sends to itself (a self-loop in the
// termination graph); a message is its chain's hops left and origin.
#include "pointer_chase/pointer_chase.hpp"

namespace mailroom::apps::pointer_chase {

void selector(const problem& pb) {
  const pe to{pb.next[0]};
  const auto handled = pb.handled, ended = pb.ended;
  mailroom::selector chase{graph{{0, 0}},
                           mailbox<hop>([to, handled, ended](const hop& h, pe, auto& self) {
                             handled[0] += 1;
                             if (h.left == 0)
                               ended[0] += h.origin + 1;
                             else
                               self.template send<0>(to, hop{h.left - 1, h.origin});
                           })};
  const hop first{pb.hops - 1, this_pe().rank()};
  for (std::int64_t c = 0; c < pb.chains; ++c) chase.send<0>(to, first);
  chase.done<0>();
  chase.wait();
}

}  // namespace mailroom::apps::pointer_chase
