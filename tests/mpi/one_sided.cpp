// SPDX-License-Identifier: MIT
// One-sided operations on symmetric arrays, checked exactly: atomics under contention from every
// PE at once (fetch_add, compare_exchange loops, the bitwise ones, swap), puts and gets in the
// documented model (a blocking put is visible to the next get; puts of all PEs after a barrier;
// non-blocking ones after quiet()), bulk ranges, futures of each kind, symmetric<T>, and the
// aggregated gather (blocking and as futures, two in flight). Written
// against mailroom's API only, so that it runs on the simulated machine too.
#include <mailroom/mailroom.hpp>

#include "expect.hpp"

#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

namespace mr = mailroom;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;

// Every PE adds to element 0 of every PE k times, and increments element 1 of every PE k times
// with compare-and-swap loops: the totals are exact, and the old values fetch_add returned on
// each target are each of 0 .. P k - 1 once (their sum says so, with the count).
int atomics_under_contention(int k) {
  int failures = 0;
  mr::symmetric_array<std::int64_t> a(4);
  mr::barrier();
  std::vector<std::int64_t> olds_sum(static_cast<std::size_t>(g_pes), 0);
  for (int r = 0; r < k; ++r)
    for (int d = 0; d < g_pes; ++d) {
      const int t = (d + g_me) % g_pes;  // every PE starts on another target
      olds_sum[static_cast<std::size_t>(t)] += a.fetch_add(mr::pe(t), 0, 1);
      for (std::int64_t seen = a.load(mr::pe(t), 1);;) {
        const std::int64_t was = a.compare_exchange(mr::pe(t), 1, seen, seen + 1);
        if (was == seen) break;
        seen = was;
      }
    }
  mr::barrier();
  const std::int64_t n = static_cast<std::int64_t>(g_pes) * k;
  EXPECT(a[0] == n, "fetch_add total %lld, want %lld", static_cast<long long>(a[0]),
         static_cast<long long>(n));
  EXPECT(a[1] == n, "compare_exchange total %lld, want %lld", static_cast<long long>(a[1]),
         static_cast<long long>(n));
  // On each target the olds sum to 0 + 1 + ... + n - 1.
  std::vector<std::int64_t> summed(olds_sum.size());
  mr::all_reduce(std::span<const std::int64_t>(olds_sum), std::span<std::int64_t>(summed));
  EXPECT(summed[static_cast<std::size_t>(g_me)] == n * (n - 1) / 2, "old values %lld",
         static_cast<long long>(summed[static_cast<std::size_t>(g_me)]));
  // Bits: each PE sets its bit on PE 0 (or), flips it twice (xor), clears it from all-ones (and).
  mr::symmetric_array<std::uint64_t> bits(3);
  bits[2] = ~0ull;
  mr::barrier();
  const auto bit = std::uint64_t{1} << (g_me % 64);
  (void)bits.fetch_or(mr::pe(0), 0, bit);
  (void)bits.fetch_xor(mr::pe(0), 1, bit);
  (void)bits.fetch_xor(mr::pe(0), 1, bit);
  (void)bits.fetch_and(mr::pe(0), 2, ~bit);
  mr::barrier();
  if (g_me == 0) {
    std::uint64_t all = 0;
    for (int p = 0; p < g_pes; ++p) all |= std::uint64_t{1} << (p % 64);
    EXPECT(bits[0] == all, "fetch_or %llx", static_cast<unsigned long long>(bits[0]));
    EXPECT(bits[1] == 0, "fetch_xor %llx", static_cast<unsigned long long>(bits[1]));
    EXPECT(bits[2] == ~all, "fetch_and %llx", static_cast<unsigned long long>(bits[2]));
  }
  // swap: every PE swaps its rank into PE 0's element; the olds and the last value are a
  // permutation of -1 and the ranks.
  mr::symmetric_array<std::int32_t> s(1);
  s[0] = -1;
  mr::barrier();
  const std::int32_t old = s.swap(mr::pe(0), 0, g_me);
  mr::barrier();
  const std::int64_t final_value = mr::broadcast(std::int64_t{s[0]}, 0);
  const std::int64_t olds = mr::all_reduce(std::int64_t{old});
  EXPECT(olds + final_value == -1 + static_cast<std::int64_t>(g_pes) * (g_pes - 1) / 2,
         "swap: olds %lld, last %lld", static_cast<long long>(olds),
         static_cast<long long>(final_value));
  mr::symmetric_free(s);
  mr::symmetric_free(bits);
  mr::symmetric_free(a);
  return failures;
}

int puts_and_gets() {
  int failures = 0;
  constexpr std::size_t n = 1000;
  mr::symmetric_array<std::int64_t> a(n);
  mr::barrier();
  const mr::pe next((g_me + 1) % g_pes), prev((g_me + g_pes - 1) % g_pes);
  // A blocking put is visible to this PE's next get of it.
  a.put(next, 5, 1000 + g_me);
  EXPECT(a.get(next, 5) == 1000 + g_me, "get after put");
  a.store(next, 6, 2000 + g_me);
  EXPECT(a.load(next, 6) == 2000 + g_me, "load after store");
  // A bulk put of the rest, then every PE's are visible after the barrier.
  std::vector<std::int64_t> block(n - 10);
  std::iota(block.begin(), block.end(), g_me * 100000);
  a.put(next, 10, std::span<const std::int64_t>(block));
  mr::barrier();
  for (std::size_t i = 10; i < n; ++i)
    EXPECT(a[i] == prev.rank() * 100000 + static_cast<std::int64_t>(i - 10), "element %zu", i);
  std::vector<std::int64_t> back(n - 10);
  a.get(next, 10, std::span<std::int64_t>(back));
  EXPECT(back == block, "bulk get");
  mr::barrier();
  // Non-blocking: puts to the previous PE, visible after quiet() and a barrier; gets of single
  // elements and of a range, waited on together.
  std::vector<mr::future<void>> puts;
  for (std::size_t i = 0; i < 5; ++i) puts.push_back(a.put_async(prev, i, -g_me - 1));
  mr::when_all(puts).wait();
  mr::quiet();
  mr::barrier();
  for (std::size_t i = 0; i < 5; ++i) EXPECT(a[i] == -next.rank() - 1, "put_async %zu", i);
  std::vector<mr::future<std::int64_t>> gets;
  for (std::size_t i = 10; i < 20; ++i) gets.push_back(a.get_async(next, i));
  std::vector<std::int64_t> range(100);
  auto ranged = a.get_async(next, 10, std::span<std::int64_t>(range));
  auto incremented = a.fetch_add_async(next, 5, 1);
  const auto [values] = mr::when_all(mr::when_all(gets), ranged).get();
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT(values[i] == g_me * 100000 + static_cast<std::int64_t>(i), "get_async %zu", i);
  for (std::size_t i = 0; i < range.size(); ++i)
    EXPECT(range[i] == g_me * 100000 + static_cast<std::int64_t>(i), "ranged get_async %zu", i);
  EXPECT(incremented.get() == 1000 + g_me, "fetch_add_async");
  mr::barrier();
  // symmetric<T>: each PE's value, read and written one-sidedly.
  struct pair {
    std::int64_t a, b;
  };
  mr::symmetric<pair> s(pair{g_me, -g_me});
  mr::barrier();  // (each PE's value is written after the allocation: others see it after this)
  const pair got = s.get(next);
  EXPECT(got.a == next.rank() && got.b == -next.rank(), "symmetric get");
  mr::barrier();
  s.put(next, pair{7, g_me});
  mr::barrier();
  EXPECT(s->a == 7 && s->b == prev.rank(), "symmetric put");
  mr::symmetric_free(a);
  return failures;
}

// Aggregated reads: gather() with the cyclic distribution, and gather_async() with a blocked one
// beside a second one in flight; every value recomputed from its global index.
int aggregated_gather() {
  int failures = 0;
  constexpr std::size_t per_pe = 500, reads = 3000;
  const auto value = [](std::int64_t g) { return g * 7 + 3; };
  mr::symmetric_array<std::int64_t> table(per_pe);
  for (std::size_t l = 0; l < per_pe; ++l)  // cyclic: global g = l P + me
    table[l] = value(static_cast<std::int64_t>(l) * g_pes + g_me);
  mr::barrier();
  const std::int64_t n = static_cast<std::int64_t>(per_pe) * g_pes;
  std::vector<std::int64_t> idx(reads), out(reads, -1), out2(reads, -1);
  for (std::size_t k = 0; k < reads; ++k)
    idx[k] = static_cast<std::int64_t>((k * 7919 + static_cast<std::size_t>(g_me) * 104729) %
                                       static_cast<std::size_t>(n));
  mr::gather(table, std::span<const std::int64_t>(idx), std::span<std::int64_t>(out));
  for (std::size_t k = 0; k < reads; ++k)
    EXPECT(out[k] == value(idx[k]), "gather %zu: %lld for index %lld", k,
           static_cast<long long>(out[k]), static_cast<long long>(idx[k]));
  // Blocked: element e of PE p is global p * per_pe + e; the table holds cyclic values, so the
  // expected value is that of the cyclic index at the same place.
  const auto blocked = [](std::int64_t g) {
    return std::pair{mr::pe(g / static_cast<std::int64_t>(per_pe)),
                     static_cast<std::size_t>(g % static_cast<std::int64_t>(per_pe))};
  };
  auto f1 = mr::gather_async(table, std::span<const std::int64_t>(idx),
                             std::span<std::int64_t>(out2), blocked);
  std::vector<std::int64_t> out3(reads, -1);
  auto f2 =
      mr::gather_async(table, std::span<const std::int64_t>(idx), std::span<std::int64_t>(out3));
  mr::when_all(f1, f2).wait();
  for (std::size_t k = 0; k < reads; ++k) {
    const std::int64_t p = idx[k] / static_cast<std::int64_t>(per_pe);
    const std::int64_t e = idx[k] % static_cast<std::int64_t>(per_pe);
    EXPECT(out2[k] == value(e * g_pes + p), "gather_async blocked %zu", k);
    EXPECT(out3[k] == value(idx[k]), "gather_async cyclic %zu", k);
  }
  mr::barrier();
  mr::symmetric_free(table);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    const int k = argc > 1 ? std::atoi(argv[1]) : 200;
    int failures = 0;
    failures += atomics_under_contention(k);
    failures += puts_and_gets();
    failures += aggregated_gather();
    return mailroom_test::verdict(failures);
  });
}
