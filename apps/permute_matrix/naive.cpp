// SPDX-License-Identifier: MIT
// Permute-matrix, naive variant: the natural PGAS program, every access one completed MPI
// one-sided operation: an MPI_Put per row for its length at the new row's owner, then per nonzero
// an MPI_Get of its new column, an MPI_Fetch_and_op to claim a slot in its new row and an MPI_Put
// (two with values) to fill it.
#include "common/pgas.hpp"
#include "permute_matrix/permute_matrix.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace mailroom::apps::permute_matrix {

sparse_matrix naive(const problem& pb) {
  const sparse_matrix& a = pb.a;
  const int P = num_pes();
  const bool valued = all_reduce(a.has_values(), max<>{});  // an empty PE has none
  const auto n = static_cast<std::size_t>(a.local_rows());
  const symmetric_scope scope;  // frees the arrays below on return
  std::vector<std::int64_t> ptr(n + 1);
  auto lengths = symmetric_copy(std::vector<std::int64_t>(n));
  barrier();
  for (std::size_t l = 0; l < n; ++l)
    lengths.put(pe(pb.row_perm[l] % P), static_cast<std::size_t>(pb.row_perm[l] / P),
                std::ssize(a.row(l)));
  barrier();
  std::copy(lengths.begin(), lengths.begin() + static_cast<std::ptrdiff_t>(n), ptr.begin() + 1);
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  auto cperm = symmetric_copy(pb.col_perm);
  auto fill = symmetric_copy(std::vector<std::int64_t>(ptr.begin(), ptr.end() - 1));
  auto cols = symmetric_copy(std::vector<std::int64_t>(static_cast<std::size_t>(ptr.back())));
  auto vals =
      symmetric_copy(std::vector<double>(valued ? static_cast<std::size_t>(ptr.back()) : 0));
  barrier();
  for (std::size_t l = 0; l < n; ++l)
    for (std::int64_t k = a.row_ptr()[l]; k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k], r = pb.row_perm[l];
      const std::int64_t c = cperm.get(pe(j % P), static_cast<std::size_t>(j / P));
      const pe owner(r % P);
      const auto at =
          static_cast<std::size_t>(fill.fetch_add(owner, static_cast<std::size_t>(r / P), 1));
      cols.put(owner, at, c);
      if (valued) vals.put(owner, at, a.values()[k]);
    }
  barrier();
  const auto nnz = static_cast<std::ptrdiff_t>(ptr.back());
  return {a.rows(),
          a.cols(),
          std::move(ptr),
          {cols.begin(), cols.begin() + nnz},
          valued ? std::vector<double>(vals.begin(), vals.begin() + nnz) : std::vector<double>()};
}

}  // namespace mailroom::apps::permute_matrix
