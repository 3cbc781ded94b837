// SPDX-License-Identifier: MIT
// Workers inside a PE: run with MAILROOM_WORKERS=2 (or more) and every PE has that many threads.
// A parallel loop sends the histogram's updates from all of them; the mailbox's handler is
// thread-safe (an atomic add), so it takes mailroom::concurrent and its handlers run on every
// worker too; two tasks then sum the table as futures. The total is checked exactly.
#include <mailroom/mailroom.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int P = mr::num_pes();
  const std::int64_t T_per_pe = 1000;                                 // table slots per PE
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1'000'000;  // updates per PE
  std::mt19937_64 rng(12345 + static_cast<std::uint64_t>(mr::this_pe().rank()));
  std::uniform_int_distribution<std::int64_t> pick(0, T_per_pe * P - 1);
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (auto& g : index) g = pick(rng);

  std::vector<std::atomic<std::int64_t>> histo(static_cast<std::size_t>(T_per_pe));
  mr::barrier();
  const double t0 = mr::wtime();
  {
    mr::actor hist{mr::mailbox<std::int64_t>(
        [&](std::int64_t slot) { histo[slot].fetch_add(1, std::memory_order_relaxed); },
        mr::concurrent)};
    // Pieces of the loop run on every worker; each sends its updates (no lock: the runtime
    // aggregates them).
    mr::parallel_for_chunks(std::int64_t{0}, n, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t k = lo; k < hi; ++k) hist.send(mr::pe(index[k] % P), index[k] / P);
    });
    hist.done();
    hist.wait();
  }
  mr::barrier();
  const double t = mr::wtime() - t0;

  // Tasks with futures: each half of the table summed by a task, on any worker.
  const auto half_sum = [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t s = 0;
    for (std::int64_t i = lo; i < hi; ++i) s += histo[i].load(std::memory_order_relaxed);
    return s;
  };
  mr::future<std::int64_t> low = mr::async([&] { return half_sum(0, T_per_pe / 2); });
  mr::future<std::int64_t> high = mr::async([&] { return half_sum(T_per_pe / 2, T_per_pe); });
  const std::int64_t total = mr::all_reduce(low.get() + high.get());

  if (mr::this_pe().rank() == 0) {
    const bool ok = total == n * P;
    std::printf("workers: %d PEs x %d workers, %lld updates per PE, %lld slots per PE\n", P,
                mr::num_workers(), static_cast<long long>(n), static_cast<long long>(T_per_pe));
    std::printf("  concurrent actor: %.3f s  %.2f ns/update/PE\n", t, t * 1e9 / n);
    std::printf("  check: total %lld (expected %lld): %s\n", static_cast<long long>(total),
                static_cast<long long>(n * P), ok ? "PASSED" : "FAILED");
    if (!ok) return 1;
  }
  return 0;
}
