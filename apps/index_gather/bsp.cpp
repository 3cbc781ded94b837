// SPDX-License-Identifier: MIT
// Index-gather, bulk-synchronous variant in the style of Bale's exstack: fill per-destination
// buckets of requests, then a superstep of MPI_Alltoallv out (offsets) and back (values).
#include "index_gather/index_gather.hpp"

#include <algorithm>

namespace mailroom::apps::index_gather {

void bsp(const problem& pb, symmetric_array<std::int64_t> table,
         symmetric_array<std::int64_t> out) {
  constexpr int k_bucket = 1024;  // requests per destination per superstep
  const int P = num_pes();
  const std::size_t n = pb.index.size(), slots = static_cast<std::size_t>(P) * k_bucket;
  // Bucket d occupies [d * k_bucket, (d + 1) * k_bucket) of every buffer, sent and received.
  std::vector<std::int64_t> asked(slots), served(slots), answers(slots);
  std::vector<std::size_t> reader(slots);  // the read each request answers
  std::vector<int> sent(P), received(P), start(P);
  for (int d = 0; d < P; ++d) start[d] = d * k_bucket;
  std::size_t i = 0;
  while (all_reduce(std::int64_t{i < n}, max<>{}) != 0) {  // anyone still has input
    std::ranges::fill(sent, 0);
    for (; i < n; ++i) {
      const auto d = static_cast<int>(pb.index[i] % P);
      if (sent[d] == k_bucket) break;
      const int s = start[d] + sent[d]++;
      asked[s] = pb.index[i] / P;
      reader[s] = i;
    }
    received = all_to_all(std::span<const int>(sent));
    all_to_all_v<std::int64_t>(asked, sent, start, served, received, start);
    for (int d = 0; d < P; ++d)  // answer in place, in the order asked
      for (int s = start[d]; s < start[d] + received[d]; ++s) served[s] = table[served[s]];
    all_to_all_v<std::int64_t>(served, received, start, answers, sent, start);
    for (int d = 0; d < P; ++d)
      for (int s = start[d]; s < start[d] + sent[d]; ++s) out[reader[s]] = answers[s];
  }
}

}  // namespace mailroom::apps::index_gather
