// SPDX-License-Identifier: MIT
// Permutation, naive variant: the natural PGAS program. Per element one remote get of perm[k],
// completed before the put of i into data_perm[j] (loads and stores within a node, MPI_Get and
// MPI_Put across nodes).
#include "permutation/permutation.hpp"

namespace mailroom::apps::permutation {

void naive(const problem& pb, distributed<std::int64_t> data_perm) {
  const cyclic& d = pb.perm.dist();
  const pe me = this_pe();
  for (std::size_t l = 0; l < pb.data.size(); ++l)
    data_perm.put(pb.perm.get(pb.data[l]), d.global(me, l));
  barrier();  // completes every PE's puts
}

}  // namespace mailroom::apps::permutation
