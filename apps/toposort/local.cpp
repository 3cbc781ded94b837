// SPDX-License-Identifier: MIT
// Toposort, local variant: the floor. No PE's share stands alone (a pivot on one PE frees rows on
// every other), so the floor is the serial algorithm over the whole matrix on one PE, its time
// divided by P: naive's loop with every access local. A pivot takes the next position from the
// end and removes its column from the column's other rows; a row left with one column is next.
#include "toposort/toposort.hpp"

#include <numeric>
#include <utility>

namespace mailroom::apps::toposort {

result local(const sparse_matrix::serial& a, const sparse_matrix::serial& at) {
  const auto n = static_cast<std::size_t>(a.rows);
  result res{std::vector<std::int64_t>(n), std::vector<std::int64_t>(at.rows)};
  std::vector<std::int64_t> left(n), sum(n);  // per row: nonzeros left, the sum of their columns
  std::vector<std::pair<std::int64_t, std::int64_t>> pivots;  // (row, its last column)
  for (std::size_t i = 0; i < n; ++i) {
    left[i] = a.row_ptr[i + 1] - a.row_ptr[i];
    sum[i] = std::accumulate(a.col_idx.begin() + a.row_ptr[i], a.col_idx.begin() + a.row_ptr[i + 1],
                             std::int64_t{0});
    if (left[i] == 1) pivots.emplace_back(i, sum[i]);
  }
  std::int64_t next = a.rows;  // positions are taken from the end
  while (!pivots.empty()) {
    const auto [r, c] = pivots.back();
    pivots.pop_back();
    res.row_perm[r] = res.col_perm[c] = --next;
    for (std::int64_t k = at.row_ptr[c]; k < at.row_ptr[c + 1]; ++k) {
      const std::int64_t s = at.col_idx[k];  // row s has column c
      if (s == r) continue;
      sum[s] -= c;
      if (--left[s] == 1) pivots.emplace_back(s, sum[s]);
    }
  }
  return res;
}

}  // namespace mailroom::apps::toposort
