// SPDX-License-Identifier: MIT
// Index-gather, lambda variant: the request closure runs on the owner, reads the table there and,
// through the selector it runs in (`self`), sends a reply closure back to the sender, which
// stores the value (the paper's lambda API).
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void lambda(const problem& pb, symmetric_array<std::int64_t> table,
            symmetric_array<std::int64_t> out) {
  const int P = num_pes();
  mailroom::selector ig{lambdas{}, lambdas{}};
  parallel_for_chunks(std::int64_t{0}, std::ssize(pb.index),
                      [&ig, &pb, P, table, out](std::int64_t lo, std::int64_t hi) {
                        for (std::int64_t i = lo; i < hi; ++i) {
                          const std::int64_t g = pb.index[i];
                          ig.send<0>(pe(g % P), [=, offset = g / P](pe from, auto& self) {
                            const std::int64_t v = table[offset];
                            self.template send<1>(from, [=] { out[i] = v; });
                          });
                        }
                      });
  ig.done<0>();
  ig.wait();
}

}  // namespace mailroom::apps::index_gather
