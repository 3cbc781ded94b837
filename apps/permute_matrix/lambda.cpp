// SPDX-License-Identifier: MIT
// Permute-matrix, lambda variant: closures carry each row's length to the owner of its new row;
// then each nonzero's closure runs at the owner of its column's permutation entry, reads the new
// column there and sends a second closure that stores it. Those two reach the arrays of the PE
// they run on through one symmetric handle, so each has 4-5 words.
#include "permute_matrix/permute_matrix.hpp"

#include <numeric>

namespace mailroom::apps::permute_matrix {

sparse_matrix lambda(const problem& pb) {
  const sparse_matrix& a = pb.a;
  const std::int64_t P = num_pes(), n = a.local_rows();
  const bool valued = all_reduce(a.has_values(), max<>{}) != 0;  // an empty PE has none
  symmetric_scope scope;  // frees the symmetric arrays below on return
  // Row r's length lands in ptr[r + 2]; after the scan ptr[r + 1] is where row r starts and
  // serves as its cursor, so that once every nonzero is in, ptr[0..n] is B's row_ptr.
  symmetric_array<std::int64_t> ptr(all_reduce(n, max<>{}) + 2);
  actor<> lengths;
  for (std::int64_t l = 0; l < n; ++l)
    lengths.send(pe(pb.row_perm[l] % P),
                 [ptr, r = pb.row_perm[l] / P, len = std::ssize(a.row(l))] { ptr[r + 2] = len; });
  lengths.done();
  lengths.wait();
  std::inclusive_scan(ptr.begin(), ptr.begin() + n + 2, ptr.begin());
  std::vector<std::int64_t> cols(ptr[n + 1]);
  std::vector<double> vals(valued ? ptr[n + 1] : 0);
  struct context {  // this PE's arrays, behind one symmetric handle
    std::int64_t *ptr, *cols;
    const std::int64_t* cperm;
    double* vals;  // null for a pattern matrix
  };
  // Allocated (collectively) before the selector: its handlers may run from then on.
  const symmetric<context> here(
      {ptr.data(), cols.data(), pb.col_perm.data(), valued ? vals.data() : nullptr});
  mailroom::selector move{lambdas{}, lambdas{}};
  for (std::int64_t l = 0; l < n; ++l)
    for (std::int64_t k = a.row_ptr()[l], r = pb.row_perm[l]; k < a.row_ptr()[l + 1]; ++k)
      // At the owner of col_perm[j]; then at the new row's owner.
      move.send<0>(pe(a.col_idx()[k] % P), [=, j = a.col_idx()[k] / P, to = r % P, r = r / P,
                                            v = valued ? a.values()[k] : 0.0](pe, auto& self) {
        self.template send<1>(pe(to), [=, c = here->cperm[j]] {
          const std::int64_t at = here->ptr[r + 1]++;
          here->cols[at] = c;
          if (here->vals != nullptr) here->vals[at] = v;
        });
      });
  move.done<0>();
  move.wait();
  return {a.rows(), a.cols(), {ptr.begin(), ptr.begin() + n + 1}, std::move(cols), std::move(vals)};
}

}  // namespace mailroom::apps::permute_matrix
