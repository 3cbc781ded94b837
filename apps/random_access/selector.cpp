// SPDX-License-Identifier: MIT
// RandomAccess, selector variant: an actor with one typed mailbox; each update is a message
// carrying ran to its owner, whose handler (inlined into the delivery loop) applies it. With
// several workers each takes a piece of the stream, starting where the stream is there.
#include "random_access/random_access.hpp"

namespace mailroom::apps::random_access {

void selector(const problem& pb, symmetric_array<std::uint64_t> table) {
  const std::uint64_t mask = pb.mask();
  actor a{mailbox<std::uint64_t>([table, mask](std::uint64_t ran) { table[ran & mask] ^= ran; })};
  in_rounds(pb, [&](std::int64_t lo, std::int64_t hi) {
    parallel_for_chunks(lo, hi, [&a, &pb](std::int64_t from, std::int64_t to) {
      std::uint64_t ran = starts(pb.first + from);
      for (std::int64_t i = from; i < to; ++i) {
        ran = next(ran);
        a.send(pe(pb.owner(ran)), ran);
      }
    });
  });
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::random_access
