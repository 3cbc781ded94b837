// SPDX-License-Identifier: MIT
// Triangles, selector variant: what the floor does, with the rows apart. For each nonzero L[i][j]
// (but the first of its row), row i's columns up to j go to j's owner as one variable-size
// message, straight from the matrix; its handler merges them with row j there, as the floor
// merges the two rows. Column j closes the message and stops the merge: every column of row j is
// below j. One message per nonzero, where the wedges variant sends one per wedge and searches.
#include "triangles/triangles.hpp"

#include <span>

namespace mailroom::apps::triangles {

std::int64_t selector(const sparse_matrix& l) {
  const int P = num_pes();
  std::int64_t hits = 0;
  actor prefixes{mailbox<span_of<std::int64_t>>([&](std::span<const std::int64_t> mine) {
    const std::int64_t j = mine.back();
    const auto* at = mine.data();
    for (const std::int64_t k : l.row(j / P)) {
      while (*at < k) ++at;
      hits += *at == k;
    }
  })};
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    for (std::size_t a = 1; a < row.size(); ++a) prefixes.send(pe(row[a] % P), row.first(a + 1));
  }
  prefixes.done();
  prefixes.wait();
  return all_reduce(hits);
}

}  // namespace mailroom::apps::triangles
