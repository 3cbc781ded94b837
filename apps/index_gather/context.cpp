// SPDX-License-Identifier: MIT
// Index-gather, context variant: the lambda variant with the captures every request shares (the
// table, the output and the selector) given once per send loop (selector::with_context): a
// request carries only {i, offset}, as the typed one does. The reply is a plain lambda message.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void context(const problem& pb, symmetric_array<std::int64_t> table,
             symmetric_array<std::int64_t> out) {
  const int P = num_pes();
  mailroom::selector ig{lambdas{}, lambdas{}};
  struct shared {
    symmetric_array<std::int64_t> table, out;
    selector_ref<decltype(ig)> sel;
  };
  parallel_for_chunks(std::int64_t{0}, std::ssize(pb.index),
                      [&ig, &pb, P, table, out](std::int64_t lo, std::int64_t hi) {
                        auto requests = ig.with_context<0>(shared{table, out, ig.ref()});
                        for (std::int64_t i = lo; i < hi; ++i) {
                          const std::int64_t g = pb.index[i];
                          requests.send(pe(g % P), [i, offset = g / P](const shared& c, pe from) {
                            const std::int64_t v = c.table[offset];
                            c.sel->send<1>(from, [o = c.out, i, v] { o[i] = v; });
                          });
                        }
                      });
  ig.done<0>();
  ig.wait();
}

}  // namespace mailroom::apps::index_gather
