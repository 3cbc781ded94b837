// SPDX-License-Identifier: MIT
// What the BSP variants share: one superstep of an all-to-all exchange of typed items.
#pragma once

#include <mailroom/mailroom.hpp>

#include <numeric>
#include <vector>

namespace mailroom::apps {

/// Items per destination per superstep in the BSP variants (Bale's exstack default).
inline constexpr int k_bsp_bucket = 1024;

/// One superstep: send_n[d] items of `out`, starting at send_at[d], go to PE d; returns every
/// item sent to this PE, grouped by source PE in PE order. Collective.
template <class T>
std::vector<T> superstep(const std::vector<T>& out, const std::vector<int>& send_n,
                         const std::vector<int>& send_at) {
  const int P = num_pes();
  std::vector<int> recv_n(P), recv_at(P);
  recv_n = all_to_all(std::span<const int>(send_n));
  std::exclusive_scan(recv_n.begin(), recv_n.end(), recv_at.begin(), 0);
  std::vector<T> in(static_cast<std::size_t>(recv_at.back() + recv_n.back()));
  all_to_all_v<T>(out, send_n, send_at, in, recv_n, recv_at);
  return in;
}

/// The same with the buckets at fixed places: bucket d of `out` starts at d * k_bsp_bucket.
template <class T>
std::vector<T> superstep(const std::vector<T>& out, const std::vector<int>& send_n) {
  std::vector<int> send_at(send_n.size());
  for (std::size_t d = 0; d < send_at.size(); ++d) send_at[d] = static_cast<int>(d) * k_bsp_bucket;
  return superstep(out, send_n, send_at);
}

}  // namespace mailroom::apps
