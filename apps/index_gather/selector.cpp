// Index-gather, selector variant: a request mailbox looks the value up on its owner and sends a
// typed reply to the second mailbox, which stores it (the paper's class-based actor API).
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void selector(const problem& pb, symmetric_array<std::int64_t> table,
              symmetric_array<std::int64_t> out) {
  struct request {
    std::int64_t offset, i;
  };
  struct reply {
    std::int64_t i, value;
  };
  const int P = num_pes();
  mailroom::selector ig{mailbox<request>([=](request q, pe from, auto& self) {
                          self.template send<1>(from, reply{q.i, table[q.offset]});
                        }),
                        mailbox<reply>([=](reply r) { out[r.i] = r.value; })};
  for (std::int64_t i = 0; i < std::ssize(pb.index); ++i)
    ig.send<0>(pe(pb.index[i] % P), request{pb.index[i] / P, i});
  ig.done<0>();  // the runtime closes the reply mailbox (chain 0 -> 1)
  ig.wait();
}

}  // namespace mailroom::apps::index_gather
