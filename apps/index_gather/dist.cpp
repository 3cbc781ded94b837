// SPDX-License-Identifier: MIT
// Index-gather, distribution variant: the selector variant written with mailroom::cyclic. Both
// messages are at<int64_t>: the request carries the slot of the answer to the element's local
// index (sent by global index), the reply the element's value to that slot on the asker.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void dist(const problem& pb, symmetric_array<std::int64_t> table,
          symmetric_array<std::int64_t> out) {
  const cyclic d(pb.table_per_pe * num_pes());
  mailroom::selector ig{
      mailbox<at<std::int64_t>>([=](const at<std::int64_t>& q, pe from, auto& self) {
        self.template send<1>(
            from, at<std::int64_t>{table[q.index], static_cast<std::uint64_t>(q.value)});
      }),
      mailbox<at<std::int64_t>>([=](const at<std::int64_t>& r) { out[r.index] = r.value; })};
  parallel_for_chunks(std::int64_t{0}, std::ssize(pb.index),
                      [&ig, &pb, d](std::int64_t lo, std::int64_t hi) {
                        for (std::int64_t i = lo; i < hi; ++i) ig.send<0>(d, pb.index[i], i);
                      });
  ig.done<0>();
  ig.wait();
}

}  // namespace mailroom::apps::index_gather
