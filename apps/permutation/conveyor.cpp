// SPDX-License-Identifier: MIT
// Permutation, conveyor variant: Bale's hand-written loop over three mailroom::conveyor<T>:
// requests {perm's offset, l} to the owner of data[l], replies {l, j} back, and the stores
// {i, data_perm's offset} to the owner of j. Each conveyor ends once the one before it has.
#include "permutation/permutation.hpp"

namespace mailroom::apps::permutation {

void conveyor(const problem& pb, distributed<std::int64_t> data_perm) {
  struct request {
    std::int64_t offset, l;
  };
  struct reply {
    std::int64_t l, j;
  };
  const cyclic& d = pb.perm.dist();
  const pe me = this_pe();
  const auto perm = pb.perm.local();
  const auto out = data_perm.local();
  const auto n = std::ssize(pb.data);
  mailroom::conveyor<request> requests;
  mailroom::conveyor<reply> replies;
  mailroom::conveyor<at<std::int64_t>> stores;
  std::int64_t l = 0;
  bool asking = true, answering = true;  // requests, then replies, may still arrive here
  request q{};
  reply r{};
  at<std::int64_t> s{};
  pe from;
  while ((asking = asking && requests.advance(l == n)),
         (answering = answering && replies.advance(!asking)),
         answering | stores.advance(!answering)) {
    for (; l < n; ++l) {
      const place k = place_of(d, pb.data[l]);
      if (!requests.push(k.owner, {static_cast<std::int64_t>(k.local), l})) break;
    }
    while (requests.pull(from, q)) {
      if (!replies.push(from, {q.l, perm[q.offset]})) {
        requests.unpull();  // answer it once the reply fits
        break;
      }
    }
    while (replies.pull(from, r)) {
      const place j = place_of(d, r.j);
      if (!stores.push(j.owner, {d.global(me, r.l), j.local})) {
        replies.unpull();
        break;
      }
    }
    while (stores.pull(from, s)) out[s.index] = s.value;
  }
}

}  // namespace mailroom::apps::permutation
