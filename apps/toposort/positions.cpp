// Positions from levels, shared by the asynchronous toposort variants (see toposort.hpp).
#include "toposort/toposort.hpp"

#include <algorithm>

namespace mailroom::apps::toposort {

std::vector<std::int64_t> positions(std::span<const std::int64_t> level, std::int64_t n) {
  const int P = num_pes(), me = this_pe().rank();
  const std::int64_t L =
      transport::allreduce_max(level.empty() ? 0 : *std::ranges::max_element(level)) + 1;
  std::vector<std::int64_t> count(L), in(2 * L * P), start(2 * L);
  for (const std::int64_t l : level) ++count[l];
  for (int p = 0; p < P; ++p) {
    std::ranges::copy(count, in.begin() + (2 * p + 1) * L);        // every PE: the level totals
    if (p > me) std::ranges::copy(count, in.begin() + 2 * p * L);  // later PEs: rows before theirs
  }
  transport::reduce_scatter_sum(in.data(), start.data(), 2 * L);
  for (std::int64_t l = 0, below = 0; l < L; below += start[L + l], ++l) start[l] += below;
  std::vector<std::int64_t> pos(level.size());
  for (std::size_t i = 0; i < level.size(); ++i) pos[i] = n - 1 - start[level[i]]++;
  return pos;
}

}  // namespace mailroom::apps::toposort
