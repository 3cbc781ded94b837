// SPDX-License-Identifier: MIT
// Index-gather, gather variant: the reads as one call of mailroom's aggregated gather, which
// sends them through an internal selector (requests answered by their owners) and returns once
// every value is here. The selector variant written by the library instead of the user.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void gather(const problem& pb, symmetric_array<std::int64_t> table,
            symmetric_array<std::int64_t> out) {
  mailroom::gather(table, std::span<const std::int64_t>(pb.index),
                   std::span<std::int64_t>(out.data(), pb.index.size()));
}

}  // namespace mailroom::apps::index_gather
