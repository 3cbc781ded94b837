// SPDX-License-Identifier: MIT
// Triangles, wedges variant: Bale's push form with typed messages. For each nonzero L[i][j]
// and each column k < j of row i, the query {j, k} goes to j's owner, whose handler (inlined
// into the delivery loop) counts it when k is in row j (a binary search per wedge; the selector
// variant sends the columns at once and merges, as the floor does).
#include "triangles/triangles.hpp"

#include <algorithm>

namespace mailroom::apps::triangles {

std::int64_t wedges(const sparse_matrix& l) {
  struct query {
    std::int64_t j, k;  // row j's local index on its owner; column k
  };
  const int P = num_pes();
  std::int64_t hits = 0;
  actor queries{
      mailbox<query>([&](query q) { hits += std::ranges::binary_search(l.row(q.j), q.k); })};
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    for (std::size_t a = 1; a < row.size(); ++a) {
      const pe owner(row[a] % P);
      const std::int64_t j = row[a] / P;
      for (std::size_t b = 0; b < a; ++b) queries.send(owner, query{j, row[b]});
    }
  }
  queries.done();
  queries.wait();
  return all_reduce(hits);
}

}  // namespace mailroom::apps::triangles
