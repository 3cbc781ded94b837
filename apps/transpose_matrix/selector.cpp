// SPDX-License-Identifier: MIT
// Transpose-matrix, selector variant: an actor carries every nonzero to the PE that owns its row
// of A^T, which sorts what arrived into rows once all is in (the floor's two loops). Bale's
// variants send each column's count first, then the nonzeros into rows laid out by the counts.
#include "common/nonzero.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

namespace mailroom::apps::transpose_matrix {
namespace {

template <bool Valued>
sparse_matrix transpose(const sparse_matrix& a) {
  const int P = num_pes();
  // Every nonzero goes once, as {its local row of A^T, its global column of A^T (the row of A)},
  // and its owner sorts what arrived into rows as the floor does (a count per row, then a
  // placing pass): no message per nonzero for the counts.
  std::vector<nonzero<Valued>> got;
  got.reserve(static_cast<std::size_t>(a.local_nnz()));  // (about as many arrive as leave)
  actor place_at{mailbox<nonzero<Valued>>([&](nonzero<Valued> e) { got.push_back(e); })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l], i = a.global_row(l); k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      place_at.send(pe(j % P), nonzero_of<Valued>(a, k, j / P, i));
    }
  place_at.done();
  place_at.wait();
  return rows_of(a.cols(), a.rows(), sparse_matrix::local_rows(a.cols(), this_pe().rank(), P), got);
}

}  // namespace

sparse_matrix selector(const sparse_matrix& a) {
  return any_values(a) ? transpose<true>(a) : transpose<false>(a);
}

}  // namespace mailroom::apps::transpose_matrix
