// SPDX-License-Identifier: MIT
// Toposort, BSP variant in the style of Bale's exstack: supersteps of two MPI_Alltoallv rounds
// with up to 1024 items per destination, pivots to their columns' owners, then removals from the
// columns' owners to the rows that share the column. The pivots of a superstep take the next
// block of positions from the end, split among the PEs by a prefix sum over their counts.
#include "toposort/toposort.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::toposort {

result bsp(const sparse_matrix& a, const sparse_matrix& at) {
  constexpr int k_bucket = 1024;  // items per destination per superstep
  struct pivot {
    std::int64_t col, row, pos;  // global row `row` has column `col` left, and takes `pos`
  };
  struct removal {
    std::int64_t row, col;  // local row `row` loses column `col`
  };
  const int P = num_pes(), me = this_pe().rank();
  const std::int64_t lr = a.local_rows();
  result res{std::vector<std::int64_t>(lr), std::vector<std::int64_t>(at.local_rows())};
  std::vector<std::int64_t> count(lr), sum(lr), ready;  // ready: local rows with one left
  for (std::int64_t l = 0; l < lr; ++l) {
    count[l] = std::ssize(a.row(l));
    sum[l] = std::accumulate(a.row(l).begin(), a.row(l).end(), std::int64_t{0});
    if (count[l] == 1) ready.push_back(l);
  }
  std::vector<pivot> pivots(P * k_bucket), columns;  // columns: pivots received, to fan out
  std::vector<removal> removals(P * k_bucket);
  std::size_t fan = 0, k = 0;  // columns[fan] is being fanned out, its k-th row next
  std::vector<int> sent(P), received(P), start(P), at_(P), all(P);
  for (int p = 0; p < P; ++p) start[p] = p * k_bucket;
  const auto superstep = [&]<class T>(const std::vector<T>& out) {
    received = all_to_all(std::span<const int>(sent));
    std::exclusive_scan(received.begin(), received.end(), at_.begin(), 0);
    std::vector<T> in(at_.back() + received.back());
    all_to_all_v<T>(out, sent, start, in, received, at_);
    std::ranges::fill(sent, 0);
    return in;
  };
  std::int64_t top = a.rows() - 1;  // the last position not yet taken
  do {
    int mine = 0;
    for (; !ready.empty(); ready.pop_back()) {
      const std::int64_t l = ready.back(), p = sum[l] % P;
      if (sent[p] == k_bucket) break;
      pivots[start[p] + sent[p]++] = {sum[l], a.global_row(l), mine++};
    }
    const std::vector<int> counts(P, mine);
    all = all_to_all(std::span<const int>(counts));  // every PE's pivot count this superstep
    const std::int64_t base = top - std::accumulate(all.begin(), all.begin() + me, 0);
    top -= std::accumulate(all.begin(), all.end(), 0);
    for (int p = 0; p < P; ++p)
      for (int i = start[p]; i < start[p] + sent[p]; ++i) {
        pivots[i].pos = base - pivots[i].pos;
        res.row_perm[pivots[i].row / P] = pivots[i].pos;
      }
    for (const pivot& q : superstep(pivots)) {
      res.col_perm[q.col / P] = q.pos;
      columns.push_back(q);
    }
    while (fan < columns.size()) {
      const auto rows = at.row(columns[fan].col / P);
      if (k == rows.size()) {
        ++fan, k = 0;
        continue;
      }
      const std::int64_t s = rows[k], p = s % P;
      if (s != columns[fan].row) {
        if (sent[p] == k_bucket) break;
        removals[start[p] + sent[p]++] = {s / P, columns[fan].col};
      }
      ++k;
    }
    for (const removal& m : superstep(removals)) {
      sum[m.row] -= m.col;
      if (--count[m.row] == 1) ready.push_back(m.row);
    }
  } while (all_reduce(std::int64_t{!ready.empty() || fan < columns.size()}, max<>{}) != 0);
  return res;
}

}  // namespace mailroom::apps::toposort
