// Index-gather, naive variant: one MPI_Get per read, completed before the next. The natural
// PGAS program (Bale's AGP / UPC version), the baseline the aggregating variants must beat.
#include "index_gather/index_gather.hpp"

namespace mailroom::apps::index_gather {

void naive(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out) {
  const int P = num_pes();
  transport::window w(table.data(), pb.table_per_pe);  // collective, as is its end
  for (std::size_t i = 0; i < pb.index.size(); ++i)
    out[i] = w.get(static_cast<int>(pb.index[i] % P), pb.index[i] / P);
}

}  // namespace mailroom::apps::index_gather
