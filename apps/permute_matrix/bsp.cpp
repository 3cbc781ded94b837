// SPDX-License-Identifier: MIT
// Permute-matrix, BSP variant in the style of Bale's exstack: per-destination buckets of up to
// 1024 items exchanged in MPI_Alltoallv supersteps; first the row lengths, then the nonzeros,
// each superstep taking them to their column permutation's owner and on to their new row.
#include "common/bsp.hpp"
#include "common/nonzero.hpp"
#include "permute_matrix/permute_matrix.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::permute_matrix {

namespace {

template <bool Valued>
sparse_matrix permute(const problem& pb) {
  struct length {
    std::int64_t row, n;  // local row of B, its nonzeros
  };
  // A nonzero: global row of B and local index of col_perm; then local row of B and new column.
  using entry = nonzero<Valued>;
  const sparse_matrix& a = pb.a;
  const int P = num_pes();
  const std::int64_t n = a.local_rows(), nnz = a.local_nnz();
  std::vector<std::int64_t> ptr(n + 1);
  std::vector<int> send_n(P), buckets(P), forward_n(P), forward_at(P);
  for (int d = 0; d < P; ++d) buckets[d] = d * k_bsp_bucket;
  std::vector<length> lengths(static_cast<std::size_t>(P) * k_bsp_bucket);
  std::int64_t l = 0;
  do {  // every row's length to the owner of its new row
    std::ranges::fill(send_n, 0);
    for (; l < n; ++l) {
      const auto d = static_cast<int>(pb.row_perm[l] % P);
      if (send_n[d] == k_bsp_bucket) break;
      lengths[buckets[d] + send_n[d]++] = {pb.row_perm[l] / P, std::ssize(a.row(l))};
    }
    for (const length& m : superstep(lengths, send_n, buckets)) ptr[m.row + 1] = m.n;
  } while (all_reduce(std::int64_t{l < n}, max<>{}) != 0);  // any PE left?
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(Valued ? ptr.back() : 0);
  std::vector<entry> out(static_cast<std::size_t>(P) * k_bsp_bucket), forward;
  std::int64_t k = 0;
  l = 0;  // the row of nonzero k
  do {
    std::ranges::fill(send_n, 0);
    for (; k < nnz; ++k) {                  // to the owner of the column's permutation entry
      while (k == a.row_ptr()[l + 1]) ++l;  // skip empty rows
      const std::int64_t j = a.col_idx()[k];
      const auto d = static_cast<int>(j % P);
      if (send_n[d] == k_bsp_bucket) break;
      out[buckets[d] + send_n[d]++] = nonzero_of<Valued>(a, k, pb.row_perm[l], j / P);
    }
    const std::vector<entry> asked = superstep(out, send_n, buckets);
    std::ranges::fill(forward_n, 0);  // then, with the new column, on to the new row's owner
    for (const entry& e : asked) ++forward_n[e.row % P];
    std::exclusive_scan(forward_n.begin(), forward_n.end(), forward_at.begin(), 0);
    forward.resize(asked.size());
    std::ranges::fill(forward_n, 0);
    for (const entry& e : asked) {
      const auto d = static_cast<int>(e.row % P);
      forward[forward_at[d] + forward_n[d]++] = rewritten(e, e.row / P, pb.col_perm[e.col]);
    }
    for (const entry& e : superstep(forward, forward_n, forward_at))
      place(e, fill[e.row]++, cols.data(), vals.data());
  } while (all_reduce(std::int64_t{k < nnz}, max<>{}) != 0);
  return {a.rows(), a.cols(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace

sparse_matrix bsp(const problem& pb) {
  return any_values(pb.a) ? permute<true>(pb) : permute<false>(pb);
}

}  // namespace mailroom::apps::permute_matrix
