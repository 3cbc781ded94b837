// SPDX-License-Identifier: MIT
// Transpose-matrix, lambda variant: a closure carries every nonzero to the PE that owns its row of
// A^T and appends it to that PE's arrivals (reached through one symmetric handle), which are
// sorted into rows once all is in, as the selector variant does.
#include "common/nonzero.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

namespace mailroom::apps::transpose_matrix {
namespace {

template <bool Valued>
sparse_matrix transpose(const sparse_matrix& a) {
  const int P = num_pes();
  // {its local row of A^T, its global column of A^T (the row of A)} per nonzero that arrived.
  std::vector<nonzero<Valued>> got;
  got.reserve(static_cast<std::size_t>(a.local_nnz()));  // (about as many arrive as leave)
  symmetric_scope scope;                                 // frees `here` on return
  const symmetric<std::vector<nonzero<Valued>>*> here(&got);
  actor<> place_at;
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l], i = a.global_row(l); k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      place_at.send(pe(j % P),
                    [here, e = nonzero_of<Valued>(a, k, j / P, i)] { (*here)->push_back(e); });
    }
  place_at.done();
  place_at.wait();
  return rows_of(a.cols(), a.rows(), sparse_matrix::local_rows(a.cols(), this_pe().rank(), P), got);
}

}  // namespace

sparse_matrix lambda(const sparse_matrix& a) {
  return any_values(a) ? transpose<true>(a) : transpose<false>(a);
}

}  // namespace mailroom::apps::transpose_matrix
