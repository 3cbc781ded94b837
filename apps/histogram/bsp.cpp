// SPDX-License-Identifier: MIT
// Histogram, BSP variant in the style of Bale's exstack: fill a bucket of slots per destination
// until one is full, exchange all buckets in an MPI_Alltoallv superstep, apply, repeat.
#include "histogram/histogram.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::histogram {

void bsp(const problem& pb, symmetric_array<std::int64_t> counts) {
  constexpr std::size_t k_bucket = 1024;  // slots per destination per superstep
  const int P = num_pes();
  std::vector<std::int64_t> out(P * k_bucket), in;
  std::vector<int> send_n(P), send_at(P), recv_n(P), recv_at(P);
  for (int p = 0; p < P; ++p) send_at[p] = p * static_cast<int>(k_bucket);
  std::size_t i = 0;
  do {
    std::fill(send_n.begin(), send_n.end(), 0);
    for (; i < pb.index.size(); ++i) {
      const std::int64_t g = pb.index[i];
      int& n = send_n[g % P];
      if (n == static_cast<int>(k_bucket)) break;
      out[g % P * k_bucket + n++] = g / P;
    }
    recv_n = all_to_all(std::span<const int>(send_n));
    std::exclusive_scan(recv_n.begin(), recv_n.end(), recv_at.begin(), 0);
    in.resize(recv_at.back() + recv_n.back());
    all_to_all_v<std::int64_t>(out, send_n, send_at, in, recv_n, recv_at);
    for (const std::int64_t slot : in) counts[slot] += 1;
  } while (all_reduce(std::int64_t{i < pb.index.size()}, max<>{}) != 0);  // any PE left?
}

}  // namespace mailroom::apps::histogram
