// SPDX-License-Identifier: MIT
// The PGAS half (README): one-sided reads and atomics on a symmetric array, an aggregated
// gather as a future beside a reduction, both waited for at once. Every PE reads and increments
// n random elements of a table distributed cyclically (element g on PE g % P at g / P), then
// checks what it read and that the increments add up.
// Usage: scripts/mpirun.sh -n 2 build/examples/pgas [n]
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <vector>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 10000;
  const std::int64_t P = mr::num_pes(), T_per_pe = 1000;
  const int me = mr::this_pe().rank();
  std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 1);
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (auto& g : index)
    g = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(T_per_pe * P));
  const auto value_of = [](std::int64_t g) { return 3 * g + 1; };

  auto table = mr::symmetric_array<std::int64_t>(T_per_pe);  // same address on every PE
  for (std::int64_t i = 0; i < T_per_pe; ++i) table[i] = value_of(i * P + me);
  auto counts = mr::symmetric_array<std::int64_t>(T_per_pe);
  for (std::int64_t i = 0; i < T_per_pe; ++i) counts[i] = 0;
  mr::barrier();

  std::int64_t bad = 0;
  for (std::int64_t g : index) {
    std::int64_t v = table.get(mr::pe(g % P), g / P);  // one-sided: a load within a node,
    counts.add(mr::pe(g % P), g / P, 1);               // MPI across nodes; atomics too
    bad += v != value_of(g);
  }
  // Every read of this PE, aggregated through actor messages, as a future; a reduction beside it.
  std::vector<std::int64_t> fetched(static_cast<std::size_t>(n), -1);
  mr::future<void> reads = mr::gather_async(table, std::span<const std::int64_t>(index),
                                            std::span<std::int64_t>(fetched));
  mr::future<std::int64_t> total = mr::all_reduce_async(n, mr::plus<>{});
  mr::when_all(reads, total).wait();  // runs handlers while it waits
  for (std::int64_t k = 0; k < n; ++k) bad += fetched[k] != value_of(index[k]);
  mr::barrier();  // every PE's increments are in

  std::int64_t counted = 0;
  for (std::int64_t i = 0; i < T_per_pe; ++i) counted += counts[i];
  const std::int64_t all_bad = mr::all_reduce(bad), all_counted = mr::all_reduce(counted);
  const bool ok = all_bad == 0 && all_counted == total.get() && total.get() == n * P;
  if (me == 0)
    std::printf(
        "pgas: %lld PEs, %lld reads per PE: %lld wrong values, %lld of %lld increments: "
        "%s\n",
        static_cast<long long>(P), static_cast<long long>(n), static_cast<long long>(all_bad),
        static_cast<long long>(all_counted), static_cast<long long>(n * P),
        ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
