// SPDX-License-Identifier: MIT
// Index-gather, naive variant: one remote get per read, completed before the next (a load within
// a node, MPI_Get across nodes). The natural PGAS program (Bale's AGP / UPC version), the
// baseline the aggregating variants must beat.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void naive(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out) {
  const int P = num_pes();
  for (std::size_t i = 0; i < pb.index.size(); ++i)
    out[i] = table.get(pe(pb.index[i] % P), static_cast<std::size_t>(pb.index[i] / P));
}

}  // namespace mailroom::apps::index_gather
