// SPDX-License-Identifier: MIT
// Permutation, selector variant: three typed mailboxes, each of at<int64_t> sent by global index
// where it can be. The request {l, perm's offset} goes to the owner of data[l], whose handler
// replies {j, l}; the reply's handler sends the store {i, data_perm's offset} to the owner of j
// (the chain 0 -> 1 -> 2). The requests are sent from a parallel loop.
#include "permutation/permutation.hpp"

namespace mailroom::apps::permutation {

void selector(const problem& pb, distributed<std::int64_t> data_perm) {
  using msg = at<std::int64_t>;
  const cyclic d = pb.perm.dist();
  const pe me = this_pe();
  const auto perm = pb.perm.parts();
  const auto out = data_perm.parts();
  mailroom::selector p{
      mailbox<msg>([=](const msg& q, pe from, auto& self) {
        self.template send<1>(from, msg{perm[q.index], static_cast<std::uint64_t>(q.value)});
      }),
      mailbox<msg>([=](const msg& r, pe, auto& self) {
        self.template send<2>(d, r.value, d.global(me, r.index));
      }),
      mailbox<msg>([=](const msg& s) { out[s.index] = s.value; })};
  parallel_for_chunks(std::int64_t{0}, std::ssize(pb.data),
                      [&p, &pb, d](std::int64_t lo, std::int64_t hi) {
                        for (std::int64_t l = lo; l < hi; ++l) p.send<0>(d, pb.data[l], l);
                      });
  p.done<0>();  // the runtime closes the other two (chain 0 -> 1 -> 2)
  p.wait();
}

}  // namespace mailroom::apps::permutation
