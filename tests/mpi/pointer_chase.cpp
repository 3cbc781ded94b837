// SPDX-License-Identifier: MIT
// A chain of dependent messages (pointer chasing): a table of N successors spread cyclically over
// the PEs forms one cycle; a single message walks it for H hops, each hop sent by the previous
// hop's handler to the PE that owns the next entry. The walk must end where a serial walk ends,
// on the right PE, after exactly H hops, and the handlers' stack must not grow along the chain
// (local hops are queued, never delivered by recursion).
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::sum_over_pes;

namespace {

struct hop {
  std::int64_t at;    // the table entry this message is at (owned by the receiving PE)
  std::int64_t left;  // hops still to go
};

// One cycle through 0..n-1 (Sattolo's algorithm), the same on every PE.
std::vector<std::int64_t> one_cycle(std::int64_t n) {
  std::vector<std::int64_t> next(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) next[static_cast<std::size_t>(i)] = i;
  std::mt19937_64 rng(0xc4a5e);
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i));
    std::swap(next[static_cast<std::size_t>(i)], next[static_cast<std::size_t>(j)]);
  }
  return next;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t hops = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const std::int64_t n = 4096 * g_pes;
  const std::vector<std::int64_t> next = one_cycle(n);  // each PE reads only the entries it owns
  auto owner = [&](std::int64_t i) { return mr::pe(static_cast<int>(i % g_pes)); };

  int failures = 0;
  std::int64_t handled = 0, wrong_owner = 0, end_at = -1;
  std::uintptr_t stack_low = UINTPTR_MAX, stack_high = 0;
  mr::selector chase{mr::graph{{0, 0}}, mr::mailbox<hop>([&](const hop& h, mr::pe, auto& self) {
                       const char probe = 0;
                       const auto sp = reinterpret_cast<std::uintptr_t>(&probe);
                       stack_low = std::min(stack_low, sp);
                       stack_high = std::max(stack_high, sp);
                       ++handled;
                       wrong_owner += owner(h.at).rank() != g_me;
                       if (h.left == 0) {
                         end_at = h.at;
                         return;
                       }
                       const std::int64_t to = next[static_cast<std::size_t>(h.at)];
                       self.template send<0>(owner(to), hop{to, h.left - 1});
                     })};
  if (g_me == 0) chase.send<0>(owner(0), hop{0, hops});
  chase.done<0>();
  chase.wait();

  std::int64_t expected_end = 0;
  for (std::int64_t k = 0; k < hops; ++k)
    expected_end = next[static_cast<std::size_t>(expected_end)];
  const std::int64_t total = sum_over_pes(handled);
  EXPECT(total == hops + 1, "%lld messages handled, expected %lld", static_cast<long long>(total),
         static_cast<long long>(hops + 1));
  EXPECT(sum_over_pes(wrong_owner) == 0, "hops handled on a PE that does not own the entry");
  EXPECT(sum_over_pes(end_at >= 0 ? 1 : 0) == 1, "the last hop was not seen exactly once");
  if (end_at >= 0)
    EXPECT(end_at == expected_end, "the walk ended at %lld, the serial walk at %lld",
           static_cast<long long>(end_at), static_cast<long long>(expected_end));
  // Handlers run at a fixed depth: the spread of their stack addresses stays within a few frames.
  const std::uintptr_t spread = handled > 0 ? stack_high - stack_low : 0;
  EXPECT(spread < 16 * 1024, "the handler's stack moved by %zu bytes along the chain",
         static_cast<std::size_t>(spread));
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_me == 0)
    std::printf("pointer_chase: %d PEs, %lld dependent hops: %s\n", int{g_pes},
                static_cast<long long>(hops), failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
