// SPDX-License-Identifier: MIT
// Triangles, naive variant: Bale's AGP program. For each nonzero L[i][j], the owner of row i reads
// row j from its owner one element at a time (MPI_Get, completed before the next) and merges it
// with its own row i. Timed with it: copying this PE's CSR arrays into the two windows.
#include "common/pgas.hpp"
#include "triangles/triangles.hpp"

namespace mailroom::apps::triangles {

std::int64_t naive(const sparse_matrix& l) {
  const int P = num_pes();
  const symmetric_scope scope;  // frees the arrays below on return
  auto offsets = symmetric_copy(l.row_ptr());
  auto cols = symmetric_copy(l.col_idx());
  barrier();
  std::int64_t hits = 0;
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    for (std::size_t a = 1; a < row.size(); ++a) {  // row[0]'s row has no column in row i
      const pe owner(row[a] % P);
      const auto lj = static_cast<std::size_t>(row[a] / P);
      auto mine = row.begin();  // row i is scanned once per row j, both being sorted
      for (auto c = offsets.get(owner, lj), end = offsets.get(owner, lj + 1); c < end; ++c) {
        const std::int64_t k = cols.get(owner, static_cast<std::size_t>(c));
        while (*mine < k) ++mine;  // stops at row[a] at the latest, as k < row[a]
        hits += *mine == k;
      }
    }
  }
  barrier();  // (nobody frees the arrays while another still reads them)
  return all_reduce(hits);
}

}  // namespace mailroom::apps::triangles
