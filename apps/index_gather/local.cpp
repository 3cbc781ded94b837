// SPDX-License-Identifier: MIT
// Index-gather, local variant: the same loop, reading this PE's own table at the owner's offset.
// No communication: the floor the other variants are measured against (values differ from theirs).
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void local(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out) {
  const int P = num_pes();
  for (std::size_t i = 0; i < pb.index.size(); ++i) out[i] = table[pb.index[i] / P];
}

}  // namespace mailroom::apps::index_gather
