// SPDX-License-Identifier: MIT
// Transpose-matrix, conveyor variant: Bale's two hand-written push/pull/advance loops over
// mailroom::conveyor<T>, the first counting each column's nonzeros at the owner of that row of
// A^T, the second carrying every nonzero there.
#include "transpose_matrix/transpose_matrix.hpp"

#include <numeric>

namespace mailroom::apps::transpose_matrix {

sparse_matrix conveyor(const sparse_matrix& a) {
  struct entry {
    std::int64_t row, col;  // local row of A^T, global column of A^T (the row of A)
    double value;
  };
  const int P = num_pes();
  const bool valued = all_reduce(a.has_values(), max<>{}) != 0;  // an empty PE has none
  const std::int64_t nnz = a.local_nnz();
  std::vector<std::int64_t> ptr(sparse_matrix::local_rows(a.cols(), this_pe().rank(), P) + 1);
  pe from;
  {
    mailroom::conveyor<std::int64_t> count;
    std::int64_t k = 0, row = 0;
    while (count.advance(k == nnz)) {
      for (; k < nnz; ++k)
        if (!count.push(pe(a.col_idx()[k] % P), a.col_idx()[k] / P)) break;
      while (count.pull(from, row)) ++ptr[row + 1];
    }
  }
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(valued ? ptr.back() : 0);
  mailroom::conveyor<entry> place;
  std::int64_t k = 0, l = 0;  // the next nonzero to send, and its row
  entry e{};
  while (place.advance(k == nnz)) {
    for (; k < nnz; ++k) {
      while (k == a.row_ptr()[l + 1]) ++l;  // skip empty rows
      const std::int64_t j = a.col_idx()[k];
      if (!place.push(pe(j % P), {j / P, a.global_row(l), valued ? a.values()[k] : 0.0})) break;
    }
    while (place.pull(from, e)) {
      const std::int64_t at = fill[e.row]++;
      cols[at] = e.col;
      if (valued) vals[at] = e.value;
    }
  }
  return {a.cols(), a.rows(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::transpose_matrix
