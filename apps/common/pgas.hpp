// SPDX-License-Identifier: MIT
// What the naive (PGAS) variants share: symmetric copies of per-PE data for one-sided access.
#pragma once

#include <mailroom/mailroom.hpp>

#include <algorithm>
#include <vector>

namespace mailroom::apps {

/// Collective: a symmetric array as long as the longest PE's `local` (one-sided operations
/// address the same array on every PE), holding `local` at its start here. Others read it after
/// a barrier.
template <class T>
symmetric_array<T> symmetric_copy(const std::vector<T>& local) {
  const auto n = all_reduce(std::max<std::size_t>(local.size(), 1), max<>{});
  symmetric_array<T> a(n);
  std::copy(local.begin(), local.end(), a.begin());
  return a;
}

}  // namespace mailroom::apps
