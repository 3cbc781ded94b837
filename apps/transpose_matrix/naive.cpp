// SPDX-License-Identifier: MIT
// Transpose-matrix, naive variant: the natural PGAS program, every access one completed MPI
// one-sided operation: an MPI_Accumulate per nonzero to count the columns, then per nonzero an
// MPI_Fetch_and_op to claim a slot in its row of A^T and an MPI_Put (two with values) to fill it.
#include "common/pgas.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace mailroom::apps::transpose_matrix {

sparse_matrix naive(const sparse_matrix& a) {
  const int P = num_pes();
  const bool valued = all_reduce(a.has_values(), max<>{});  // an empty PE has none
  const auto n = static_cast<std::size_t>(sparse_matrix::local_rows(a.cols(), this_pe().rank(), P));
  const symmetric_scope scope;  // frees the arrays below on return
  std::vector<std::int64_t> ptr(n + 1);
  auto count = symmetric_copy(std::vector<std::int64_t>(n));
  barrier();
  for (const std::int64_t j : a.col_idx()) count.add(pe(j % P), static_cast<std::size_t>(j / P), 1);
  barrier();
  std::copy(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(n), ptr.begin() + 1);
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  auto fill = symmetric_copy(std::vector<std::int64_t>(ptr.begin(), ptr.end() - 1));
  auto cols = symmetric_copy(std::vector<std::int64_t>(static_cast<std::size_t>(ptr.back())));
  auto vals =
      symmetric_copy(std::vector<double>(valued ? static_cast<std::size_t>(ptr.back()) : 0));
  barrier();
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l]; k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      const pe owner(j % P);
      const auto at =
          static_cast<std::size_t>(fill.fetch_add(owner, static_cast<std::size_t>(j / P), 1));
      cols.put(owner, at, a.global_row(l));
      if (valued) vals.put(owner, at, a.values()[k]);
    }
  barrier();
  const auto nnz = static_cast<std::ptrdiff_t>(ptr.back());
  return {a.cols(),
          a.rows(),
          std::move(ptr),
          {cols.begin(), cols.begin() + nnz},
          valued ? std::vector<double>(vals.begin(), vals.begin() + nnz) : std::vector<double>()};
}

}  // namespace mailroom::apps::transpose_matrix
