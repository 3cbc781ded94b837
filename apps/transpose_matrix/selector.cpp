// SPDX-License-Identifier: MIT
// Transpose-matrix, selector variant: one actor counts the nonzeros of each column on the PE that
// owns that row of A^T, a second one carries every nonzero there and drops it into its row.
#include "transpose_matrix/transpose_matrix.hpp"

#include <numeric>

namespace mailroom::apps::transpose_matrix {

sparse_matrix selector(const sparse_matrix& a) {
  struct entry {
    std::int64_t row, col;  // local row of A^T, global column of A^T (the row of A)
    double value;
  };
  const int P = num_pes();
  const bool valued = all_reduce(a.has_values(), max<>{}) != 0;  // an empty PE has none
  std::vector<std::int64_t> ptr(sparse_matrix::local_rows(a.cols(), this_pe().rank(), P) + 1);
  actor count{mailbox<std::int64_t>([&](std::int64_t row) { ++ptr[row + 1]; })};
  for (const std::int64_t j : a.col_idx()) count.send(pe(j % P), j / P);
  count.done();
  count.wait();
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(valued ? ptr.back() : 0);
  actor place{mailbox<entry>([&](entry e) {
    const std::int64_t at = fill[e.row]++;
    cols[at] = e.col;
    if (valued) vals[at] = e.value;
  })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l], i = a.global_row(l); k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      place.send(pe(j % P), entry{j / P, i, valued ? a.values()[k] : 0.0});
    }
  place.done();
  place.wait();
  return {a.cols(), a.rows(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::transpose_matrix
