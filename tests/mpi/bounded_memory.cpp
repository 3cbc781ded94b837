// SPDX-License-Identifier: MIT
// Flow control under a hot spot: PEs 2.. flood mailbox A on PE 0, whose handler forwards each
// message to mailbox B on PE 1, while PE 1 is busy (not calling mailroom) for a second. Every
// message must arrive exactly once, the job must finish, and every PE's aggregation memory must
// stay within MAILROOM_BUDGET_BYTES (set small by the test registration) plus the documented spill.
// The whole process must stay bounded too: its peak resident memory may grow, from before the
// flood to the end, by at most the budget plus a small constant (MPI's own buffers, the heap).
#include <mailroom/mailroom.hpp>

#include "aggregation/exchange.hpp"  // (its counters: CMakeLists.txt)

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace mr = mailroom;

namespace {

// The process's peak resident set (VmHWM), in bytes; 0 where /proc does not say.
std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      std::uint64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

// What the process may grow by beyond the aggregation budget: MPI's eager buffers and unexpected
// messages (bounded by the credits), heap slack, the stack.
constexpr std::uint64_t rss_slack = 16u << 20;

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank();
  const int pes = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 200000;
  constexpr int hot = 0, busy = 1;
  const mr::pe forward_to(pes > busy ? busy : hot);

  std::int64_t forwarded = 0, handled = 0, sum = 0;
  mr::selector sel{mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe, auto& self) {
                     ++forwarded;
                     self.template send<1>(forward_to, v);
                   }),
                   mr::mailbox<std::int64_t>([&](std::int64_t v) {
                     ++handled;
                     sum += v;
                   })};
  const std::uint64_t rss_before = peak_rss_bytes();
  // At 1 and 2 PEs PE 0 floods itself; from 3 PEs on, PEs 2.. flood it.
  const bool floods = pes <= 2 ? me == hot : me > busy;
  if (floods)
    for (std::int64_t i = 1; i <= n; ++i) sel.send<0>(mr::pe(hot), i);
  if (me == busy) std::this_thread::sleep_for(std::chrono::seconds(1));  // not calling mailroom
  sel.done<0>();

  // wait(), with a deadline: a hang must become a failure with a diagnosis, not a timeout. (The
  // deadline is generous: oversubscribed PEs across emulated hosts move this traffic slowly.)
  const double deadline = mr::wtime() + 30;
  while (!sel.finished() && mr::wtime() < deadline) mr::yield();
  const auto& ex = mr::detail::exchange::get();
  const std::uint64_t budget = mr::current_config().budget_bytes;
  if (!sel.finished()) {
    std::printf(
        "rank %d: not terminated after 30 s: %lld forwarded, %lld handled; aggregation "
        "pool %zu bytes (peak %zu) against a budget of %llu\n",
        me, static_cast<long long>(forwarded), static_cast<long long>(handled), ex.pool_bytes(),
        ex.peak_pool_bytes(), static_cast<unsigned long long>(budget));
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  sel.wait();

  int failures = 0;
  const std::int64_t senders = pes <= 2 ? 1 : pes - 2;
  std::int64_t totals[2] = {handled, sum};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0 && (totals[0] != senders * n || totals[1] != senders * n * (n + 1) / 2)) {
    std::printf("handled %lld messages summing to %lld, expected %lld summing to %lld\n",
                static_cast<long long>(totals[0]), static_cast<long long>(totals[1]),
                static_cast<long long>(senders * n),
                static_cast<long long>(senders * n * (n + 1) / 2));
    ++failures;
  }
  // Handlers never block, so the pool may pass the budget by what the handlers of one arrived
  // buffer send (docs/design.md): here 1022 forwards to one PE, at most two buffers.
  const std::uint64_t allowed = budget + 2 * ex.capacity();
  if (ex.peak_pool_bytes() > allowed) {
    std::printf(
        "rank %d: aggregation memory peaked at %zu bytes, over the budget of %llu (+%zu "
        "for one buffer's spill)\n",
        me, ex.peak_pool_bytes(), static_cast<unsigned long long>(budget), 2 * ex.capacity());
    ++failures;
  }
  const std::uint64_t rss_growth = peak_rss_bytes() - rss_before;
  if (rss_growth > budget + rss_slack) {
    std::printf(
        "rank %d: peak RSS grew by %llu bytes during the flood, over the budget of %llu "
        "+ %llu\n",
        me, static_cast<unsigned long long>(rss_growth), static_cast<unsigned long long>(budget),
        static_cast<unsigned long long>(rss_slack));
    ++failures;
  }
  // The figures, per PE: peak RSS growth and aggregation peak (largest over PEs).
  std::uint64_t figures[2] = {rss_growth, ex.peak_pool_bytes()};
  MPI_Allreduce(MPI_IN_PLACE, figures, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0)
    std::printf(
        "bounded_memory: %d PEs, %lld messages into PE 0; per PE at most: peak RSS "
        "growth %.2f MiB, aggregation peak %.2f MiB (budget %.2f MiB): %s\n",
        pes, static_cast<long long>(senders * n), figures[0] / 1048576.0, figures[1] / 1048576.0,
        budget / 1048576.0, failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
