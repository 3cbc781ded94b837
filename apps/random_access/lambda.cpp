// SPDX-License-Identifier: MIT
// RandomAccess, lambda variant: each update is a closure run on its owner.
#include "random_access/random_access.hpp"

namespace mailroom::apps::random_access {

void lambda(const problem& pb, symmetric_array<std::uint64_t> table) {
  const std::uint64_t mask = pb.mask();
  actor<> l;
  in_rounds(pb, [&](std::int64_t lo, std::int64_t hi) {
    parallel_for_chunks(lo, hi, [&l, &pb, table, mask](std::int64_t from, std::int64_t to) {
      std::uint64_t ran = starts(pb.first + from);
      for (std::int64_t i = from; i < to; ++i) {
        ran = next(ran);
        l.send(pe(pb.owner(ran)), [table, mask, ran] { table[ran & mask] ^= ran; });
      }
    });
  });
  l.done();
  l.wait();
}

}  // namespace mailroom::apps::random_access
