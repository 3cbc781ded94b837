// SPDX-License-Identifier: MIT
// Triangles, bulk-synchronous variant in the style of Bale's exstack push: for each nonzero
// L[i][j] and each column k < j of row i, the query (j, k) goes into the bucket for j's owner;
// a full bucket starts a superstep (MPI_Alltoallv) after which every owner looks k up in row j.
#include "triangles/triangles.hpp"

#include <algorithm>

namespace mailroom::apps::triangles {

std::int64_t bsp(const sparse_matrix& l) {
  struct query {
    std::int64_t j, k;  // row j's local index on its owner; column k
  };
  constexpr int k_bucket = 1024;  // queries per destination per superstep
  const int P = num_pes();
  std::vector<query> out(static_cast<std::size_t>(P) * k_bucket), in(out.size());
  std::vector<int> sent(P), received(P), start(P);
  for (int d = 0; d < P; ++d) start[d] = d * k_bucket;
  std::int64_t hits = 0;
  auto superstep = [&](bool done) {  // collective; true while some PE has queries left
    received = all_to_all(std::span<const int>(sent));
    all_to_all_v<query>(out, sent, start, in, received, start);
    for (int d = 0; d < P; ++d)
      for (int s = start[d]; s < start[d] + received[d]; ++s)
        hits += std::ranges::binary_search(l.row(in[s].j), in[s].k);
    std::ranges::fill(sent, 0);
    return all_reduce(std::int64_t{done}, min<>{}) == 0;
  };
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    for (std::size_t a = 1; a < row.size(); ++a) {
      const int d = static_cast<int>(row[a] % P);
      for (std::size_t b = 0; b < a; ++b) {
        if (sent[d] == k_bucket) superstep(false);
        out[static_cast<std::size_t>(start[d] + sent[d]++)] = {row[a] / P, row[b]};
      }
    }
  }
  while (superstep(true)) {
  }
  return all_reduce(hits);
}

}  // namespace mailroom::apps::triangles
