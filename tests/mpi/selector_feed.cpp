// SPDX-License-Identifier: MIT
// Selectors that feed selectors (selector::receives_from): a pipeline A -> B -> C whose
// handlers forward every message to the next selector on another PE. Declared, it terminates
// whatever order done() and wait() come in: every order of the six calls in which each wait()
// follows the done() of its selector and of those upstream of it (57 of the 720; in the others
// a wait() would need a done() that comes after it, which wait() refuses), with the selectors
// constructed upstream first and downstream first. Each message must reach C exactly once,
// carrying what A was sent. Also: an actor fed by two actors.
// Usage: selector_feed [messages per PE]
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::sum_over_pes;

namespace {

struct tally {
  std::int64_t count = 0, sum = 0;
};

// A message of value v sent by PE me, number k.
std::int64_t value(int me, std::int64_t k) { return me * 1000003 + k; }

mr::pe next(int hop) { return mr::pe((g_me + hop) % g_pes); }

// ops: 0-2 done() of A, B, C; 3-5 wait() of A, B, C.
bool feasible(const std::array<int, 6>& ops) {
  std::array<int, 6> at{};
  for (int i = 0; i < 6; ++i) at[static_cast<std::size_t>(ops[static_cast<std::size_t>(i)])] = i;
  for (int s = 0; s < 3; ++s)
    for (int up = 0; up <= s; ++up)  // wait() of s after done() of s and of every upstream one
      if (at[static_cast<std::size_t>(3 + s)] < at[static_cast<std::size_t>(up)]) return false;
  return true;
}

int run_pipeline(const std::array<int, 6>& ops, bool downstream_first, std::int64_t n) {
  int failures = 0;
  tally got;
  using stage = mr::selector<mr::mailbox_spec<std::int64_t, std::function<void(std::int64_t)>>>;
  std::unique_ptr<stage> a, b, c;
  const auto make_c = [&] {
    c = std::make_unique<stage>(
        mr::mailbox<std::int64_t>(std::function<void(std::int64_t)>([&got](std::int64_t v) {
          ++got.count;
          got.sum += v;
        })));
  };
  const auto make_b = [&] {
    b = std::make_unique<stage>(mr::mailbox<std::int64_t>(
        std::function<void(std::int64_t)>([&c](std::int64_t v) { c->send<0>(next(2), v); })));
  };
  const auto make_a = [&] {
    a = std::make_unique<stage>(mr::mailbox<std::int64_t>(
        std::function<void(std::int64_t)>([&b](std::int64_t v) { b->send<0>(next(1), v); })));
  };
  if (downstream_first) {
    make_c();
    make_b();
    make_a();
  } else {
    make_a();
    make_b();
    make_c();
  }
  b->receives_from(*a);
  c->receives_from(*b);
  for (std::int64_t k = 0; k < n; ++k) a->send<0>(next(1), value(g_me, k));
  stage* s[] = {a.get(), b.get(), c.get()};
  for (int op : ops) {
    if (op < 3)
      s[op]->done<0>();
    else
      s[op - 3]->wait();
  }
  // Every PE sent n messages; C on this PE got those of PE me-4 (three hops of +1, +1, +2).
  const int from = ((g_me - 4) % g_pes + g_pes) % g_pes;
  std::int64_t want_sum = 0;
  for (std::int64_t k = 0; k < n; ++k) want_sum += value(from, k);
  std::string order;
  for (int op : ops) order += std::string(op < 3 ? "done" : "wait") + "ABC"[op % 3] + " ";
  EXPECT(got.count == n && got.sum == want_sum,
         "order %s(%s first): C got %lld messages summing to %lld, expected %lld summing to %lld",
         order.c_str(), downstream_first ? "downstream" : "upstream",
         static_cast<long long>(got.count), static_cast<long long>(got.sum),
         static_cast<long long>(n), static_cast<long long>(want_sum));
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000;
  int failures = 0;

  std::array<int, 6> ops{0, 1, 2, 3, 4, 5};
  int orders = 0;
  do {
    if (!feasible(ops)) continue;
    ++orders;
    failures += run_pipeline(ops, false, n);
    failures += run_pipeline(ops, true, n);
  } while (std::next_permutation(ops.begin(), ops.end()));
  EXPECT(orders > 10, "only %d orders tried", orders);

  // An actor fed by two selectors: it terminates after both.
  {
    std::int64_t got = 0;
    mr::actor<std::int64_t> sink([&got](std::int64_t v) { got += v; });
    mr::actor<std::int64_t> left([&sink](std::int64_t v) { sink.send(next(1), v); });
    mr::actor<std::int64_t> right([&sink](std::int64_t v) { sink.send(next(1), 2 * v); });
    sink.receives_from(left);
    sink.receives_from(right);
    sink.done();  // first: the two still send to it
    for (std::int64_t k = 0; k < n; ++k) {
      left.send(next(1), 1);
      right.send(next(1), 1);
    }
    left.done();
    right.done();
    sink.wait();  // runs the other two to their end first
    EXPECT(left.finished() && right.finished(), "the sink terminated before what feeds it");
    EXPECT(got == 3 * n, "the sink got %lld, expected %lld", static_cast<long long>(got),
           static_cast<long long>(3 * n));
    left.wait();
    right.wait();
  }
  if (g_me == 0) std::printf("%d orders, each with the selectors built both ways\n", orders);
  return mailroom_test::verdict(failures);
}
