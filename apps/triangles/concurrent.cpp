// SPDX-License-Identifier: MIT
// Triangles, concurrent variant: the wedges variant with its wedges sent from a parallel loop
// over the rows and its mailbox's handlers run on every worker (mailbox(..., concurrent)): with
// --workers N the searches, the kernel's work, spread over the PE's N threads. Each worker
// counts in its own slot.
#include "triangles/triangles.hpp"

#include <algorithm>
#include <vector>

namespace mailroom::apps::triangles {

std::int64_t concurrent(const sparse_matrix& l) {
  struct query {
    std::int64_t j, k;  // row j's local index on its owner; column k
  };
  struct alignas(64) count {
    std::int64_t hits = 0;
  };
  const int P = num_pes();
  std::vector<count> hits(static_cast<std::size_t>(num_workers()));
  actor wedges{mailbox<query>(
      [&](query q) {
        hits[static_cast<std::size_t>(this_worker())].hits +=
            std::ranges::binary_search(l.row(q.j), q.k);
      },
      mailroom::concurrent)};
  // Pieces of 32 rows (about 20,000 wedges): a worker between two pieces takes the handlers'
  // tasks waiting, so that no worker is left sending while the other handles everything.
  parallel_for(
      std::int64_t{0}, l.local_rows(),
      [&](std::int64_t r) {
        const auto row = l.row(r);
        for (std::size_t a = 1; a < row.size(); ++a) {
          const pe owner(row[a] % P);
          const std::int64_t j = row[a] / P;
          for (std::size_t b = 0; b < a; ++b) wedges.send(owner, query{j, row[b]});
        }
      },
      std::int64_t{32});
  wedges.done();
  wedges.wait();
  std::int64_t mine = 0;
  for (const count& c : hits) mine += c.hits;
  return all_reduce(mine);
}

}  // namespace mailroom::apps::triangles
