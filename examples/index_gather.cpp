// SPDX-License-Identifier: MIT
// Index-gather with mailroom: every PE reads random elements of a table distributed cyclically
// over all PEs. A request mailbox looks the value up on its owner and replies to a second
// mailbox; written with typed messages, with lambda messages, and as the library's aggregated
// gather returning a future; all checked exactly.
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <vector>

namespace mr = mailroom;

namespace {
std::int64_t value_of(std::int64_t global) { return global * 7 + 3; }
}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int P = mr::num_pes();
  const int me = mr::this_pe().rank();
  const std::int64_t T_per_pe = 100'000;                              // table elements per PE
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1'000'000;  // reads per PE

  std::mt19937_64 rng(777 + static_cast<std::uint64_t>(me));
  std::uniform_int_distribution<std::int64_t> pick(0, T_per_pe * P - 1);
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (auto& g : index) g = pick(rng);
  // Global element g lives on PE g % P at local slot g / P.
  auto table = mr::symmetric_array<std::int64_t>(static_cast<std::size_t>(T_per_pe));
  for (std::int64_t i = 0; i < T_per_pe; ++i) table[i] = value_of(i * P + me);

  // Typed messages: request {slot in the owner's table, where to put the answer}, reply back.
  struct request {
    std::int64_t slot, i;
  };
  struct reply {
    std::int64_t i, value;
  };
  std::vector<std::int64_t> gathered(static_cast<std::size_t>(n), -1);
  mr::barrier();
  double t0 = mr::wtime();
  {
    mr::selector ig{mr::mailbox<request>([&](request r, mr::pe from, auto& self) {
                      self.template send<1>(from, reply{r.i, table[r.slot]});
                    }),
                    mr::mailbox<reply>([&](reply r) { gathered[r.i] = r.value; })};
    for (std::int64_t i = 0; i < n; ++i) ig.send<0>(mr::pe(index[i] % P), request{index[i] / P, i});
    ig.done<0>();  // the reply mailbox is closed by the runtime (chain 0 -> 1)
    ig.wait();
  }
  mr::barrier();
  const double t_selector = mr::wtime() - t0;

  // Lambda messages: the request closure runs on the owner and sends the reply closure back.
  auto out = mr::symmetric_array<std::int64_t>(static_cast<std::size_t>(n));
  t0 = mr::wtime();
  {
    mr::selector ig{mr::lambdas{}, mr::lambdas{}};
    auto self = ig.ref();
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t slot = index[i] / P;
      ig.send<0>(mr::pe(index[i] % P), [=] {
        const std::int64_t v = table[slot];
        self->send<1>(mr::sender(), [=] { out[i] = v; });
      });
    }
    ig.done<0>();
    ig.wait();
  }
  mr::barrier();
  const double t_lambda = mr::wtime() - t0;

  // Futures: the library's aggregated gather (the selector above, written for you), started
  // without waiting, beside a reduction; both waited for at once.
  std::vector<std::int64_t> fetched(static_cast<std::size_t>(n), -1);
  t0 = mr::wtime();
  mr::future<void> reads = mr::gather_async(table, std::span<const std::int64_t>(index),
                                            std::span<std::int64_t>(fetched));
  mr::future<std::int64_t> reads_total = mr::all_reduce_async(n, mr::plus<>{});
  mr::when_all(reads, reads_total).wait();
  mr::barrier();
  const double t_future = mr::wtime() - t0;

  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i)
    bad += (gathered[i] != value_of(index[i])) + (out[i] != value_of(index[i])) +
           (fetched[i] != value_of(index[i]));
  const std::int64_t all_bad = mr::all_reduce(bad) + (reads_total.get() != n * P);
  if (me == 0) {
    std::printf("index-gather: %d PEs, %lld reads per PE, %lld elements per PE\n", P,
                static_cast<long long>(n), static_cast<long long>(T_per_pe));
    std::printf("  selector: %.3f s  %.2f ns/read/PE\n", t_selector, t_selector * 1e9 / n);
    std::printf("  lambda  : %.3f s  %.2f ns/read/PE\n", t_lambda, t_lambda * 1e9 / n);
    std::printf("  future  : %.3f s  %.2f ns/read/PE\n", t_future, t_future * 1e9 / n);
    std::printf("  check   : %lld wrong values: %s\n", static_cast<long long>(all_bad),
                all_bad == 0 ? "PASSED" : "FAILED");
    if (all_bad != 0) return 1;
  }
  return 0;
}
