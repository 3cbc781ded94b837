// SPDX-License-Identifier: MIT
// Tasks inside a PE (MAILROOM_WORKERS): sends from every worker at once, delivered exactly once
// (typed and lambda mailboxes), nested finish, tasks spawned by handlers (in a chain and in a
// cycle), futures of tasks waited for by other tasks. Run with 1 to 4 workers at 1 to 4 PEs.
#include "expect.hpp"

#include <mailroom/mailroom.hpp>

#include <atomic>
#include <cstdint>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

namespace {

// Every PE sends n messages {from, k} from a parallel loop, to PE mix(k) % P; each receiver
// marks what it got in a per-source table. Checks that every message arrived exactly once.
int exactly_once_typed(std::int64_t n) {
  int failures = 0;
  struct msg {
    std::int32_t from;
    std::int32_t pad;
    std::int64_t k;
  };
  const int P = g_pes;
  // got[src][k]: how many times message k of src arrived here (only those meant for here).
  std::vector<std::vector<std::uint8_t>> got(
      static_cast<std::size_t>(P), std::vector<std::uint8_t>(static_cast<std::size_t>(n), 0));
  std::int64_t wrong_place = 0;
  {
    mr::actor<msg> a([&](const msg& m, mr::pe from) {
      if (m.from != from.rank() || static_cast<int>(mix(static_cast<std::uint64_t>(m.k)) %
                                                    static_cast<std::uint64_t>(P)) != g_me)
        ++wrong_place;
      else
        ++got[static_cast<std::size_t>(m.from)][static_cast<std::size_t>(m.k)];
    });
    std::vector<std::atomic<std::int64_t>> by_worker(static_cast<std::size_t>(mr::num_workers()));
    mr::parallel_for(std::int64_t{0}, n, [&](std::int64_t k) {
      a.send(mr::pe(static_cast<int>(mix(static_cast<std::uint64_t>(k)) %
                                     static_cast<std::uint64_t>(P))),
             msg{g_me, 0, k});
      by_worker[static_cast<std::size_t>(mr::this_worker())].fetch_add(1,
                                                                       std::memory_order_relaxed);
    });
    std::int64_t total = 0;
    for (auto& c : by_worker) total += c.load();
    EXPECT(total == n, "the loop ran %lld iterations of %lld", static_cast<long long>(total),
           static_cast<long long>(n));
    a.done();
    a.wait();
  }
  EXPECT(wrong_place == 0, "%lld messages arrived at the wrong PE or with the wrong sender",
         static_cast<long long>(wrong_place));
  std::int64_t missing = 0, duplicated = 0;
  for (int s = 0; s < P; ++s)
    for (std::int64_t k = 0; k < n; ++k) {
      const bool mine = static_cast<int>(mix(static_cast<std::uint64_t>(k)) %
                                         static_cast<std::uint64_t>(P)) == g_me;
      const int c = got[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
      if (mine && c == 0) ++missing;
      if (c > 1 || (!mine && c != 0)) ++duplicated;
    }
  EXPECT(missing == 0 && duplicated == 0, "%lld messages missing, %lld duplicated or misplaced",
         static_cast<long long>(missing), static_cast<long long>(duplicated));
  return failures;
}

// Lambda messages from every worker, into a symmetric array: each PE adds k + 1 at slot k % m
// of PE k % P; sums checked. Two closure types, interleaved (runs of one type in a worker's
// block to its own PE), the second checking its `from`.
int exactly_once_lambdas(std::int64_t n) {
  int failures = 0;
  const int P = g_pes;
  constexpr std::int64_t m = 64;
  auto sums = mr::symmetric_array<std::int64_t>(m);
  for (std::int64_t i = 0; i < m; ++i) sums[i] = 0;
  mr::barrier();
  {
    mr::actor<> l;
    mr::parallel_for(
        std::int64_t{0}, n,
        [&](std::int64_t k) {
          if (k % 3 != 0) {
            l.send(mr::pe(static_cast<int>(k % P)), [=] { sums[k % m] += k + 1; });
          } else {
            const int src = g_me;
            l.send(mr::pe(static_cast<int>(k % P)),
                   [=](mr::pe from) { sums[k % m] += from.rank() == src ? k + 1 : 1000000000; });
          }
        },
        std::int64_t{7});
    l.done();
    l.wait();
  }
  mr::barrier();
  // Slot i of PE r holds the sum over k in [0, n) with k % P == r and k % m == i of k + 1, from
  // each of the P senders.
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t want = 0;
    for (std::int64_t k = 0; k < n; ++k)
      if (k % P == g_me && k % m == i) want += (k + 1) * P;
    if (sums[i] != want) ++bad;
  }
  EXPECT(bad == 0, "%lld slots with wrong sums", static_cast<long long>(bad));
  mr::barrier();
  return failures;
}

// Nested finish: each task opens a finish that spawns more tasks; the outer finish returns only
// once all have run.
int nested_finish() {
  int failures = 0;
  std::atomic<std::int64_t> ran{0};
  std::atomic<std::int64_t> inner_late{0};
  mr::finish([&] {
    for (int i = 0; i < 20; ++i)
      mr::spawn([&] {
        std::atomic<int> inner{0};
        mr::finish([&] {
          for (int j = 0; j < 10; ++j)
            mr::spawn([&] {
              mr::spawn([&] {
                inner.fetch_add(1);
                ran.fetch_add(1);
              });  // (transitively)
              inner.fetch_add(1);
              ran.fetch_add(1);
            });
        });
        if (inner.load() != 20) inner_late.fetch_add(1);
      });
  });
  EXPECT(ran.load() == 400, "the outer finish returned after %lld of 400 tasks",
         static_cast<long long>(ran.load()));
  EXPECT(inner_late.load() == 0, "%lld inner finishes returned before their tasks",
         static_cast<long long>(inner_late.load()));
  return failures;
}

// forasync spawns the pieces and returns; the enclosing finish waits for all of them. Chunks:
// every index in exactly one piece.
int forasync_and_chunks(std::int64_t n) {
  int failures = 0;
  std::atomic<std::int64_t> sum{0}, covered{0};
  mr::finish([&] {
    mr::forasync(
        std::int64_t{0}, n, [&sum](std::int64_t i) { sum.fetch_add(i + 1); }, std::int64_t{5});
  });
  EXPECT(sum.load() == n * (n + 1) / 2, "forasync: sum %lld, not %lld",
         static_cast<long long>(sum.load()), static_cast<long long>(n * (n + 1) / 2));
  std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
  mr::parallel_for_chunks(
      std::int64_t{0}, n,
      [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) seen[static_cast<std::size_t>(i)].fetch_add(1);
        covered.fetch_add(hi - lo);
      },
      std::int64_t{3});
  std::int64_t wrong = 0;
  for (auto& c : seen) wrong += c.load() != 1;
  EXPECT(wrong == 0 && covered.load() == n, "parallel_for_chunks: %lld indices not run once",
         static_cast<long long>(wrong));
  return failures;
}

// Sends from tasks whose futures are waited for, then done() with no finish around them: what a
// task sent is in worker 0's hands once its value is.
int async_sends_then_done(std::int64_t per_task) {
  int failures = 0;
  const int P = g_pes;
  std::int64_t got = 0;
  {
    mr::actor<std::int64_t> a([&](std::int64_t v) { got += v; });
    std::vector<mr::future<std::int64_t>> fs;
    for (int t = 0; t < 8; ++t)
      fs.push_back(mr::async([&a, per_task, P] {
        for (std::int64_t k = 0; k < per_task; ++k) a.send(mr::pe(static_cast<int>(k % P)), 1);
        return per_task;
      }));
    std::int64_t sent = 0;
    for (auto& f : fs) sent += f.get();
    EXPECT(sent == 8 * per_task, "the tasks report %lld sends", static_cast<long long>(sent));
    a.done();
    a.wait();
  }
  const std::int64_t total = mr::all_reduce(got);
  EXPECT(total == 8 * per_task * P, "%lld messages arrived in all, not %lld",
         static_cast<long long>(total), static_cast<long long>(8 * per_task * P));
  return failures;
}

// Futures of tasks: values, a task that waits for another's future, when_all, then.
int futures_across_tasks() {
  int failures = 0;
  std::vector<mr::future<std::int64_t>> fs;
  for (std::int64_t i = 0; i < 50; ++i) fs.push_back(mr::async([i] { return i * i; }));
  std::vector<mr::future<std::int64_t>> gs;
  for (std::int64_t i = 0; i < 50; ++i) {
    auto f = fs[static_cast<std::size_t>(i)];
    gs.push_back(mr::async([f] { return f.get() + 1; }));  // waits in a task
  }
  auto all = mr::when_all(gs).then([](const std::vector<std::int64_t>& v) {
    std::int64_t s = 0;
    for (auto x : v) s += x;
    return s;
  });
  std::int64_t want = 0;
  for (std::int64_t i = 0; i < 50; ++i) want += i * i + 1;
  EXPECT(all.get() == want, "when_all of task futures: %lld, not %lld",
         static_cast<long long>(all.get()), static_cast<long long>(want));
  auto v = mr::async([] {});
  v.get();
  EXPECT(v.ready(), "a future<void> of a task is not ready after get()");
  return failures;
}

// A handler spawns a task per message that sends on to the next mailbox (chain 0 -> 1): the
// selector must not terminate before those tasks have run and their sends arrived.
int tasks_from_handlers(std::int64_t n) {
  int failures = 0;
  const int P = g_pes;
  std::int64_t second = 0, second_sum = 0;
  {
    mr::selector sel{mr::mailbox<std::int64_t>([&](std::int64_t k, mr::pe, auto& self) {
                       mr::spawn([k, &self] {
                         self.template send<1>(mr::pe(static_cast<int>((k + 1) % g_pes)), k);
                       });
                     }),
                     mr::mailbox<std::int64_t>([&](std::int64_t k) {
                       ++second;
                       second_sum += k;
                     })};
    mr::parallel_for(std::int64_t{0}, n,
                     [&](std::int64_t k) { sel.send<0>(mr::pe(static_cast<int>(k % P)), k); });
    sel.done<0>();
    sel.wait();
  }
  // Every PE sends k in [0, n) to k % P, which forwards it to (k + 1) % P.
  std::int64_t want = 0, want_sum = 0;
  for (std::int64_t k = 0; k < n; ++k)
    if ((k + 1) % P == g_me) {
      want += P;
      want_sum += k * P;
    }
  EXPECT(second == want && second_sum == want_sum,
         "mailbox 1 handled %lld messages (sum %lld), not %lld (sum %lld)",
         static_cast<long long>(second), static_cast<long long>(second_sum),
         static_cast<long long>(want), static_cast<long long>(want_sum));
  return failures;
}

// A cycle: a handler's task sends the token on to the next PE until it has made `hops` hops.
int tasks_in_a_cycle(std::int64_t tokens, std::int64_t hops) {
  int failures = 0;
  std::int64_t arrived = 0;
  {
    mr::selector ring(
        mr::graph{{0, 0}}, mr::mailbox<std::int64_t>([&](std::int64_t left, mr::pe, auto& self) {
          ++arrived;
          if (left > 0)
            mr::spawn([left, &self] {
              self.template send<0>(mr::pe((mr::this_pe().rank() + 1) % g_pes), left - 1);
            });
        }));
    mr::parallel_for(std::int64_t{0}, tokens,
                     [&](std::int64_t) { ring.send<0>(mr::pe((g_me + 1) % g_pes), hops - 1); });
    ring.done<0>();
    ring.wait();
  }
  const std::int64_t total = mr::all_reduce(arrived);
  EXPECT(total == tokens * hops * g_pes, "%lld arrivals in all, not %lld",
         static_cast<long long>(total), static_cast<long long>(tokens * hops * g_pes));
  return failures;
}

// A concurrent mailbox (its handlers on every worker) forwards each message to an ordinary one,
// whose handlers must still run one at a time. Every message counted exactly once at both.
int concurrent_handlers(std::int64_t n) {
  int failures = 0;
  const int P = g_pes;
  std::vector<std::atomic<std::int32_t>> first(static_cast<std::size_t>(n * P));
  std::vector<std::int32_t> second(static_cast<std::size_t>(n * P), 0);
  std::atomic<int> inside{0};
  std::int64_t overlaps = 0;
  std::atomic<std::int64_t> off_worker0{0};
  {
    mr::selector sel{mr::mailbox<std::int64_t>(
                         [&](std::int64_t id, mr::pe, auto& self) {
                           first[static_cast<std::size_t>(id)].fetch_add(1,
                                                                         std::memory_order_relaxed);
                           if (mr::this_worker() != 0)
                             off_worker0.fetch_add(1, std::memory_order_relaxed);
                           self.template send<1>(mr::pe(static_cast<int>((id + 1) % P)), id);
                         },
                         mr::concurrent),
                     mr::mailbox<std::int64_t>([&](std::int64_t id) {
                       if (inside.fetch_add(1) != 0) ++overlaps;
                       ++second[static_cast<std::size_t>(id)];
                       inside.fetch_sub(1);
                     })};
    // Every PE sends id k + r to PE r, for each multiple k of P below nP.
    mr::parallel_for(std::int64_t{0}, n * P, [&](std::int64_t k) {
      if (k % P != 0) return;
      for (int r = 0; r < P; ++r) sel.send<0>(mr::pe(r), k + r);  // id k + r to PE r
    });
    sel.done<0>();
    sel.wait();
  }
  // PE r received base + r from each of the P senders (base over multiples of P in [0, nP)):
  // P times each id with id % P == r. Mailbox 1 of PE r got the ids with (id + 1) % P == r.
  std::int64_t bad_first = 0, bad_second = 0;
  for (std::int64_t id = 0; id < n * P; ++id) {
    const int want_first = id % P == g_me ? P : 0;
    const int want_second = (id + 1) % P == g_me ? P : 0;
    if (first[static_cast<std::size_t>(id)].load() != want_first) ++bad_first;
    if (second[static_cast<std::size_t>(id)] != want_second) ++bad_second;
  }
  EXPECT(bad_first == 0, "%lld ids handled a wrong number of times by the concurrent mailbox",
         static_cast<long long>(bad_first));
  EXPECT(bad_second == 0, "%lld ids handled a wrong number of times by the ordinary mailbox",
         static_cast<long long>(bad_second));
  EXPECT(overlaps == 0, "the ordinary mailbox ran %lld handlers while another ran",
         static_cast<long long>(overlaps));
  if (mr::num_workers() == 1)
    EXPECT(off_worker0.load() == 0, "with one worker, %lld handlers ran off worker 0",
           static_cast<long long>(off_worker0.load()));
  return failures;
}

// Sends of pool workers to their own PE are handled straight from their blocks, by whichever
// worker is free, yet an ordinary mailbox's handlers still run one at a time, each message once,
// with `from` and sender() this PE; over a team too, where `from` is the rank in the team.
int sends_to_own_pe(std::int64_t n) {
  int failures = 0;
  struct msg {
    std::int32_t from;   // the sender's rank (in the team)
    std::int32_t world;  // and in the job
    std::int64_t k;
  };
  const mr::team halves = mr::team::world().split(g_me % 2, g_me);
  for (const bool over_team : {false, true}) {
    const int size = over_team ? halves.size() : g_pes;
    const int me = over_team ? halves.rank() : g_me;
    std::vector<std::int32_t> got(static_cast<std::size_t>(n * size), 0);
    std::atomic<int> inside{0};
    std::int64_t overlaps = 0, bad = 0, off_worker0 = 0;
    auto handler = [&](const msg& m, mr::pe from) {
      if (inside.fetch_add(1) != 0) ++overlaps;
      if (m.from != from.rank() || m.world != mr::sender().rank() || m.k < 0 || m.k >= n)
        ++bad;
      else
        ++got[static_cast<std::size_t>(m.from * n + m.k)];
      if (mr::this_worker() != 0) ++off_worker0;
      inside.fetch_sub(1);
    };
    auto run = [&](auto& a) {
      // Most to this PE (the path under test), the rest spread over the others.
      mr::parallel_for(std::int64_t{0}, n, [&](std::int64_t k) {
        const int dest = k % 4 != 0 ? me
                                    : static_cast<int>(mix(static_cast<std::uint64_t>(k)) %
                                                       static_cast<std::uint64_t>(size));
        a.send(mr::pe(dest), msg{me, g_me, k});
      });
      a.done();
      a.wait();
    };
    if (over_team) {
      mr::actor<msg> a(halves, handler);
      run(a);
    } else {
      mr::actor<msg> a(handler);
      run(a);
    }
    std::int64_t wrong = 0;
    for (int r = 0; r < size; ++r)
      for (std::int64_t k = 0; k < n; ++k) {
        const int dest = k % 4 != 0 ? r
                                    : static_cast<int>(mix(static_cast<std::uint64_t>(k)) %
                                                       static_cast<std::uint64_t>(size));
        if (got[static_cast<std::size_t>(r * n + k)] != (dest == me ? 1 : 0)) ++wrong;
      }
    EXPECT(bad == 0, "%s: %lld messages with a wrong from, sender() or id",
           over_team ? "team" : "job", static_cast<long long>(bad));
    EXPECT(wrong == 0, "%s: %lld messages handled a wrong number of times",
           over_team ? "team" : "job", static_cast<long long>(wrong));
    EXPECT(overlaps == 0, "%s: the mailbox ran %lld handlers while another ran",
           over_team ? "team" : "job", static_cast<long long>(overlaps));
    if (mr::num_workers() == 1)
      EXPECT(off_worker0 == 0, "with one worker, %lld handlers ran off worker 0",
             static_cast<long long>(off_worker0));
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    int failures = 0;
    failures += exactly_once_typed(20000);
    failures += exactly_once_lambdas(5000);
    failures += nested_finish();
    failures += forasync_and_chunks(1000);
    failures += async_sends_then_done(3000);
    failures += futures_across_tasks();
    failures += tasks_from_handlers(3000);
    failures += tasks_in_a_cycle(50, 20);
    failures += concurrent_handlers(4000);
    failures += sends_to_own_pe(20000);
    return mailroom_test::verdict(failures);
  });
}
