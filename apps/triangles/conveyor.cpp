// SPDX-License-Identifier: MIT
// Triangles, conveyor variant: Bale's push loop over one mailroom::conveyor<T>. For each nonzero
// L[i][j] and each column k < j of row i, the query {j, k} goes to j's owner, which counts it
// when k is in row j; a full buffer makes the pusher pull and advance, then retry.
#include "triangles/triangles.hpp"

#include <algorithm>

namespace mailroom::apps::triangles {

std::int64_t conveyor(const sparse_matrix& l) {
  struct query {
    std::int64_t j, k;  // row j's local index on its owner; column k
  };
  const int P = num_pes();
  mailroom::conveyor<query> queries;
  std::int64_t hits = 0;
  auto serve = [&](bool done) {  // false once every PE is done and every query here counted
    query q{};
    pe from;
    while (queries.pull(from, q)) hits += std::ranges::binary_search(l.row(q.j), q.k);
    return queries.advance(done);
  };
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    for (std::size_t a = 1; a < row.size(); ++a) {
      const pe owner(row[a] % P);
      const std::int64_t j = row[a] / P;
      for (std::size_t b = 0; b < a; ++b)
        while (!queries.push(owner, {j, row[b]})) serve(false);
    }
  }
  while (serve(true)) {
  }
  return all_reduce(hits);
}

}  // namespace mailroom::apps::triangles
