// SPDX-License-Identifier: MIT
// Transpose-matrix, local variant: the floor. The same algorithm on this PE's share alone: its rows
// as a matrix of their own (columns renumbered), transposed by the same two loops with every remote
// access made local: count each column's nonzeros, then drop every nonzero into its row of A^T.
#include "transpose_matrix/transpose_matrix.hpp"

#include <numeric>

namespace mailroom::apps::transpose_matrix {

sparse_matrix::serial local(const sparse_matrix::serial& a) {
  const bool valued = !a.values.empty();
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(a.cols) + 1);
  for (const std::int64_t j : a.col_idx) ++ptr[j + 1];
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(valued ? ptr.back() : 0);
  for (std::int64_t l = 0; l < a.rows; ++l)
    for (std::int64_t k = a.row_ptr[l]; k < a.row_ptr[l + 1]; ++k) {
      const std::int64_t at = fill[a.col_idx[k]]++;
      cols[at] = l;
      if (valued) vals[at] = a.values[k];
    }
  return {a.cols, a.rows, std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::transpose_matrix
