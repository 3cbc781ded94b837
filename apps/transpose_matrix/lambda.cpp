// SPDX-License-Identifier: MIT
// Transpose-matrix, lambda variant: closures capturing a symmetric array count each column's
// nonzeros on the owner of that row of A^T, then drop every nonzero into its row there (reaching
// the arrays through one symmetric handle, so that the closure has 4 words).
#include "transpose_matrix/transpose_matrix.hpp"

#include <numeric>

namespace mailroom::apps::transpose_matrix {

sparse_matrix lambda(const sparse_matrix& a) {
  const int P = num_pes();
  const bool valued = all_reduce(a.has_values(), max<>{}) != 0;  // an empty PE has none
  const std::int64_t n = sparse_matrix::local_rows(a.cols(), this_pe().rank(), P);
  symmetric_scope scope;  // frees the symmetric arrays below on return
  // Row r's count lands in ptr[r + 2]; after the scan ptr[r + 1] is where row r starts and
  // serves as its cursor, so that once every nonzero is in, ptr[0..n] is A^T's row_ptr.
  symmetric_array<std::int64_t> ptr(all_reduce(n, max<>{}) + 2);
  actor<> count;
  for (const std::int64_t j : a.col_idx())
    count.send(pe(j % P), [ptr, r = j / P] { ++ptr[r + 2]; });
  count.done();
  count.wait();
  std::inclusive_scan(ptr.begin(), ptr.begin() + n + 2, ptr.begin());
  std::vector<std::int64_t> cols(ptr[n + 1]);
  std::vector<double> vals(valued ? ptr[n + 1] : 0);
  struct arrays {  // this PE's, behind one symmetric handle: a closure captures one word for all
    std::int64_t *ptr, *cols;
    double* vals;  // null for a pattern matrix
  };
  const symmetric<arrays> here({ptr.data(), cols.data(), valued ? vals.data() : nullptr});
  actor<> place;
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l], i = a.global_row(l); k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      const double v = valued ? a.values()[k] : 0.0;
      place.send(pe(j % P), [=, r = j / P] {
        const std::int64_t at = here->ptr[r + 1]++;
        here->cols[at] = i;
        if (here->vals != nullptr) here->vals[at] = v;
      });
    }
  place.done();
  place.wait();
  return {a.cols(), a.rows(), {ptr.begin(), ptr.begin() + n + 1}, std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::transpose_matrix
