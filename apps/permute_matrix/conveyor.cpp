// SPDX-License-Identifier: MIT
// Permute-matrix, conveyor variant: Bale's hand-written push/pull/advance loops over
// mailroom::conveyor<T>: row lengths to the owners of the new rows, then every nonzero to the
// owner of its column's permutation entry, which forwards it with its new column to the new row.
// (Bale places the nonzeros first and then fetches their new columns by an index-gather, three
// messages per nonzero; going by way of the permutation entry's owner takes two, in every variant.)
#include "permute_matrix/permute_matrix.hpp"

#include <numeric>

namespace mailroom::apps::permute_matrix {

sparse_matrix conveyor(const problem& pb) {
  struct length {
    std::int64_t row, n;  // local row of B, its nonzeros
  };
  struct entry {
    std::int64_t row, col;  // global row of B and local index of col_perm; then local row of B
    double value;           // and new column
  };
  const sparse_matrix& a = pb.a;
  const int P = num_pes();
  const bool valued = all_reduce(a.has_values(), max<>{}) != 0;  // an empty PE has none
  const std::int64_t n = a.local_rows(), nnz = a.local_nnz();
  std::vector<std::int64_t> ptr(n + 1);
  pe from;
  {
    mailroom::conveyor<length> lengths;
    std::int64_t l = 0;
    length m{};
    while (lengths.advance(l == n)) {
      for (; l < n; ++l)
        if (!lengths.push(pe(pb.row_perm[l] % P), {pb.row_perm[l] / P, std::ssize(a.row(l))}))
          break;
      while (lengths.pull(from, m)) ptr[m.row + 1] = m.n;
    }
  }
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(valued ? ptr.back() : 0);
  mailroom::conveyor<entry> lookups, stores;
  std::int64_t k = 0, l = 0;  // the next nonzero to send, and its row
  bool more = true;           // lookups may still arrive here; the stores end once none can
  entry e{};
  while (more = more && lookups.advance(k == nnz), more | stores.advance(!more)) {
    for (; k < nnz; ++k) {
      while (k == a.row_ptr()[l + 1]) ++l;  // skip empty rows
      const std::int64_t j = a.col_idx()[k];
      if (!lookups.push(pe(j % P), {pb.row_perm[l], j / P, valued ? a.values()[k] : 0.0})) break;
    }
    while (lookups.pull(from, e)) {
      if (!stores.push(pe(e.row % P), {e.row / P, pb.col_perm[e.col], e.value})) {
        lookups.unpull();  // forward it once the store fits
        break;
      }
    }
    while (stores.pull(from, e)) {
      const std::int64_t at = fill[e.row]++;
      cols[at] = e.col;
      if (valued) vals[at] = e.value;
    }
  }
  return {a.rows(), a.cols(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::permute_matrix
