// SPDX-License-Identifier: MIT
// RandomAccess, conveyor variant: mailroom's aggregation layer used directly, Bale's
// push/pull/advance loop; each message is the update itself (its owner finds the offset in it).
// With a lookahead, one conveyor per round, which ends once every PE's updates are applied.
#include "random_access/random_access.hpp"

namespace mailroom::apps::random_access {

void conveyor(const problem& pb, symmetric_array<std::uint64_t> table) {
  std::uint64_t ran = starts(pb.first);
  const std::uint64_t mask = pb.mask();
  in_rounds(
      pb,
      [&](std::int64_t lo, std::int64_t hi) {
        mailroom::conveyor<std::uint64_t> c;
        std::int64_t i = lo;
        bool held = false;  // ran is generated and waits for room
        std::uint64_t got = 0;
        pe from;
        while (c.advance(i == hi)) {
          for (; i < hi; ++i) {
            if (!held) ran = next(ran);
            held = !c.push(pe(pb.owner(ran)), ran);
            if (held) break;
          }
          while (c.pull(from, got)) table[got & mask] ^= got;
        }
      },
      /*completes=*/true);
}

}  // namespace mailroom::apps::random_access
