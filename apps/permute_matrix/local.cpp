// SPDX-License-Identifier: MIT
// Permute-matrix, local variant: the floor. This PE's rows as a matrix of their own, permuted by
// the same loops with every remote access made local: each row's length to its new row, then each
// nonzero to its new row with its new column looked up; then rows are sorted, as the others' are.
#include "permute_matrix/permute_matrix.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::permute_matrix {

sparse_matrix::serial local(const local_problem& lp) {
  const sparse_matrix::serial& a = lp.a;
  const auto n = static_cast<std::size_t>(a.rows);
  const bool valued = !a.values.empty();
  std::vector<std::int64_t> ptr(n + 1);
  for (std::size_t l = 0; l < n; ++l) ptr[lp.row_perm[l] + 1] = a.row_ptr[l + 1] - a.row_ptr[l];
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(valued ? ptr.back() : 0);
  for (std::size_t l = 0; l < n; ++l)
    for (std::int64_t k = a.row_ptr[l]; k < a.row_ptr[l + 1]; ++k) {
      const std::int64_t at = fill[lp.row_perm[l]]++;
      cols[at] = lp.col_perm[a.col_idx[k]];
      if (valued) vals[at] = a.values[k];
    }
  std::vector<std::pair<std::int64_t, double>> row;  // (the constructor's sort, for values)
  for (std::size_t r = 0; r < n; ++r) {
    const auto b = cols.begin() + ptr[r], e = cols.begin() + ptr[r + 1];
    if (std::is_sorted(b, e)) continue;
    if (!valued) {
      std::sort(b, e);
      continue;
    }
    row.clear();
    for (std::int64_t k = ptr[r]; k < ptr[r + 1]; ++k) row.emplace_back(cols[k], vals[k]);
    std::ranges::sort(row, {}, &std::pair<std::int64_t, double>::first);
    for (std::int64_t k = ptr[r]; k < ptr[r + 1]; ++k)
      std::tie(cols[k], vals[k]) = row[static_cast<std::size_t>(k - ptr[r])];
  }
  return {a.rows, a.cols, std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::permute_matrix
