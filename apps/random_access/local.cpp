// SPDX-License-Identifier: MIT
// RandomAccess, the floor: this PE's stream applied to its own table (HPCC's single-process
// RandomAccess, on a table of 2^k words): the cost of generating and applying the updates.
#include "random_access/random_access.hpp"

namespace mailroom::apps::random_access {

void local(const problem& pb, symmetric_array<std::uint64_t> table) {
  std::uint64_t ran = starts(pb.first);
  const std::uint64_t mask = pb.mask();
  for (std::int64_t i = 0; i < pb.updates; ++i) {
    ran = next(ran);
    table[ran & mask] ^= ran;
  }
}

}  // namespace mailroom::apps::random_access
