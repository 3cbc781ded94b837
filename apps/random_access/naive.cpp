// SPDX-License-Identifier: MIT
// RandomAccess, naive variant: the natural PGAS program (HPCC's SHMEM and UPC versions). Every
// update is one atomic xor on the owner's word, completed before the next is generated (a
// hardware atomic within a node, MPI's across nodes): no update is ever held.
#include "random_access/random_access.hpp"

namespace mailroom::apps::random_access {

void naive(const problem& pb, symmetric_array<std::uint64_t> table) {
  std::uint64_t ran = starts(pb.first);
  const std::uint64_t mask = pb.mask();
  for (std::int64_t i = 0; i < pb.updates; ++i) {
    ran = next(ran);
    (void)table.fetch_xor(pe(pb.owner(ran)), ran & mask, ran);
  }
}

}  // namespace mailroom::apps::random_access
