// SPDX-License-Identifier: MIT
// Triangles, lambda variant: for each nonzero L[i][j] and each column k < j of row i, a closure
// runs on j's owner and counts k when it is in row j there. It reaches that PE's matrix and count
// through one symmetric handle, so it has 3 words.
#include "triangles/triangles.hpp"

#include <algorithm>

namespace mailroom::apps::triangles {

std::int64_t lambda(const sparse_matrix& l) {
  const std::int64_t P = num_pes();
  symmetric_scope scope;  // frees `here` on return
  struct context {        // this PE's matrix and count
    const sparse_matrix* l;
    std::int64_t hits;
  };
  const symmetric<context> here({&l, 0});
  actor<> wedges;
  for (std::int64_t r = 0; r < l.local_rows(); ++r) {
    const auto row = l.row(r);
    for (std::size_t a = 1; a < row.size(); ++a) {
      const pe owner(row[a] % P);
      const std::int64_t j = row[a] / P;
      for (std::size_t b = 0; b < a; ++b)
        wedges.send(owner, [=, k = row[b]] {
          here->hits += std::ranges::binary_search(here->l->row(j), k);
        });
    }
  }
  wedges.done();
  wedges.wait();
  return all_reduce(here->hits);
}

}  // namespace mailroom::apps::triangles
