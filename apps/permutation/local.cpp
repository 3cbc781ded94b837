// SPDX-License-Identifier: MIT
// Permutation, local variant: the same two rounds on this PE's own parts, global index k at local
// index k / P here (a random read of perm, then a random write of data_perm). No communication:
// the floor the other variants are measured against (slots written twice keep the last write).
#include "permutation/permutation.hpp"

namespace mailroom::apps::permutation {

void local(const problem& pb, distributed<std::int64_t> data_perm) {
  const cyclic& d = pb.perm.dist();
  const pe me = this_pe();
  const auto perm = pb.perm.local();
  const auto out = data_perm.local();
  for (std::size_t l = 0; l < pb.data.size(); ++l)
    out[d.local(perm[d.local(pb.data[l])])] = d.global(me, l);
}

}  // namespace mailroom::apps::permutation
