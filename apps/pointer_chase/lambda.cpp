// SPDX-License-Identifier: MIT
// PointerChase, lambda variant: a hop is a closure that, run on its PE, sends the next hop there
// to that PE's successor (read from the symmetric table where it runs).
#include "pointer_chase/pointer_chase.hpp"

namespace mailroom::apps::pointer_chase {

namespace {
struct step {
  std::int64_t left, origin;
  symmetric_array<int> next;
  symmetric_array<std::int64_t> handled, ended;
  template <class Self>
  void operator()(pe, Self& self) const {
    handled[0] += 1;
    if (left == 0)
      ended[0] += origin + 1;
    else
      self.template send<0>(pe(next[0]), step{left - 1, origin, next, handled, ended});
  }
};
}  // namespace

void lambda(const problem& pb) {
  mailroom::selector<lambdas> chase{graph{{0, 0}}, lambdas{}};
  for (std::int64_t c = 0; c < pb.chains; ++c)
    chase.send<0>(pe(pb.next[0]),
                  step{pb.hops - 1, this_pe().rank(), pb.next, pb.handled, pb.ended});
  chase.done<0>();
  chase.wait();
}

}  // namespace mailroom::apps::pointer_chase
