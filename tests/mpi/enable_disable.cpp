// SPDX-License-Identifier: MIT
// Enable/disable (selector::disable) under a hot spot. PE 0's `flood` mailbox is disabled from
// its construction on, and every other PE sends it n messages. While it is disabled:
//  - no flood handler runs on PE 0;
//  - back-pressure reaches the senders: none gets through its n sends (each tells PE 0 when it
//    has, on another mailbox), n being far beyond what the credits let through;
//  - the other mailboxes are not held up: PE 0 runs request/reply rounds with every PE over the
//    same links, which the senders answer from inside their blocked sends;
//  - PE 0's aggregation memory stays within the budget.
// Then PE 0 calls done() and wait() with the mailbox still disabled: a message it sent itself
// enables it from a handler, and wait() returns. Every flood message is handled exactly once
// (count and sum), the replies are right, and the memory bound holds on every PE.
// Usage: enable_disable [n] [rounds]   (at 1 PE, PE 0 floods itself with a few messages)
#include <mailroom/mailroom.hpp>

#include "aggregation/exchange.hpp"  // (its counters: CMakeLists.txt)

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mr = mailroom;

namespace {

std::int64_t answer(std::int64_t key, int pe) { return key * 7 + pe; }

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank();
  const int pes = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 200000;
  const std::int64_t rounds = argc > 2 ? std::atoll(argv[2]) : 20;
  constexpr int hot = 0;
  constexpr std::int64_t batch = 8;  // requests per PE per round
  // At 1 PE the hot spot floods itself, with a few messages (it could not get through more: it
  // is the one that enables).
  const std::int64_t per_sender = pes == 1 ? 100 : n;
  const std::int64_t senders = pes == 1 ? 1 : pes - 1;

  bool gate_open = false;  // PE 0: set just before the flood mailbox is enabled
  std::int64_t handled = 0, sum = 0, early = 0;
  mr::actor flood{mr::mailbox<std::int64_t>([&](std::int64_t v) {
    if (!gate_open) ++early;
    ++handled;
    sum += v;
  })};
  if (me == hot) flood.disable();  // before any progress: nothing is handled before this

  std::int64_t replies = 0, wrong = 0, finished_senders = 0;
  // 0: requests (answered on 1), 2: "I got through my sends", 3: "enable the flood mailbox".
  mr::selector ctl{mr::graph({{0, 1}}, {0, 2, 3}),
                   mr::mailbox<std::int64_t>([](std::int64_t key, mr::pe from, auto& self) {
                     self.template send<1>(from, answer(key, mr::this_pe().rank()));
                   }),
                   mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe from) {
                     ++replies;
                     const std::int64_t key = (v - from.rank()) / 7;
                     if (key < 0 || key >= rounds * batch || answer(key, from.rank()) != v) ++wrong;
                   }),
                   mr::mailbox<int>([&](int) { ++finished_senders; }), mr::mailbox<int>([&](int) {
                     gate_open = true;
                     flood.enable();
                   })};

  int failures = 0;
  const auto& ex = mr::detail::exchange::get();
  const std::uint64_t budget = mr::current_config().budget_bytes;
  const std::uint64_t allowed = budget + 2 * ex.capacity();
  if (me != hot || pes == 1) {
    for (std::int64_t i = 1; i <= per_sender; ++i)
      flood.send(mr::pe(hot), static_cast<std::int64_t>(me) * per_sender + i);
    ctl.send<2>(mr::pe(hot), me);
  }
  if (me == hot) {
    for (std::int64_t r = 0; r < rounds; ++r) {
      for (int p = 0; p < pes; ++p)
        for (std::int64_t j = 0; j < batch; ++j) ctl.send<0>(mr::pe(p), r * batch + j);
      while (replies < (r + 1) * batch * pes) mr::yield();
    }
    // Still disabled: nothing handled, no sender through (a sender that got through would have
    // had n messages taken in by a PE that handles none).
    if (early != 0 || handled != 0) {
      std::printf("PE 0: %lld flood messages handled while the mailbox was disabled\n",
                  static_cast<long long>(handled));
      ++failures;
    }
    if (pes > 1 && finished_senders != 0) {
      std::printf(
          "PE 0: %lld senders got through %lld sends each to a disabled mailbox: no "
          "back-pressure\n",
          static_cast<long long>(finished_senders), static_cast<long long>(n));
      ++failures;
    }
    if (flood.enabled()) {
      std::printf("PE 0: enabled() is true while disabled\n");
      ++failures;
    }
    ctl.send<3>(mr::pe(hot), 1);  // handled during flood.wait(): enables it
  }
  ctl.done<0>();
  ctl.done<2>();
  ctl.done<3>();
  flood.done();
  flood.wait();  // on PE 0 it waits, disabled, until the handler of mailbox 3 enables it
  ctl.wait();

  if (me == hot && (!gate_open || !flood.enabled())) {
    std::printf("PE 0: the flood mailbox terminated without being enabled\n");
    ++failures;
  }
  if (me == hot && (replies != rounds * batch * pes || wrong != 0)) {
    std::printf("PE 0: %lld replies (expected %lld), %lld wrong\n", static_cast<long long>(replies),
                static_cast<long long>(rounds * batch * pes), static_cast<long long>(wrong));
    ++failures;
  }
  if (me == hot && finished_senders != (pes == 1 ? 1 : pes - 1)) {
    std::printf("PE 0: %lld senders reported, expected %d\n",
                static_cast<long long>(finished_senders), pes == 1 ? 1 : pes - 1);
    ++failures;
  }
  std::int64_t totals[2] = {handled, sum};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  // Sender s sends s * per_sender + 1 .. s * per_sender + per_sender.
  std::int64_t want_sum = 0;
  for (int s = 0; s < pes; ++s)
    if (s != hot || pes == 1)
      want_sum += static_cast<std::int64_t>(s) * per_sender * per_sender +
                  per_sender * (per_sender + 1) / 2;
  if (me == 0 && (totals[0] != senders * per_sender || totals[1] != want_sum)) {
    std::printf("handled %lld messages summing to %lld, expected %lld summing to %lld\n",
                static_cast<long long>(totals[0]), static_cast<long long>(totals[1]),
                static_cast<long long>(senders * per_sender), static_cast<long long>(want_sum));
    ++failures;
  }
  // The hot spot held its arrivals for the whole exchange: its aggregation memory stays within
  // the budget (plus one buffer's spill of handlers, as in bounded_memory).
  if (ex.peak_pool_bytes() > allowed) {
    std::printf("rank %d: aggregation memory peaked at %zu bytes, over the budget of %llu (+%zu)\n",
                me, ex.peak_pool_bytes(), static_cast<unsigned long long>(budget),
                2 * ex.capacity());
    ++failures;
  }
  std::uint64_t peak = ex.peak_pool_bytes();
  MPI_Allreduce(MPI_IN_PLACE, &peak, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0)
    std::printf(
        "enable_disable: %d PEs, %lld messages held then handled, %lld request rounds "
        "meanwhile; aggregation peak %.2f MiB (budget %.2f MiB): %s\n",
        pes, static_cast<long long>(senders * per_sender), static_cast<long long>(rounds),
        static_cast<double>(peak) / 1048576.0, static_cast<double>(budget) / 1048576.0,
        failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
