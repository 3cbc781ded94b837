// SPDX-License-Identifier: MIT
// PointerChase, the floor: chains x hops dependent loads through a ring of 4,096 entries in this
// PE's memory (each hop reads where the next one goes), no communication.
#include "pointer_chase/pointer_chase.hpp"

#include <vector>

namespace mailroom::apps::pointer_chase {

void local(const problem& pb) {
  // A ring through every entry: i -> i + 1579 (coprime with 4096) mod 4096.
  constexpr std::int64_t k_ring = 4096;
  std::vector<std::int32_t> next(k_ring);
  for (std::int64_t i = 0; i < k_ring; ++i)
    next[i] = static_cast<std::int32_t>((i + 1579) % k_ring);
  for (std::int64_t c = 0; c < pb.chains; ++c) {
    std::int32_t at = static_cast<std::int32_t>(c % k_ring);
    for (std::int64_t h = 0; h < pb.hops; ++h) at = next[static_cast<std::size_t>(at)];
    pb.ended[0] += at;  // (uses the walk's end, so it is not optimised away)
  }
  pb.handled[0] = pb.chains * pb.hops;
}

}  // namespace mailroom::apps::pointer_chase
