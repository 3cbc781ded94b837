// Permute-matrix, naive variant: the natural PGAS program, every access one completed MPI
// one-sided operation: an MPI_Put per row for its length at the new row's owner, then per nonzero
// an MPI_Get of its new column, an MPI_Fetch_and_op to claim a slot in its new row and an MPI_Put
// (two with values) to fill it.
#include "permute_matrix/permute_matrix.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace mailroom::apps::permute_matrix {

sparse_matrix naive(const problem& pb) {
  const sparse_matrix& a = pb.a;
  const int P = num_pes();
  const bool valued = transport::allreduce_max(a.has_values()) != 0;  // an empty PE has none
  const auto n = static_cast<std::size_t>(a.local_rows());
  std::vector<std::int64_t> ptr(n + 1);
  {
    transport::window lengths(ptr.data() + 1, n);  // collective, as is its end
    for (std::size_t l = 0; l < n; ++l)
      lengths.put(static_cast<int>(pb.row_perm[l] % P), pb.row_perm[l] / P, std::ssize(a.row(l)));
  }
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> cperm(pb.col_perm), fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<std::int64_t> vals(valued ? ptr.back() : 0);  // the doubles' bits
  {
    transport::window cperm_w(cperm.data(), cperm.size()), fill_w(fill.data(), n),
        cols_w(cols.data(), cols.size()), vals_w(vals.data(), vals.size());
    for (std::size_t l = 0; l < n; ++l)
      for (std::int64_t k = a.row_ptr()[l]; k < a.row_ptr()[l + 1]; ++k) {
        const std::int64_t j = a.col_idx()[k], r = pb.row_perm[l];
        const std::int64_t c = cperm_w.get(static_cast<int>(j % P), j / P);
        const auto owner = static_cast<int>(r % P);
        const auto at = static_cast<std::size_t>(fill_w.fetch_add(owner, r / P, 1));
        cols_w.put(owner, at, c);
        if (valued) vals_w.put(owner, at, std::bit_cast<std::int64_t>(a.values()[k]));
      }
  }
  std::vector<double> values(vals.size());
  std::ranges::transform(vals, values.begin(),
                         [](std::int64_t b) { return std::bit_cast<double>(b); });
  return {a.rows(), a.cols(), std::move(ptr), std::move(cols), std::move(values)};
}

}  // namespace mailroom::apps::permute_matrix
