// SPDX-License-Identifier: MIT
// Index-gather, conveyor variant: Bale's hand-written loop over two mailroom::conveyor<T>,
// requests {offset, i} to the owner and replies {i, value} back, with explicit push/pull/advance.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void conveyor(const problem& pb, symmetric_array<std::int64_t> table,
              symmetric_array<std::int64_t> out) {
  struct request {
    std::int64_t offset, i;
  };
  struct reply {
    std::int64_t i, value;
  };
  const int P = num_pes();
  const auto n = std::ssize(pb.index);
  mailroom::conveyor<request> requests;
  mailroom::conveyor<reply> replies;
  std::int64_t i = 0;
  bool more = true;  // requests may still arrive here; the replies end once none can
  request q{};
  reply r{};
  pe from;
  while (more = more && requests.advance(i == n), more | replies.advance(!more)) {
    for (; i < n; ++i)
      if (!requests.push(pe(pb.index[i] % P), {pb.index[i] / P, i})) break;
    while (requests.pull(from, q)) {
      if (!replies.push(from, {q.i, table[q.offset]})) {
        requests.unpull();  // answer it once the reply fits
        break;
      }
    }
    while (replies.pull(from, r)) out[r.i] = r.value;
  }
}

}  // namespace mailroom::apps::index_gather
