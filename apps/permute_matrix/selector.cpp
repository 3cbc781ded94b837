// SPDX-License-Identifier: MIT
// Permute-matrix, selector variant: an actor sends each row's length to the owner of its new row;
// then every nonzero travels first to the owner of its column's permutation entry, which looks up
// the new column and forwards it to the owner of the new row (a two-mailbox selector).
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
  std::vector<std::int64_t> ptr(a.local_rows() + 1);
  actor lengths{mailbox<length>([&](length m) { ptr[m.row + 1] = m.n; })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    lengths.send(pe(pb.row_perm[l] % P), {pb.row_perm[l] / P, std::ssize(a.row(l))});
  lengths.done();
  lengths.wait();
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(Valued ? ptr.back() : 0);
  mailroom::selector move{
      // At col_perm's owner, then at the new row's. What the handlers use is captured by value
      // (kept in registers across a buffer, where a reference is loaded again after each store).
      mailbox<entry>([P, cperm = pb.col_perm.data()](entry e, pe, auto& self) {
        self.send(to<1>, pe(e.row % P), rewritten(e, e.row / P, cperm[e.col]));
      }),
      mailbox<entry>([f = fill.data(), c = cols.data(), v = vals.data()](entry e) {
        place(e, f[e.row]++, c, v);
      })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l]; k < a.row_ptr()[l + 1]; ++k) {
      const std::int64_t j = a.col_idx()[k];
      move.send(to<0>, pe(j % P), nonzero_of<Valued>(a, k, pb.row_perm[l], j / P));
    }
  move.template done<0>();  // the runtime closes mailbox 1 (chain 0 -> 1)
  move.wait();
  return {a.rows(), a.cols(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace

sparse_matrix selector(const problem& pb) {
  return any_values(pb.a) ? permute<true>(pb) : permute<false>(pb);
}

}  // namespace mailroom::apps::permute_matrix
