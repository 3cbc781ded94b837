// Transpose-matrix, naive variant: the natural PGAS program, every access one completed MPI
// one-sided operation: an MPI_Accumulate per nonzero to count the columns, then per nonzero an
// MPI_Fetch_and_op to claim a slot in its row of A^T and an MPI_Put (two with values) to fill it.
#include "transpose_matrix/transpose_matrix.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace mailroom::apps::transpose_matrix {

sparse_matrix naive(const sparse_matrix& a) {
  const int P = num_pes();
  const bool valued = transport::allreduce_max(a.has_values()) != 0;  // an empty PE has none
  const auto n = static_cast<std::size_t>(sparse_matrix::local_rows(a.cols(), this_pe().rank(), P));
  std::vector<std::int64_t> ptr(n + 1);
  {
    transport::window count(ptr.data() + 1, n);  // collective, as is its end
    for (const std::int64_t j : a.col_idx()) count.add(static_cast<int>(j % P), j / P, 1);
  }
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<std::int64_t> vals(valued ? ptr.back() : 0);  // the doubles' bits
  {
    transport::window fill_w(fill.data(), n), cols_w(cols.data(), cols.size()),
        vals_w(vals.data(), vals.size());
    for (std::int64_t l = 0; l < a.local_rows(); ++l)
      for (std::int64_t k = a.row_ptr()[l]; k < a.row_ptr()[l + 1]; ++k) {
        const std::int64_t j = a.col_idx()[k];
        const auto owner = static_cast<int>(j % P);
        const auto at = static_cast<std::size_t>(fill_w.fetch_add(owner, j / P, 1));
        cols_w.put(owner, at, a.global_row(l));
        if (valued) vals_w.put(owner, at, std::bit_cast<std::int64_t>(a.values()[k]));
      }
  }
  std::vector<double> values(vals.size());
  std::transform(vals.begin(), vals.end(), values.begin(),
                 [](std::int64_t b) { return std::bit_cast<double>(b); });
  return {a.cols(), a.rows(), std::move(ptr), std::move(cols), std::move(values)};
}

}  // namespace mailroom::apps::transpose_matrix
