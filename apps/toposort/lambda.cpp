// SPDX-License-Identifier: MIT
// Toposort, lambda variant: a removal closure drops a column from a row and, once one column is
// left, sends a pivot closure to that column's owner, which sends every other row of the column a
// removal. The two lambda mailboxes feed each other: a cycle closed by the runtime's quiescence
// detection. Rows record levels (aggregation reorders events); positions are dealt out by level.
#include "toposort/toposort.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

namespace mailroom::apps::toposort {

result lambda(const sparse_matrix& a, const sparse_matrix& at) {
  struct row_state {  // (left beside sum, GCC would update the two with vector instructions)
    std::int64_t left, level, sum;  // nonzeros left, the level, the sum of their columns
  };
  const std::int64_t P = num_pes();  // 8 bytes: closures capture it
  const std::int64_t lr = a.local_rows();
  // What closures touch on the PE they run on: the column permutation, a symmetric array, and
  // behind one symmetric handle that PE's rows, transpose, selector, P and rank (so a closure
  // captures one word for them all, and the removal closure has 4 words).
  symmetric_scope scope;  // frees the symmetric arrays on return
  std::vector<row_state> rows(lr);
  symmetric_array<std::int64_t> col_perm(
      static_cast<std::size_t>(all_reduce(at.local_rows(), max<>{})));
  for (std::int64_t l = 0; l < lr; ++l)
    rows[l] = {std::ssize(a.row(l)), 0,
               std::accumulate(a.row(l).begin(), a.row(l).end(), std::int64_t{0})};
  using topo_selector = mailroom::selector<lambdas, lambdas>;
  struct context {
    row_state* rows;
    const sparse_matrix* at;
    std::optional<topo_selector>* self;
    std::int64_t P, me;
  };
  // Allocated (collectively) before the selector: handlers may run from then on. So is where the
  // selector lives (a handler may run before `emplace` returns: beside this flow, under
  // MAILROOM_PROGRESS=thread).
  std::optional<topo_selector> topo;
  const symmetric<context> here({rows.data(), &at, &topo, P, this_pe().rank()});
  topo.emplace(graph{{0, 1}, {1, 0}}, lambdas{}, lambdas{});
  // Local row l loses column c, pivoted at level lev; once one column is left, the row (global
  // row g) pivots: that column's other rows lose it in turn. (Passed itself, for its closures.)
  const auto remove = [here](const auto& again, std::int64_t l, std::int64_t c,
                             std::int64_t lev) -> void {
    const context& x = *here;
    row_state& r = x.rows[l];
    r.level = std::max(r.level, lev + 1);
    r.sum -= c;
    if (--r.left != 1) return;
    (*x.self)->send<0>(pe(r.sum % x.P), [=, g = l * x.P + x.me, c = r.sum, lev = r.level] {
      const context& y = *here;
      const std::int64_t pes = y.P;  // (a local: y.P would be loaded again after every send)
      for (const std::int64_t s : y.at->row(c / pes))
        if (s != g) (*y.self)->send<1>(pe(s % pes), [=, l = s / pes] { again(again, l, c, lev); });
    });
  };
  // Sends may run closures, which change counts: the input's single-nonzero rows pivot (a
  // removal of nothing, from a count of two).
  for (std::int64_t l = 0; l < lr; ++l)
    if (a.row(l).size() == 1) {
      rows[l].left = 2;
      remove(remove, l, 0, -1);
    }
  topo->done<0>();
  topo->wait();
  std::vector<std::int64_t> level(lr);
  for (std::int64_t l = 0; l < lr; ++l) level[l] = rows[l].level;
  result res{positions(level, a.rows()), {}};
  actor<> places;  // each column takes its row's position
  for (std::int64_t l = 0; l < lr; ++l)
    places.send(pe(rows[l].sum % P),
                [=, c = rows[l].sum, pos = res.row_perm[l]] { col_perm[c / P] = pos; });
  places.done();
  places.wait();
  res.col_perm.assign(col_perm.begin(), col_perm.begin() + at.local_rows());
  return res;
}

}  // namespace mailroom::apps::toposort
