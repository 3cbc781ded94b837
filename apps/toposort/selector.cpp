// SPDX-License-Identifier: MIT
// Toposort, selector variant: a pivot mailbox on the columns' owners tells every other row of the
// column to drop it; a removal mailbox on the rows' owners pivots a row once one column is left.
// The two mailboxes feed each other: a cycle in the dependency graph, closed by the runtime's
// quiescence detection. Rows record levels (aggregation reorders events), and positions are
// dealt out by level at the end.
#include "toposort/toposort.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::toposort {

result selector(const sparse_matrix& a, const sparse_matrix& at) {
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
  const std::int64_t lr = a.local_rows();
  std::vector<std::int64_t> count(lr), sum(lr), level(lr, 0);
  const auto announce = [&](auto& sel, std::int64_t l) {  // local row l has one column left
    sel.template send<0>(pe(sum[l] % P), pivot{sum[l], a.global_row(l), level[l]});
  };
  // (Set before the selector exists: once it does, its handlers may run at any moment, on a
  // progress thread beside this loop, MAILROOM_PROGRESS=thread.)
  for (std::int64_t l = 0; l < lr; ++l) {
    count[l] = std::ssize(a.row(l));
    sum[l] = std::accumulate(a.row(l).begin(), a.row(l).end(), std::int64_t{0});
  }
  mailroom::selector topo{
      graph{{0, 1}, {1, 0}}, mailbox<pivot>([&](pivot q, pe, auto& self) {
        for (const std::int64_t s : at.row(q.col / P))
          if (s != q.row) self.template send<1>(pe(s % P), removal{s / P, q.col, q.level + 1});
      }),
      mailbox<removal>([&](removal m, pe, auto& self) {
        level[m.row] = std::max(level[m.row], m.level);
        sum[m.row] -= m.col;
        if (--count[m.row] == 1) announce(self, m.row);
      })};
  // Sends may run handlers, which change counts: announce the input's single-nonzero rows.
  for (std::int64_t l = 0; l < lr; ++l)
    if (a.row(l).size() == 1) announce(topo, l);
  topo.done<0>();
  topo.wait();
  result res{positions(level, a.rows()), std::vector<std::int64_t>(at.local_rows())};
  actor places{mailbox<place>([&](place p) { res.col_perm[p.col / P] = p.pos; })};
  for (std::int64_t l = 0; l < lr; ++l) places.send(pe(sum[l] % P), place{sum[l], res.row_perm[l]});
  places.done();
  places.wait();
  return res;
}

}  // namespace mailroom::apps::toposort
