// SPDX-License-Identifier: MIT
// Positions from levels, shared by the asynchronous toposort variants (see toposort.hpp).
#include "toposort/toposort.hpp"

#include <algorithm>

namespace mailroom::apps::toposort {

std::vector<std::int64_t> positions(std::span<const std::int64_t> level, std::int64_t n) {
  const std::int64_t L =
      all_reduce(level.empty() ? std::int64_t{0} : *std::ranges::max_element(level), max<>{}) + 1;
  std::vector<std::int64_t> count(L), start(L), total(L);
  for (const std::int64_t l : level) ++count[l];
  // Per level: its rows on the PEs before this one, and on all PEs.
  exclusive_scan(std::span<const std::int64_t>(count), std::span<std::int64_t>(start),
                 std::int64_t{0});
  all_reduce(std::span<const std::int64_t>(count), std::span<std::int64_t>(total));
  for (std::int64_t l = 0, below = 0; l < L; below += total[l], ++l) start[l] += below;
  std::vector<std::int64_t> pos(level.size());
  for (std::size_t i = 0; i < level.size(); ++i) pos[i] = n - 1 - start[level[i]]++;
  return pos;
}

}  // namespace mailroom::apps::toposort
