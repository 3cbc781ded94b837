// SPDX-License-Identifier: MIT
// Transpose-matrix, BSP variant in the style of Bale's exstack: per-destination buckets of up to
// 1024 items, exchanged in MPI_Alltoallv supersteps; first the column counts, then the nonzeros.
#include "common/bsp.hpp"
#include "common/nonzero.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::transpose_matrix {

namespace {

template <bool Valued>
sparse_matrix transpose(const sparse_matrix& a) {
  const int P = num_pes();
  const std::int64_t nnz = a.local_nnz();
  std::vector<std::int64_t> ptr(sparse_matrix::local_rows(a.cols(), this_pe().rank(), P) + 1);
  std::vector<int> send_n(P);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(P) * k_bsp_bucket);
  std::int64_t k = 0;
  do {  // count the nonzeros of every column at the owner of that row of A^T
    std::ranges::fill(send_n, 0);
    for (; k < nnz; ++k) {
      const std::int64_t j = a.col_idx()[k];
      int& s = send_n[j % P];
      if (s == k_bsp_bucket) break;
      rows[j % P * k_bsp_bucket + s++] = j / P;
    }
    for (const std::int64_t r : superstep(rows, send_n)) ++ptr[r + 1];
  } while (all_reduce(std::int64_t{k < nnz}, max<>{}) != 0);  // any PE left?
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(Valued ? ptr.back() : 0);
  // A nonzero: its local row of A^T and its global column of A^T (the row of A).
  std::vector<nonzero<Valued>> out(static_cast<std::size_t>(P) * k_bsp_bucket);
  std::int64_t l = 0;  // the row of nonzero k
  k = 0;
  do {  // carry every nonzero to its row of A^T
    std::ranges::fill(send_n, 0);
    for (; k < nnz; ++k) {
      while (k == a.row_ptr()[l + 1]) ++l;  // skip empty rows
      const std::int64_t j = a.col_idx()[k];
      int& s = send_n[j % P];
      if (s == k_bsp_bucket) break;
      out[j % P * k_bsp_bucket + s++] = nonzero_of<Valued>(a, k, j / P, a.global_row(l));
    }
    for (const nonzero<Valued>& e : superstep(out, send_n))
      place(e, fill[e.row]++, cols.data(), vals.data());
  } while (all_reduce(std::int64_t{k < nnz}, max<>{}) != 0);
  return {a.cols(), a.rows(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace

sparse_matrix bsp(const sparse_matrix& a) {
  return any_values(a) ? transpose<true>(a) : transpose<false>(a);
}

}  // namespace mailroom::apps::transpose_matrix
