// SPDX-License-Identifier: MIT
// Permute-matrix, conveyor variant: Bale's hand-written push/pull/advance loops over
// mailroom::conveyor<T>: row lengths to the owners of the new rows, then every nonzero to the
// owner of its column's permutation entry, which forwards it with its new column to the new row.
// (Bale places the nonzeros first and then fetches their new columns by an index-gather, three
// messages per nonzero; going by way of the permutation entry's owner takes two, in every variant.)
#include "common/nonzero.hpp"
#include "permute_matrix/permute_matrix.hpp"

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
  std::vector<double> vals(Valued ? ptr.back() : 0);
  mailroom::conveyor<entry> lookups, stores;
  std::int64_t k = 0, l = 0;  // the next nonzero to send, and its row
  bool more = true;           // lookups may still arrive here; the stores end once none can
  entry e{};
  while (more = more && lookups.advance(k == nnz), more | stores.advance(!more)) {
    for (; k < nnz; ++k) {
      while (k == a.row_ptr()[l + 1]) ++l;  // skip empty rows
      const std::int64_t j = a.col_idx()[k];
      if (!lookups.push(pe(j % P), nonzero_of<Valued>(a, k, pb.row_perm[l], j / P))) break;
    }
    while (lookups.pull(from, e)) {
      if (!stores.push(pe(e.row % P), rewritten(e, e.row / P, pb.col_perm[e.col]))) {
        lookups.unpull();  // forward it once the store fits
        break;
      }
    }
    while (stores.pull(from, e)) place(e, fill[e.row]++, cols.data(), vals.data());
  }
  return {a.rows(), a.cols(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace

sparse_matrix conveyor(const problem& pb) {
  return any_values(pb.a) ? permute<true>(pb) : permute<false>(pb);
}

}  // namespace mailroom::apps::permute_matrix
