// SPDX-License-Identifier: MIT
// Transpose-matrix, selector variant: one actor counts the nonzeros of each column on the PE that
// owns that row of A^T, a second one carries every nonzero there and drops it into its row.
#include "common/nonzero.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

#include <numeric>

namespace mailroom::apps::transpose_matrix {
namespace {

template <bool Valued>
sparse_matrix transpose(const sparse_matrix& a) {
  const int P = num_pes();
  std::vector<std::int64_t> ptr(sparse_matrix::local_rows(a.cols(), this_pe().rank(), P) + 1);
  actor count{mailbox<std::int64_t>([&](std::int64_t row) { ++ptr[row + 1]; })};
  for (const std::int64_t j : a.col_idx()) count.send(pe(j % P), j / P);
  count.done();
  count.wait();
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(Valued ? ptr.back() : 0);
  // A nonzero: its local row of A^T and its global column of A^T (the row of A).
  actor place_at{
      mailbox<nonzero<Valued>>([&](nonzero<Valued> e) { place(e, fill[e.row]++, cols, vals); })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l], i = a.global_row(l); k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      place_at.send(pe(j % P), nonzero_of<Valued>(a, k, j / P, i));
    }
  place_at.done();
  place_at.wait();
  return {a.cols(), a.rows(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace

sparse_matrix selector(const sparse_matrix& a) {
  return any_values(a) ? transpose<true>(a) : transpose<false>(a);
}

}  // namespace mailroom::apps::transpose_matrix
