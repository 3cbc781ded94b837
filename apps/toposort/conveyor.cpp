// SPDX-License-Identifier: MIT
// Toposort, conveyor variant: Bale's loop over mailroom::conveyor<T>, pivots to the columns'
// owners and removals back to the rows, with explicit push/pull/advance. Positions cannot follow
// the order of events (aggregation reorders them), so each row records its level, one more than
// the deepest pivot that removed one of its columns; positions are dealt out by level at the end.
#include "toposort/toposort.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::toposort {

result conveyor(const sparse_matrix& a, const sparse_matrix& at) {
  struct pivot {
    std::int64_t col, row, level;  // global row `row` has column `col` left
  };
  struct removal {
    std::int64_t row, col, level;  // local row `row` loses column `col`, pivoted at level - 1
  };
  struct place {
    std::int64_t col, pos;
  };
  const int P = num_pes();
  const std::int64_t lr = a.local_rows(), lc = at.local_rows();
  std::vector<std::int64_t> count(lr), sum(lr), level(lr, 0), ready;  // ready: one left
  for (std::int64_t l = 0; l < lr; ++l) {
    count[l] = std::ssize(a.row(l));
    sum[l] = std::accumulate(a.row(l).begin(), a.row(l).end(), std::int64_t{0});
    if (count[l] == 1) ready.push_back(l);
  }
  std::vector<pivot> columns;            // pivots received, fanned out in order
  std::size_t next = 0, fan = 0, k = 0;  // ready[next] goes next; columns[fan]'s k-th row next
  mailroom::conveyor<pivot> pivots;
  mailroom::conveyor<removal> removals;
  pivot q{};
  removal m{};
  pe from;
  // Every row pivots once and every column is fanned out once: so each PE knows when it is done.
  const auto advance_both = [&] {  // both must advance every time: no short circuit
    const bool p = pivots.advance(next == static_cast<std::size_t>(lr));
    return removals.advance(fan == static_cast<std::size_t>(lc)) || p;
  };
  while (advance_both()) {
    for (; next < ready.size(); ++next) {
      const std::int64_t l = ready[next];
      if (!pivots.push(pe(sum[l] % P), {sum[l], a.global_row(l), level[l]})) break;
    }
    while (pivots.pull(from, q)) columns.push_back(q);
    while (fan < columns.size()) {
      const auto rows = at.row(columns[fan].col / P);
      if (k == rows.size()) {
        ++fan, k = 0;
        continue;
      }
      const std::int64_t s = rows[k];
      if (s != columns[fan].row &&
          !removals.push(pe(s % P), {s / P, columns[fan].col, columns[fan].level + 1}))
        break;
      ++k;
    }
    // Nothing to push until others answer, and they may wait for what sits in our partly
    // filled buffers: ship those now.
    if (next == ready.size() && fan == columns.size()) {
      pivots.flush();
      removals.flush();
    }
    while (removals.pull(from, m)) {
      level[m.row] = std::max(level[m.row], m.level);
      sum[m.row] -= m.col;
      if (--count[m.row] == 1) ready.push_back(m.row);
    }
  }
  result res{positions(level, a.rows()), std::vector<std::int64_t>(lc)};
  mailroom::conveyor<place> places;  // each column takes its row's position
  std::int64_t l = 0;
  place p{};
  while (places.advance(l == lr)) {
    for (; l < lr; ++l)
      if (!places.push(pe(sum[l] % P), {sum[l], res.row_perm[l]})) break;
    while (places.pull(from, p)) res.col_perm[p.col / P] = p.pos;
  }
  return res;
}

}  // namespace mailroom::apps::toposort
