// SPDX-License-Identifier: MIT
// Random permutation, BSP variant in the style of Bale's exstack: darts go out in buckets of up
// to 1024 per destination per MPI_Alltoallv superstep; those that miss are thrown again in a
// later superstep, until no PE holds a dart.
#include "randperm/randperm.hpp"

#include <algorithm>
#include <numeric>

namespace mailroom::apps::randperm {

std::vector<std::int64_t> bsp(std::int64_t n_per_pe, std::uint64_t seed) {
  constexpr int k_bucket = 1024;  // darts per destination per superstep
  const int P = num_pes();
  const std::int64_t slots = 2 * n_per_pe * P;
  const auto slot = [=](std::int64_t d) { return slot_of(d, seed, slots); };
  std::vector<std::int64_t> target(static_cast<std::size_t>(2 * n_per_pe), -1);
  std::vector<std::int64_t> darts(static_cast<std::size_t>(n_per_pe)), out(P * k_bucket), in;
  std::iota(darts.begin(), darts.end(), this_pe().rank() * n_per_pe);  // the darts in hand
  std::vector<int> sent(P), received(P), start(P), at(P);
  for (int p = 0; p < P; ++p) start[p] = p * k_bucket;
  do {
    std::ranges::fill(sent, 0);
    while (!darts.empty()) {
      const auto p = static_cast<int>(slot(darts.back()) % P);
      if (sent[p] == k_bucket) break;
      out[start[p] + sent[p]++] = darts.back();
      darts.pop_back();
    }
    received = all_to_all(std::span<const int>(sent));
    std::exclusive_scan(received.begin(), received.end(), at.begin(), 0);
    in.resize(at.back() + received.back());
    all_to_all_v<std::int64_t>(out, sent, start, in, received, at);
    for (std::int64_t d : in) {
      std::int64_t& t = target[slot(d) / P];
      if ((d & k_value) < (t & k_value)) std::swap(d, t);
      if (d != -1) darts.push_back(d + k_missed);  // the loser, thrown again from here
    }
  } while (all_reduce(std::int64_t{!darts.empty()}, max<>{}) != 0);  // any PE holds one?
  std::vector<std::int64_t> part;
  for (const std::int64_t t : target)
    if (t != -1) part.push_back(t & k_value);
  return part;
}

}  // namespace mailroom::apps::randperm
