// SPDX-License-Identifier: MIT
// Variable-size messages against fixed-size ones of the same bytes (docs/performance.md, variable-
// size messages): every PE sends n messages of W 64-bit words to PEs by hash, handled by a
// handler that sums the words, three ways in alternation:
//   fixed  mailbox<std::array<std::uint64_t, W>>
//   var    mailbox<span_of<std::uint64_t>>, every message W words
//   mixed  mailbox<span_of<std::uint64_t>>, 1 to W words (a neighbour list's spread)
// and prints the medians and var / fixed (ns per message per PE). Checks the sums.
// Usage: scripts/mpirun.sh -n 2 build/tests/bench/var_vs_fixed [n] [reps]   (W = 8: 64 bytes)
#include <mailroom/mailroom.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

namespace mr = mailroom;

namespace {

constexpr std::size_t W = 8;
using fixed_msg = std::array<std::uint64_t, W>;

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

enum class mode { fixed, var, mixed };

// One phase; returns seconds (slowest PE) and adds the handled words' sum to `sum`.
double phase(mode m, std::int64_t n, std::uint64_t& sum, std::uint64_t& want) {
  const int me = mr::this_pe().rank();
  const auto pes = static_cast<std::uint64_t>(mr::num_pes());
  std::uint64_t got = 0;
  mr::barrier();
  const double t0 = mr::wtime();
  if (m == mode::fixed) {
    mr::actor<fixed_msg> a([&](const fixed_msg& v) {
      for (std::uint64_t x : v) got += x;
    });
    fixed_msg v{};
    for (std::int64_t k = 0; k < n; ++k) {
      const std::uint64_t h =
          mix(static_cast<std::uint64_t>(me) << 32 ^ static_cast<std::uint64_t>(k));
      for (std::size_t i = 0; i < W; ++i) v[i] = h + i;
      a.send(mr::pe(static_cast<int>(h % pes)), v);
      want += W * h + W * (W - 1) / 2;
    }
    a.done();
    a.wait();
  } else {
    mr::actor<mr::span_of<std::uint64_t>> a([&](std::span<const std::uint64_t> v) {
      for (std::uint64_t x : v) got += x;
    });
    std::uint64_t v[W];
    for (std::int64_t k = 0; k < n; ++k) {
      const std::uint64_t h =
          mix(static_cast<std::uint64_t>(me) << 32 ^ static_cast<std::uint64_t>(k));
      const std::size_t len = m == mode::var ? W : 1 + (h >> 40) % W;
      for (std::size_t i = 0; i < W; ++i) v[i] = h + i;  // (the same work as fixed's)
      a.send(mr::pe(static_cast<int>(h % pes)), std::span<const std::uint64_t>(v, len));
      want += len * h + len * (len - 1) / 2;
    }
    a.done();
    a.wait();
  }
  const double t = mr::all_reduce(mr::wtime() - t0, mr::max<>{});
  sum += got;
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<double> t[3];
  std::uint64_t sum = 0, want = 0;
  for (int r = 0; r < reps; ++r)
    for (mode m : {mode::fixed, mode::var, mode::mixed})
      t[static_cast<int>(m)].push_back(phase(m, n, sum, want));
  const std::uint64_t total[2] = {mr::all_reduce(sum), mr::all_reduce(want)};
  const bool ok = total[0] == total[1];
  if (mr::this_pe().rank() == 0) {
    const double ns = 1e9 / static_cast<double>(n);
    const double f = median(t[0]), v = median(t[1]), x = median(t[2]);
    std::printf(
        "var_vs_fixed: %d PEs, %lld messages per PE, medians of %d (ns per message per "
        "PE): fixed %zu bytes %.1f, variable %zu bytes %.1f (%.2fx), variable 8-%zu "
        "bytes %.1f (%.2fx): %s\n",
        mr::num_pes(), static_cast<long long>(n), reps, W * 8, f * ns, W * 8, v * ns, v / f, W * 8,
        x * ns, x / f, ok ? "PASSED" : "FAILED");
  }
  return ok ? 0 : 1;
}
