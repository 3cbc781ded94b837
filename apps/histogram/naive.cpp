// Histogram, naive variant: the natural PGAS program (Bale's AGP, the paper's UPC version). Every
// update is one MPI_Accumulate on the owner's counter, completed before the next one starts.
#include "histogram/histogram.hpp"

namespace mailroom::apps::histogram {

void naive(const problem& pb, symmetric_array<std::int64_t> counts) {
  const int P = num_pes();
  transport::window w(counts.data(), pb.table_per_pe);
  for (const std::int64_t g : pb.index) w.add(static_cast<int>(g % P), g / P, 1);
  w.fence();
}

}  // namespace mailroom::apps::histogram
