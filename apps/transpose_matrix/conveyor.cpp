// SPDX-License-Identifier: MIT
// Transpose-matrix, conveyor variant: Bale's two hand-written push/pull/advance loops over
// mailroom::conveyor<T>, the first counting each column's nonzeros at the owner of that row of
// A^T, the second carrying every nonzero there.
#include "common/nonzero.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

#include <numeric>

namespace mailroom::apps::transpose_matrix {
namespace {

template <bool Valued>
sparse_matrix transpose(const sparse_matrix& a) {
  const int P = num_pes();
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
  std::vector<double> vals(Valued ? ptr.back() : 0);
  // A nonzero: its local row of A^T and its global column of A^T (the row of A).
  mailroom::conveyor<nonzero<Valued>> place_at;
  std::int64_t k = 0, l = 0;  // the next nonzero to send, and its row
  nonzero<Valued> e{};
  while (place_at.advance(k == nnz)) {
    for (; k < nnz; ++k) {
      while (k == a.row_ptr()[l + 1]) ++l;  // skip empty rows
      const std::int64_t j = a.col_idx()[k];
      if (!place_at.push(pe(j % P), nonzero_of<Valued>(a, k, j / P, a.global_row(l)))) break;
    }
    while (place_at.pull(from, e)) place(e, fill[e.row]++, cols.data(), vals.data());
  }
  return {a.cols(), a.rows(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace

sparse_matrix conveyor(const sparse_matrix& a) {
  return any_values(a) ? transpose<true>(a) : transpose<false>(a);
}

}  // namespace mailroom::apps::transpose_matrix
