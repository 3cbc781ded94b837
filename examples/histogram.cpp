// SPDX-License-Identifier: MIT
// Histogram with mailroom: every PE adds 1 to random slots of a table distributed cyclically
// over all PEs, through an actor (typed messages) and through lambda messages; both results are
// checked exactly against a count of what was sent.
#include <mailroom/mailroom.hpp>

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

  // Typed messages: the handler runs on the PE that owns the slot.
  std::vector<std::int64_t> histo(static_cast<std::size_t>(T_per_pe), 0);
  mr::barrier();
  double t0 = mr::wtime();
  {
    mr::actor hist{mr::mailbox<std::int64_t>([&](std::int64_t slot) { histo[slot] += 1; })};
    for (auto g : index) hist.send(mr::pe(g % P), g / P);
    hist.done();
    hist.wait();
  }
  mr::barrier();
  const double t_actor = mr::wtime() - t0;

  // Lambda messages: the closure is the message; it captures a symmetric array by value.
  auto h = mr::symmetric_array<std::int64_t>(static_cast<std::size_t>(T_per_pe));
  t0 = mr::wtime();
  {
    mr::actor<> l;
    for (auto g : index) {
      const std::int64_t spot = g / P;
      l.send(mr::pe(g % P), [=] { h[spot] += 1; });
    }
    l.done();
    l.wait();
  }
  mr::barrier();
  const double t_lambda = mr::wtime() - t0;

  // Check: the total must be n * P, and each PE's table must match the lambda table.
  std::int64_t local = 0, mismatches = 0;
  for (std::int64_t i = 0; i < T_per_pe; ++i) {
    local += histo[i];
    mismatches += histo[i] != h[i];
  }
  std::int64_t sum = 0, bad = 0;
  {
    // Reduce through a tiny actor: every PE tells PE 0 its count.
    struct count {
      std::int64_t sum, bad;
    };
    mr::actor reduce{mr::mailbox<count>([&](count c) {
      sum += c.sum;
      bad += c.bad;
    })};
    reduce.send(mr::pe(0), count{local, mismatches});
    reduce.done();
    reduce.wait();
  }
  if (mr::this_pe().rank() == 0) {
    const bool ok = sum == n * P && bad == 0;
    std::printf("histogram: %d PEs, %lld updates per PE, %lld slots per PE\n", P,
                static_cast<long long>(n), static_cast<long long>(T_per_pe));
    std::printf("  actor : %.3f s  %.2f ns/update/PE\n", t_actor, t_actor * 1e9 / n);
    std::printf("  lambda: %.3f s  %.2f ns/update/PE\n", t_lambda, t_lambda * 1e9 / n);
    std::printf("  check : total %lld (expected %lld), %lld slots differ between variants: %s\n",
                static_cast<long long>(sum), static_cast<long long>(n * P),
                static_cast<long long>(bad), ok ? "PASSED" : "FAILED");
    if (!ok) return 1;
  }
  return 0;
}
