// SPDX-License-Identifier: MIT
// Progress while a PE computes (docs/design.md, "Progress while computing"): the other PEs send
// to PE 0 while it computes, and the counts its handler saw before the computation ended show
// that its messages kept moving. Modes (the first argument):
//   tasks N  - PE 0 runs long tasks inside finish, one per worker; each ends once every message
//              has arrived (with MAILROOM_PROGRESS=dedicated, worker 0 runs none of them);
//   loop N   - PE 0 computes in a plain loop that calls mailroom::progress(), until every message
//              has arrived; progress() from a handler and from a pool worker's task too;
//   to_one N - every PE sends N messages to PE 0 from every worker (parallel_for_chunks): an
//              all-to-one that completes, oversubscribed as it may be;
//   thread N - with MAILROOM_PROGRESS=thread: PE 0 computes in a plain loop that calls nothing
//              of mailroom's, until every message has arrived (the progress thread takes them
//              in); then the three modes above, at N / 4, and a reply to every message that a
//              handler sends while the main flow computes.
// A computation gives up after k_give_up seconds, so that a PE that takes nothing in fails the
// test instead of hanging it; no assertion is on a time.
#include "expect.hpp"

#include <mailroom/mailroom.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

namespace {

constexpr double k_give_up = 60;

// Work that the compiler cannot drop: a hash chain of `steps` steps.
std::uint64_t compute(std::uint64_t seed, int steps) {
  for (int i = 0; i < steps; ++i) seed = mix(seed + 1);
  return seed;
}

// PE 0 computes until `expected` messages have been handled (or it gives up); the others send
// theirs to it meanwhile, from the main flow. `wait_on_pe0(arrived, expected)` is PE 0's
// computation, returning what its handler had seen when it ended.
template <class Compute>
int messages_while_computing(std::int64_t n, Compute&& wait_on_pe0) {
  int failures = 0;
  const std::int64_t expected = n * (g_pes - 1);
  std::atomic<std::int64_t> arrived{0};
  std::int64_t sum = 0;
  std::int64_t seen = -1;
  {
    mr::actor<std::int64_t> a([&](std::int64_t v) {
      sum += v;
      arrived.fetch_add(1, std::memory_order_release);
    });
    if (g_me == 0) {
      seen = wait_on_pe0(arrived, expected);
    } else {
      for (std::int64_t k = 0; k < n; ++k) a.send(mr::pe(0), k);
    }
    a.done();
    a.wait();
  }
  if (g_me == 0) {
    EXPECT(seen == expected,
           "PE 0's computation ended having seen %lld of the %lld messages sent to it: its "
           "messages stopped while it computed",
           static_cast<long long>(seen), static_cast<long long>(expected));
    const std::int64_t want = (g_pes - 1) * (n * (n - 1) / 2);
    EXPECT(sum == want, "sum %lld, expected %lld", static_cast<long long>(sum),
           static_cast<long long>(want));
  }
  return failures;
}

// Long tasks inside finish on PE 0, as many as it has workers: each computes until every
// message has arrived.
int long_tasks(std::int64_t n) {
  return messages_while_computing(n, [](std::atomic<std::int64_t>& arrived, std::int64_t expected) {
    std::atomic<std::int64_t> seen{expected};
    std::atomic<std::uint64_t> sink{0};
    mr::finish([&] {
      for (int t = 0; t < mr::num_workers(); ++t)
        mr::spawn([&] {
          const double t0 = mr::wtime();
          std::uint64_t h = 0;
          while (arrived.load(std::memory_order_acquire) < expected && mr::wtime() - t0 < k_give_up)
            h = compute(h, 1000);
          sink.fetch_add(h, std::memory_order_relaxed);
          const std::int64_t now = arrived.load(std::memory_order_acquire);
          std::int64_t low = seen.load();
          while (now < low && !seen.compare_exchange_weak(low, now)) {
          }
        });
    });
    return seen.load();
  });
}

// A plain loop on PE 0's main flow that calls progress() every iteration.
int progress_loop(std::int64_t n) {
  int failures = 0;
  std::int64_t polls = 0;
  failures +=
      messages_while_computing(n, [&](std::atomic<std::int64_t>& arrived, std::int64_t expected) {
        const double t0 = mr::wtime();
        std::uint64_t h = 0;
        while (arrived.load(std::memory_order_acquire) < expected && mr::wtime() - t0 < k_give_up) {
          h = compute(h, 20);
          mr::progress();
          ++polls;
        }
        return arrived.load(std::memory_order_acquire) + static_cast<std::int64_t>(h & 0);
      });
  // progress() from a handler (nothing happens) and from a pool worker's task (its staged sends
  // go to worker 0): every message still arrives once.
  std::int64_t got = 0;
  {
    mr::selector s{mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe, auto& self) {
                     mr::progress();
                     self.template send<1>(mr::pe(static_cast<int>(v % g_pes)), v);
                   }),
                   mr::mailbox<std::int64_t>([&](std::int64_t) {
                     mr::progress();
                     ++got;
                   })};
    mr::finish([&] {
      for (int t = 0; t < mr::num_workers(); ++t)
        mr::spawn([&, t] {
          for (std::int64_t k = 0; k < n; ++k) {
            s.send<0>(mr::pe(static_cast<int>(mix(static_cast<std::uint64_t>(k + t)) %
                                              static_cast<std::uint64_t>(g_pes))),
                      k);
            mr::progress();
          }
        });
    });
    s.done<0>();
    s.wait();
  }
  const std::int64_t total = mr::all_reduce(got);
  EXPECT(total == n * g_pes * mr::num_workers(), "%lld messages handled, expected %lld",
         static_cast<long long>(total), static_cast<long long>(n * g_pes * mr::num_workers()));
  return failures;
}

// Every PE sends n messages to PE 0 from every worker.
int all_to_one(std::int64_t n) {
  int failures = 0;
  std::int64_t got = 0;
  {
    mr::actor<std::int64_t> a([&](std::int64_t v) { got += v; });
    mr::parallel_for_chunks(std::int64_t{0}, n, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t k = lo; k < hi; ++k) a.send(mr::pe(0), 1);
    });
    a.done();
    a.wait();
  }
  if (g_me == 0)
    EXPECT(got == n * g_pes, "PE 0 handled %lld messages, expected %lld",
           static_cast<long long>(got), static_cast<long long>(n * g_pes));
  return failures;
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// MAILROOM_PROGRESS=thread: a loop on PE 0's main flow that calls nothing of mailroom's; then
// the other modes; then every PE asks every PE for replies while its main flow computes, and
// counts them in a plain loop (the handlers reply from the progress thread).
int progress_thread(std::int64_t n) {
  int failures = 0;
  failures +=
      messages_while_computing(n, [](std::atomic<std::int64_t>& arrived, std::int64_t expected) {
        const double t0 = seconds_now();
        std::uint64_t h = 0;
        while (arrived.load(std::memory_order_acquire) < expected && seconds_now() - t0 < k_give_up)
          h = compute(h, 20);
        return arrived.load(std::memory_order_acquire) + static_cast<std::int64_t>(h & 0);
      });
  failures += long_tasks(n / 4);
  failures += progress_loop(n / 4);
  failures += all_to_one(n / 4);
  std::atomic<std::int64_t> replies{0};
  std::int64_t asked = 0;
  {
    mr::selector s{mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe from, auto& self) {
                     self.template send<1>(from, v + 1);
                   }),
                   mr::mailbox<std::int64_t>([&](std::int64_t v) {
                     asked += v;
                     replies.fetch_add(1, std::memory_order_release);
                   })};
    const std::int64_t k = n / 4;
    for (std::int64_t i = 0; i < k; ++i)
      s.send<0>(mr::pe(static_cast<int>(mix(static_cast<std::uint64_t>(i)) %
                                        static_cast<std::uint64_t>(g_pes))),
                i);
    // What the main flow staged goes to the progress thread at its next runtime call (flush()
    // here); the progress thread ships what it then holds once it has nothing else to do.
    s.flush();
    const double t0 = seconds_now();
    std::uint64_t h = 0;
    while (replies.load(std::memory_order_acquire) < k && seconds_now() - t0 < k_give_up)
      h = compute(h, 20);
    EXPECT(replies.load() == k,
           "the main flow computed while its %lld requests were answered, and saw %lld replies",
           static_cast<long long>(k), static_cast<long long>(replies.load() + (h & 0)));
    s.done<0>();
    s.wait();
    EXPECT(asked == k * (k + 1) / 2, "replies summed to %lld, expected %lld",
           static_cast<long long>(asked), static_cast<long long>(k * (k + 1) / 2));
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    const char* mode = argc > 1 ? argv[1] : "tasks";
    const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 100000;
    int failures = 0;
    if (std::strcmp(mode, "tasks") == 0) {
      failures += long_tasks(n);
    } else if (std::strcmp(mode, "loop") == 0) {
      failures += progress_loop(n);
    } else if (std::strcmp(mode, "to_one") == 0) {
      failures += all_to_one(n);
    } else if (std::strcmp(mode, "thread") == 0) {
      failures += progress_thread(n);
    } else {
      if (g_me == 0) std::printf("unknown mode %s: tasks, loop, to_one or thread\n", mode);
      return 2;
    }
    return mailroom_test::verdict(failures);
  });
}
