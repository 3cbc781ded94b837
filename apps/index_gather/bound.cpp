// SPDX-License-Identifier: MIT
// Index-gather, bound variant: the requests are lambda messages bound to one handler per send
// loop (selector::bind): the table and the output cross the wire once per run, a request
// carries only {i, offset}, as the typed one does, and the sender compares nothing per message.
// The handler replies through `self` with a plain lambda message.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void bound(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out) {
  struct request {
    std::int64_t i, offset;
  };
  const int P = num_pes();
  mailroom::selector ig{lambdas{}, lambdas{}};
  parallel_for_chunks(std::int64_t{0}, std::ssize(pb.index),
                      [&ig, &pb, P, table, out](std::int64_t lo, std::int64_t hi) {
                        auto requests =
                            ig.bind<0, request>([table, out](request q, pe from, auto& self) {
                              const std::int64_t v = table[q.offset];
                              self.template send<1>(from, [out, i = q.i, v] { out[i] = v; });
                            });
                        const std::int64_t* index = pb.index.data();
                        for (std::int64_t i = lo; i < hi; ++i) {
                          const std::int64_t g = index[i];
                          requests.send(pe(g % P), request{i, g / P});
                        }
                      });
  ig.done<0>();
  ig.wait();
}

}  // namespace mailroom::apps::index_gather
