// SPDX-License-Identifier: MIT
// Toposort, naive variant: Bale's AGP program on MPI one-sided atomics. A pivot takes the next
// position from the end with a fetch-and-add on one global counter, reads its column's rows from
// the owner of the transpose, and removes the column from each of them; the PE that leaves a row
// with one nonzero pivots that row next. No levels and no barriers: every PE works until it holds
// no pivot.
#include "common/pgas.hpp"
#include "toposort/toposort.hpp"

#include <numeric>

namespace mailroom::apps::toposort {

result naive(const sparse_matrix& a, const sparse_matrix& at) {
  const int P = num_pes();
  const std::int64_t n = a.rows(), lr = a.local_rows();
  result res{std::vector<std::int64_t>(lr), std::vector<std::int64_t>(at.local_rows())};
  // Per local row l: rows[2l] nonzeros left, rows[2l+1] the sum of their columns (once one is
  // left, the sum is its column).
  std::vector<std::int64_t> rows(2 * lr), ptr(at.row_ptr()), idx(at.col_idx()), next{0};
  std::vector<std::pair<std::int64_t, std::int64_t>> pivots;  // (global row, its last column)
  for (std::int64_t l = 0; l < lr; ++l) {
    const auto cols = a.row(l);
    rows[2 * l] = std::ssize(cols);
    rows[2 * l + 1] = std::accumulate(cols.begin(), cols.end(), std::int64_t{0});
    if (cols.size() == 1) pivots.emplace_back(a.global_row(l), cols[0]);
  }
  const symmetric_scope scope;  // frees the arrays below on return
  auto left = symmetric_copy(rows), col_ptr = symmetric_copy(ptr), col_rows = symmetric_copy(idx),
       rperm = symmetric_copy(res.row_perm), cperm = symmetric_copy(res.col_perm),
       counter = symmetric_copy(next);
  barrier();
  while (!pivots.empty()) {
    const auto [r, c] = pivots.back();
    pivots.pop_back();
    const std::int64_t pos = n - 1 - counter.fetch_add(pe(0), 0, 1);
    rperm.put(pe(r % P), static_cast<std::size_t>(r / P), pos);
    cperm.put(pe(c % P), static_cast<std::size_t>(c / P), pos);
    const pe q(c % P);  // column c is row c / P of the transpose there
    const auto lc = static_cast<std::size_t>(c / P);
    const std::int64_t end = col_ptr.get(q, lc + 1);
    for (std::int64_t k = col_ptr.get(q, lc); k < end; ++k) {
      const std::int64_t s = col_rows.get(q, static_cast<std::size_t>(k));  // row s has column c
      const auto i = static_cast<std::size_t>(2 * (s / P));
      const pe o(s % P);
      if (s == r) continue;
      // The sum before the count: whoever takes the count to 1 then reads the final sum.
      left.add(o, i + 1, -c);
      if (left.fetch_add(o, i, -1) == 2) pivots.emplace_back(s, left.load(o, i + 1));
    }
  }
  barrier();
  std::copy(rperm.begin(), rperm.begin() + std::ssize(res.row_perm), res.row_perm.begin());
  std::copy(cperm.begin(), cperm.begin() + std::ssize(res.col_perm), res.col_perm.begin());
  return res;
}

}  // namespace mailroom::apps::toposort
