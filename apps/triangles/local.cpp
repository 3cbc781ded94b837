// SPDX-License-Identifier: MIT
// Triangles, local variant: the floor. The same algorithm on this PE's share: for each nonzero
// L[i][j] of its rows, naive's merge of row j into row i, row j read from a copy made before
// timing. No communication; this PE's count only. The floor merges: of the variants' two
// methods it is the cheaper (the push variants' binary search per wedge took 1.7-2.4x its time).
#include "triangles/triangles.hpp"

#include <algorithm>
#include <span>

namespace mailroom::apps::triangles {

std::int64_t local(const sparse_matrix& l, const rows_needed& copy) {
  std::int64_t hits = 0;
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    const std::int64_t first = l.row_ptr()[r];
    for (std::size_t a = 1; a < row.size(); ++a) {
      const std::int64_t j = copy.copy_of[first + a];
      const std::span<const std::int64_t> row_j(copy.col_idx.data() + copy.row_ptr[j],
                                                copy.col_idx.data() + copy.row_ptr[j + 1]);
      auto mine = row.begin();
      for (const std::int64_t k : row_j) {
        while (*mine < k) ++mine;
        hits += *mine == k;
      }
    }
  }
  return hits;
}

}  // namespace mailroom::apps::triangles
