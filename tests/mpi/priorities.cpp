// SPDX-License-Identifier: MIT
// Mailbox priorities (selector::priority): of the mailboxes with arrivals when a poll begins,
// higher priorities are handled first, across selectors. Arrivals are piled up before the first
// poll: each PE sends K messages to a low-priority mailbox, then K to a high one, on itself,
// flushes, and only then waits; on one node, the other PEs' buffers to PE 0 are in place too
// (shared memory) once an MPI barrier has passed. Every high message must then be handled before
// any low one; without priorities (the control) the low mailbox, sent to first and numbered
// first, goes first, so the order is the priorities' doing.
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;

namespace {

constexpr std::int64_t k_messages = 100;

// The position of the last high-priority message and of the first low one in `log` (1: high).
bool highs_first(const std::vector<int>& log) {
  bool low_seen = false;
  for (int v : log) {
    if (v == 0) low_seen = true;
    if (v == 1 && low_seen) return false;
  }
  return true;
}

// One selector, mailbox 0 low and 1 high (or both 0 when !prioritised). `to`: where each PE
// sends (itself, or PE 0).
std::vector<int> one_selector(bool prioritised, mr::pe to) {
  std::vector<int> log;
  mr::selector s{mr::graph({}, {0, 1}),
                 mr::mailbox<std::int64_t>([&log](std::int64_t) { log.push_back(0); }),
                 mr::mailbox<std::int64_t>([&log](std::int64_t) { log.push_back(1); })};
  if (prioritised) s.priority<1>(5);
  for (std::int64_t k = 0; k < k_messages; ++k) s.send<0>(to, k);
  for (std::int64_t k = 0; k < k_messages; ++k) s.send<1>(to, k);
  s.flush();
  MPI_Barrier(MPI_COMM_WORLD);  // (no mailroom progress here: the buffers wait for the poll)
  s.done<0>();
  s.done<1>();
  s.wait();
  return log;
}

// Two selectors: the low one constructed first, with a negative priority.
std::vector<int> two_selectors() {
  std::vector<int> log;
  mr::actor<std::int64_t> low([&log](std::int64_t) { log.push_back(0); });
  mr::actor<std::int64_t> high([&log](std::int64_t) { log.push_back(1); });
  low.priority(-1);
  high.priority(3);
  for (std::int64_t k = 0; k < k_messages; ++k) low.send(mr::this_pe(), k);
  for (std::int64_t k = 0; k < k_messages; ++k) high.send(mr::this_pe(), k);
  low.flush();
  high.flush();
  low.done();
  high.done();
  low.wait();
  high.wait();
  return log;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  int failures = 0;
  const auto expect_all = [&](const std::vector<int>& log, std::size_t n, const char* what) {
    EXPECT(log.size() == n, "%s: %zu messages handled, expected %zu", what, log.size(), n);
  };

  std::vector<int> log = one_selector(true, mr::this_pe());
  expect_all(log, 2 * k_messages, "one selector, own PE");
  EXPECT(highs_first(log), "one selector, own PE: a low-priority message was handled first");

  log = one_selector(false, mr::this_pe());
  expect_all(log, 2 * k_messages, "control");
  EXPECT(!log.empty() && log.front() == 0,
         "control (no priorities): the high mailbox went first without being asked to");

  log = two_selectors();
  expect_all(log, 2 * k_messages, "two selectors");
  EXPECT(highs_first(log), "two selectors: a low-priority message was handled first");

  if (mr::num_nodes() == 1) {  // every PE's buffers are in PE 0's shared memory at once
    log = one_selector(true, mr::pe(0));
    expect_all(log, g_me == 0 ? 2 * k_messages * static_cast<std::size_t>(g_pes) : 0,
               "all PEs to PE 0");
    EXPECT(highs_first(log), "all PEs to PE 0: a low-priority message was handled first");
  }
  if (g_me == 0) std::printf("priorities: %d PEs\n", int{g_pes});
  return mailroom_test::verdict(failures);
}
