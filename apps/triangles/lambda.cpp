// Triangles, lambda variant: for each nonzero L[i][j] and each column k < j of row i, a closure
// runs on j's owner and counts k when it is in row j there. Closures capture symmetric handles,
// so the kernel first copies this PE's CSR arrays into symmetric memory (timed with it).
#include "triangles/triangles.hpp"

#include <algorithm>

namespace mailroom::apps::triangles {

std::int64_t lambda(const sparse_matrix& l) {
  const int P = num_pes();
  symmetric_scope scope;  // frees the symmetric arrays below on return
  auto symmetric_copy = [](const std::vector<std::int64_t>& v) {  // the longest PE's length
    symmetric_array<std::int64_t> s(
        static_cast<std::size_t>(transport::allreduce_max(std::ssize(v))));
    std::ranges::copy(v, s.begin());
    return s;
  };
  auto row_ptr = symmetric_copy(l.row_ptr()), col_idx = symmetric_copy(l.col_idx());
  symmetric_array<std::int64_t> hits(1);
  {
    actor<> wedges;
    for (std::int64_t r = 0; r < l.local_rows(); ++r) {
      const auto row = l.row(r);
      for (std::size_t a = 1; a < row.size(); ++a) {
        const std::int64_t j = row[a] / P;
        for (std::size_t b = 0; b < a; ++b)
          wedges.send(pe(row[a] % P), [=, k = row[b]] {
            hits[0] += std::binary_search(&col_idx[row_ptr[j]], &col_idx[row_ptr[j + 1]], k);
          });
      }
    }
    wedges.done();
    wedges.wait();
  }
  return transport::allreduce_sum(hits[0]);
}

}  // namespace mailroom::apps::triangles
