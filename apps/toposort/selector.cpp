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
  const std::int64_t P = num_pes(), me = this_pe().rank();
  const std::int64_t lr = a.local_rows();
  std::vector<std::int64_t> count(lr), sum(lr), level(lr, 0);
  // What the handlers use, captured by value (kept in registers across a buffer, where a
  // reference is loaded again after each store): the rows' state and the transpose's arrays.
  struct rows_state {
    std::int64_t *count, *sum, *level;
  };
  const rows_state rows{count.data(), sum.data(), level.data()};
  // Local row l has one column left: its pivot goes to that column's owner.
  const auto announce = [rows, P, me](auto& sel, std::int64_t l) {
    sel.template send<0>(pe(rows.sum[l] % P), pivot{rows.sum[l], l * P + me, rows.level[l]});
  };
  const std::int64_t* at_ptr = at.row_ptr().data();
  const std::int64_t* at_col = at.col_idx().data();
  // (Set before the selector exists: once it does, its handlers may run at any moment, on a
  // progress thread beside this loop, MAILROOM_PROGRESS=thread.)
  for (std::int64_t l = 0; l < lr; ++l) {
    count[l] = std::ssize(a.row(l));
    sum[l] = std::accumulate(a.row(l).begin(), a.row(l).end(), std::int64_t{0});
  }
  mailroom::selector topo{
      graph{{0, 1}, {1, 0}}, mailbox<pivot>([at_ptr, at_col, P](pivot q, pe, auto& self) {
        const std::int64_t c = q.col / P;
        for (std::int64_t k = at_ptr[c]; k < at_ptr[c + 1]; ++k)
          if (const std::int64_t s = at_col[k]; s != q.row)
            self.template send<1>(pe(s % P), removal{s / P, q.col, q.level + 1});
      }),
      mailbox<removal>([rows, announce](removal m, pe, auto& self) {
        rows.level[m.row] = std::max(rows.level[m.row], m.level);
        rows.sum[m.row] -= m.col;
        if (--rows.count[m.row] == 1) announce(self, m.row);
      })};
  // Sends may run handlers, which change counts: announce the input's single-nonzero rows.
  for (std::int64_t l = 0; l < lr; ++l)
    if (a.row(l).size() == 1) announce(topo, l);
  topo.done<0>();
  topo.wait();
  result res{positions(level, a.rows()), std::vector<std::int64_t>(at.local_rows())};
  actor places{mailbox<place>([cp = res.col_perm.data(), P](place p) { cp[p.col / P] = p.pos; })};
  for (std::int64_t l = 0; l < lr; ++l) places.send(pe(sum[l] % P), place{sum[l], res.row_perm[l]});
  places.done();
  places.wait();
  return res;
}

}  // namespace mailroom::apps::toposort
