// SPDX-License-Identifier: MIT
// What the local variants of the matrix apps run on: this PE's rows of a distributed matrix as a
// matrix of their own, so that the floor's loops never reach for another PE's part.
#pragma once

#include <mailroom/sparse_matrix.hpp>

#include <algorithm>
#include <vector>

namespace mailroom::apps {

/// This PE's rows of `a` (local row l as row l) with the distinct columns they use renumbered
/// 0..c-1 in increasing order, so rows stay sorted. Local, untimed: what a PE would hold if its
/// share were the whole problem.
inline sparse_matrix::serial own_rows(const sparse_matrix& a) {
  std::vector<std::int64_t> used(a.col_idx());
  std::ranges::sort(used);
  used.erase(std::unique(used.begin(), used.end()), used.end());
  std::vector<std::int64_t> cols(a.col_idx().size());
  for (std::size_t k = 0; k < cols.size(); ++k)
    cols[k] = std::ranges::lower_bound(used, a.col_idx()[k]) - used.begin();
  return {a.local_rows(), std::ssize(used), a.row_ptr(), std::move(cols), a.values()};
}

}  // namespace mailroom::apps
