// SPDX-License-Identifier: MIT
// Permute-matrix, selector variant: an actor sends each row's length to the owner of its new row;
// then every nonzero travels first to the owner of its column's permutation entry, which looks up
// the new column and forwards it to the owner of the new row (a two-mailbox selector).
#include "permute_matrix/permute_matrix.hpp"

#include <numeric>

namespace mailroom::apps::permute_matrix {

sparse_matrix selector(const problem& pb) {
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
  std::vector<std::int64_t> ptr(a.local_rows() + 1);
  actor lengths{mailbox<length>([&](length m) { ptr[m.row + 1] = m.n; })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    lengths.send(pe(pb.row_perm[l] % P), {pb.row_perm[l] / P, std::ssize(a.row(l))});
  lengths.done();
  lengths.wait();
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), cols(ptr.back());
  std::vector<double> vals(valued ? ptr.back() : 0);
  mailroom::selector move{
      mailbox<entry>([&](entry e, pe, auto& self) {  // at col_perm's owner
        self.template send<1>(pe(e.row % P), entry{e.row / P, pb.col_perm[e.col], e.value});
      }),
      mailbox<entry>([&](entry e) {  // at the new row's owner
        const std::int64_t at = fill[e.row]++;
        cols[at] = e.col;
        if (valued) vals[at] = e.value;
      })};
  for (std::int64_t l = 0; l < a.local_rows(); ++l)
    for (std::int64_t k = a.row_ptr()[l]; k < a.row_ptr()[l + 1]; ++k)
      move.send<0>(pe(a.col_idx()[k] % P),
                   entry{pb.row_perm[l], a.col_idx()[k] / P, valued ? a.values()[k] : 0.0});
  move.done<0>();  // the runtime closes mailbox 1 (chain 0 -> 1)
  move.wait();
  return {a.rows(), a.cols(), std::move(ptr), std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::permute_matrix
