// SPDX-License-Identifier: MIT
// Index-gather, selector variant: a request mailbox looks the value up on its owner and sends it
// back to the second mailbox, which stores it (the paper's class-based actor API). As in Bale,
// the reply is the request's package with the table offset replaced by the value.
// The requests are sent from a parallel loop (from every worker with --workers).
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void selector(const problem& pb, symmetric_array<std::int64_t> table,
              symmetric_array<std::int64_t> out) {
  struct lookup {
    std::int64_t i, x;  // the request {i, offset of the element on its owner}, the reply {i, value}
  };
  const int P = num_pes();
  mailroom::selector ig{mailbox<lookup>([=](lookup q, pe from, auto& self) {
                          self.template send<1>(from, lookup{q.i, table[q.x]});
                        }),
                        mailbox<lookup>([=](lookup r) { out[r.i] = r.x; })};
  parallel_for_chunks(std::int64_t{0}, std::ssize(pb.index),
                      [&ig, &pb, P](std::int64_t lo, std::int64_t hi) {
                        for (std::int64_t i = lo; i < hi; ++i)
                          ig.send<0>(pe(pb.index[i] % P), lookup{i, pb.index[i] / P});
                      });
  ig.done<0>();  // the runtime closes the reply mailbox (chain 0 -> 1)
  ig.wait();
}

}  // namespace mailroom::apps::index_gather
