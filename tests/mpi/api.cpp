// SPDX-License-Identifier: MIT
// The rest of the public API, one check each: finish, yield, actors with erased handlers, mixed
// lambda types, destructors, messages that arrive before the local constructor ran, standalone
// conveyor loops, symmetric memory and its scopes, a long chain of dependent messages, handlers
// with state of their own, and the idle-sleep default. Every check runs; the program fails if any
// did.
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <mpi.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <span>
#include <thread>
#include <type_traits>
#include <vector>

namespace mr = mailroom;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::sum_over_pes;

// finish() waits for every selector constructed inside it, here an actor and a two-mailbox
// selector whose second mailbox only handlers feed; both outlive the finish body.
int finish_waits_for_two_selectors() {
  int failures = 0;
  constexpr std::int64_t k = 3000;
  std::int64_t got_a = 0, got_b = 0, got_c = 0;
  auto forward = [&](std::int64_t v, mr::pe from, auto& self) {
    got_b += v;
    self.template send<1>(from, v);
  };
  auto last = [&](std::int64_t v) { got_c += v; };
  using two_boxes = mr::selector<mr::mailbox_spec<std::int64_t, decltype(forward)>,
                                 mr::mailbox_spec<std::int64_t, decltype(last)>>;
  std::optional<mr::actor<std::int64_t>> a;
  std::optional<two_boxes> b;
  mr::finish([&] {
    a.emplace([&](std::int64_t v) { got_a += v; });
    b.emplace(mr::mailbox<std::int64_t>(forward), mr::mailbox<std::int64_t>(last));
    for (int p = 0; p < g_pes; ++p) {
      for (std::int64_t i = 0; i < k; ++i) {
        a->send(mr::pe(p), 1);
        b->send<0>(mr::pe(p), 2);
      }
    }
    a->done();
    b->done<0>();
  });
  // Every PE sent k messages to every PE: the counts here are known without a reduction.
  EXPECT(a->finished() && b->finished(), "finish returned before its selectors terminated");
  EXPECT(got_a == k * g_pes, "actor handled %lld, expected %lld", static_cast<long long>(got_a),
         static_cast<long long>(k * g_pes));
  EXPECT(got_b == 2 * k * g_pes && got_c == got_b, "selector handled %lld then %lld, expected %lld",
         static_cast<long long>(got_b), static_cast<long long>(got_c),
         static_cast<long long>(2 * k * g_pes));
  return failures;
}

// yield() runs pending handlers from user code: after done(), yielding alone delivers
// everything, before wait() is called.
int yield_runs_handlers() {
  int failures = 0;
  constexpr std::int64_t k = 5000;
  std::int64_t got = 0;
  EXPECT(mr::sender().rank() == -1, "sender() is %d outside handlers", mr::sender().rank());
  mr::actor<std::int64_t> a([&](std::int64_t v) { got += v; });
  for (int p = 0; p < g_pes; ++p)
    for (std::int64_t i = 0; i < k; ++i) a.send(mr::pe(p), 1);
  a.done();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got < k * g_pes && std::chrono::steady_clock::now() < deadline) mr::yield();
  EXPECT(got == k * g_pes, "yield() handled %lld messages, expected %lld",
         static_cast<long long>(got), static_cast<long long>(k * g_pes));
  a.wait();
  EXPECT(got == k * g_pes, "after wait(): %lld messages", static_cast<long long>(got));
  return failures;
}

// mr::actor<T> erases its handler's type; both handler signatures work.
int erased_handlers() {
  int failures = 0;
  std::int64_t sum_values = 0, sum_from = 0, count = 0;
  mr::actor<std::int64_t> with_from([&](std::int64_t v, mr::pe from) {
    sum_values += v;
    sum_from += from.rank() + 1;
  });
  mr::actor<std::int64_t> without_from([&](std::int64_t) { ++count; });
  for (int p = 0; p < g_pes; ++p) {
    with_from.send(mr::pe(p), g_me + 1);  // the value names the sender
    without_from.send(mr::pe(p), 0);
  }
  with_from.done();
  without_from.done();
  with_from.wait();
  without_from.wait();
  const std::int64_t expected = static_cast<std::int64_t>(g_pes) * (g_pes + 1) / 2;
  EXPECT(sum_values == expected && sum_from == expected,
         "values %lld, senders %lld, expected %lld each", static_cast<long long>(sum_values),
         static_cast<long long>(sum_from), static_cast<long long>(expected));
  EXPECT(count == g_pes, "handled %lld, expected %d", static_cast<long long>(count), int{g_pes});
  return failures;
}

// One lambda mailbox carrying closures of several types and sizes, interleaved at random (the
// runtime dispatches runs of same-type closures together, so the mix matters).
int mixed_lambda_types() {
  int failures = 0;
  constexpr std::int64_t n = 20000;
  auto hits = mr::symmetric_array<std::int64_t>(4);
  std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(g_me));
  std::int64_t sent[4] = {0, 0, 0, 0};
  {
    mr::actor<> l;
    for (std::int64_t i = 0; i < n; ++i) {
      const mr::pe to(static_cast<int>(rng() % static_cast<unsigned>(g_pes)));
      const std::int64_t v = static_cast<std::int64_t>(rng() % 1000);
      switch (rng() % 6) {
        case 0:
          l.send(to, [=] { hits[0] += 1; });
          sent[0] += 1;
          break;
        case 1: {
          const char odd[5] = {1, 2, 3, 4, static_cast<char>(v % 100)};  // a 5-byte capture
          l.send(to, [=] { hits[1] += odd[0] + odd[1] + odd[2] + odd[3] + odd[4]; });
          sent[1] += 10 + v % 100;
          break;
        }
        case 2:
          l.send(to, [=] { hits[2] += v; });
          sent[2] += v;
          break;
        default: {
          std::int64_t wide[12];
          for (std::int64_t k = 0; k < 12; ++k) wide[k] = v + k;
          l.send(to, [=] {
            std::int64_t t = 0;
            for (std::int64_t w : wide) t += w;
            hits[3] += t;
          });
          sent[3] += 12 * v + 66;
          break;
        }
      }
    }
    l.done();
    l.wait();
  }
  for (int k = 0; k < 4; ++k) {
    const std::int64_t got = sum_over_pes(hits[static_cast<std::size_t>(k)]);
    const std::int64_t want = sum_over_pes(sent[k]);
    EXPECT(got == want, "closure type %d: handled a sum of %lld, expected %lld", k,
           static_cast<long long>(got), static_cast<long long>(want));
  }
  mr::symmetric_free(hits);
  return failures;
}

// Lambda messages whose captures change at different rates (never, every message, every 7th,
// every 100th, once), so that runs keep, learn and relearn which words vary: closures of 3 and
// 5 words (a sending path per set of varying words), of 7 (a path per number of them, on both
// sides) and of 3 with 4 bytes of padding (cleared where the compiler can), sent to random PEs
// and interleaved. Each
// closure adds a hash of what it captured (40 bits of it, so that no sum overflows); the sums
// must be what the senders sent.
std::uint64_t mix(std::uint64_t h, std::int64_t x) {
  return (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ull;
}

// This PE's sums, for closures that capture only 4-byte values (so that their size is not a
// multiple of 8 and their last word is partial).
std::int64_t* g_sums = nullptr;

std::uint64_t hash(const std::array<std::int32_t, 13>& a) {
  std::uint64_t h = 1;
  for (const std::int32_t x : a) h = mix(h, x);
  return h >> 24;
}

int lambda_capture_patterns() {
  int failures = 0;
  constexpr std::int64_t n = 30000;
  auto sums = mr::symmetric_array<std::int64_t>(6);
  g_sums = sums.data();
  std::mt19937_64 rng(2000 + static_cast<std::uint64_t>(g_me));
  std::uint64_t sent[6] = {0, 0, 0, 0, 0, 0};
  {
    mr::actor<> l;
    for (std::int64_t i = 0; i < n; ++i) {
      const mr::pe to(static_cast<int>(rng() % static_cast<unsigned>(g_pes)));
      const std::int64_t every = i, seventh = i / 7, hundredth = i / 100, once = i < n / 2 ? 1 : 2;
      const std::int32_t small = static_cast<std::int32_t>(hundredth);
      switch (rng() % 6) {
        case 0: {
          const auto f = [=] {
            sums[0] += static_cast<std::int64_t>(mix(mix(1, seventh), every) >> 24);
          };
          static_assert(sizeof f == 24);
          l.send(to, f);
          sent[0] += mix(mix(1, seventh), every) >> 24;
          break;
        }
        case 1: {
          const auto f = [=] {
            const std::uint64_t h = mix(mix(mix(mix(1, hundredth), every), once), seventh);
            sums[1] += static_cast<std::int64_t>(h >> 24);
          };
          static_assert(sizeof f == 40);
          l.send(to, f);
          sent[1] += mix(mix(mix(mix(1, hundredth), every), once), seventh) >> 24;
          break;
        }
        case 2: {
          // Not a constant expression (g_me), so the closure captures it.
          const std::int64_t constant = 42 + g_me, thousandth = i / 1000;
          const auto f = [=] {
            const std::uint64_t h = mix(
                mix(mix(mix(mix(mix(1, constant), hundredth), every), once), seventh), thousandth);
            sums[3] += static_cast<std::int64_t>(h >> 24);
          };
          static_assert(sizeof f == 56);
          l.send(to, f);
          sent[3] += mix(mix(mix(mix(mix(mix(1, constant), hundredth), every), once), seventh),
                         thousandth) >>
                     24;
          break;
        }
        case 3: {  // 12 bytes: 2 words, the last one partial
          const auto e = static_cast<std::int32_t>(every), s = static_cast<std::int32_t>(seventh);
          const auto f = [=] {
            g_sums[4] += static_cast<std::int64_t>(mix(mix(mix(1, small), e), s) >> 24);
          };
          static_assert(sizeof f == 12);
          l.send(to, f);
          sent[4] += mix(mix(mix(1, small), e), s) >> 24;
          break;
        }
        case 4: {  // 52 bytes: 7 words, the last one partial and varying
          std::array<std::int32_t, 13> v{};
          for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::int32_t>(k) + g_me;
          v[0] = static_cast<std::int32_t>(every);
          v[5] = static_cast<std::int32_t>(seventh);
          v[12] = static_cast<std::int32_t>(3 * every + 1);
          const auto f = [=] { g_sums[5] += static_cast<std::int64_t>(hash(v)); };
          static_assert(sizeof f == 52);
          l.send(to, f);
          sent[5] += hash(v);
          break;
        }
        default: {
          const auto f = [=] {
            sums[2] += static_cast<std::int64_t>(mix(mix(1, small), every) >> 24);
          };
          static_assert(sizeof f == 24 && !std::has_unique_object_representations_v<decltype(f)>);
          l.send(to, f);
          sent[2] += mix(mix(1, small), every) >> 24;
          break;
        }
      }
    }
    l.done();
    l.wait();
  }
  const char* what[6] = {"3 words", "5 words",  "3 words with padding",
                         "7 words", "12 bytes", "52 bytes"};
  for (int k = 0; k < 6; ++k) {
    const std::int64_t got = sum_over_pes(sums[static_cast<std::size_t>(k)]);
    const std::int64_t want = sum_over_pes(static_cast<std::int64_t>(sent[k]));
    EXPECT(got == want, "closure of %s: handled a sum of %lld, expected %lld", what[k],
           static_cast<long long>(got), static_cast<long long>(want));
  }
  mr::symmetric_free(sums);
  return failures;
}

// A selector that leaves scope without done() ends this PE's streams and waits: nothing is
// lost, also for a mailbox fed only by handlers.
int destructor_ends_streams() {
  int failures = 0;
  constexpr std::int64_t k = 4000;
  std::int64_t first = 0, second = 0;
  {
    mr::selector sel{mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe from, auto& self) {
                       first += v;
                       self.template send<1>(from, v);
                     }),
                     mr::mailbox<std::int64_t>([&](std::int64_t v) { second += v; })};
    for (int p = 0; p < g_pes; ++p)
      for (std::int64_t i = 0; i < k; ++i) sel.send<0>(mr::pe(p), 1);
  }
  EXPECT(first == k * g_pes, "first mailbox handled %lld, expected %lld",
         static_cast<long long>(first), static_cast<long long>(k * g_pes));
  EXPECT(second == k * g_pes, "second mailbox handled %lld, expected %lld",
         static_cast<long long>(second), static_cast<long long>(k * g_pes));
  return failures;
}

// Lambda messages may take the sending PE and the selector whose mailbox runs them, like
// handlers: a request closure replies through `self` to `from`, mixed in one mailbox with
// closures that take nothing; an actor's closure takes only `from`.
int lambda_from_and_self() {
  int failures = 0;
  constexpr std::int64_t k = 5000;
  auto hits = mr::symmetric_array<std::int64_t>(4);  // requests, replies, plain, actor
  auto bad = mr::symmetric_array<std::int64_t>(1);   // a wrong `from`
  mr::selector sel{mr::lambdas{}, mr::lambdas{}};
  mr::actor<> act;
  for (int p = 0; p < g_pes; ++p) {
    for (std::int64_t i = 0; i < k; ++i)
      sel.send<0>(mr::pe(p), [=, origin = std::int64_t{g_me}](mr::pe from, auto& self) {
        if (from.rank() != origin) bad[0] += 1;
        hits[0] += 1;
        self.template send<1>(from, [=, at = std::int64_t{mr::this_pe().rank()}](mr::pe back) {
          if (back.rank() != at) bad[0] += 1;
          hits[1] += 1;
        });
      });
    sel.send<0>(mr::pe(p), [=] { hits[2] += 1; });
    act.send(mr::pe(p), [=, origin = std::int64_t{g_me}](mr::pe from) {
      if (from.rank() != origin) bad[0] += 1;
      hits[3] += 1;
    });
  }
  sel.done<0>();
  act.done();
  sel.wait();
  act.wait();
  EXPECT(hits[0] == k * g_pes && hits[1] == k * g_pes,
         "requests %lld, replies %lld, expected %lld each", static_cast<long long>(hits[0]),
         static_cast<long long>(hits[1]), static_cast<long long>(k * g_pes));
  EXPECT(hits[2] == g_pes && hits[3] == g_pes, "plain %lld, actor %lld, expected %d each",
         static_cast<long long>(hits[2]), static_cast<long long>(hits[3]), int{g_pes});
  EXPECT(bad[0] == 0, "%lld closures saw a wrong sender", static_cast<long long>(bad[0]));
  mr::symmetric_free(hits);
  mr::symmetric_free(bad);
  return failures;
}

// PE 0 constructs and sends at once while the others sleep before constructing: messages that
// arrive before the local constructor ran are kept, not lost.
int early_messages_are_kept() {
  int failures = 0;
  constexpr std::int64_t k = 20000;
  if (g_me != 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::int64_t got = 0, replies = 0;
  mr::selector sel{mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe from, auto& self) {
                     got += v;
                     self.template send<1>(from, v);
                   }),
                   mr::mailbox<std::int64_t>([&](std::int64_t) { ++replies; })};
  mr::actor<> lambda_actor;
  auto lambda_hits = mr::symmetric_array<std::int64_t>(1);
  if (g_me == 0) {
    for (int p = 0; p < g_pes; ++p) {
      for (std::int64_t i = 1; i <= k; ++i) sel.send<0>(mr::pe(p), i);
      lambda_actor.send(mr::pe(p), [=] { lambda_hits[0] += 1; });
    }
  }
  sel.done<0>();
  lambda_actor.done();
  sel.wait();
  lambda_actor.wait();
  EXPECT(got == k * (k + 1) / 2, "handled a sum of %lld, expected %lld",
         static_cast<long long>(got), static_cast<long long>(k * (k + 1) / 2));
  EXPECT(g_me != 0 || replies == k * g_pes, "PE 0 got %lld replies, expected %lld",
         static_cast<long long>(replies), static_cast<long long>(k * g_pes));
  EXPECT(lambda_hits[0] == 1, "lambda ran %lld times", static_cast<long long>(lambda_hits[0]));
  return failures;
}

// The standalone conveyor in Bale's loop: a histogram, then an index-gather whose replies are
// pushed from the pull loop (with unpull when the reply cannot be pushed yet).
int conveyor_loops() {
  int failures = 0;
  constexpr std::int64_t n = 30000, slots = 500;
  auto indices_of = [&](int p) {
    std::mt19937_64 rng(77 + static_cast<std::uint64_t>(p));
    std::vector<std::int64_t> out(n);
    for (auto& g : out) g = static_cast<std::int64_t>(rng() % (slots * g_pes));
    return out;
  };
  const auto index = indices_of(g_me);
  {
    std::vector<std::int64_t> histo(slots, 0), expected(slots, 0);
    for (int p = 0; p < g_pes; ++p)
      for (std::int64_t g : indices_of(p))
        if (g % g_pes == g_me) ++expected[static_cast<std::size_t>(g / g_pes)];
    mr::conveyor<std::int64_t> conv;
    std::int64_t i = 0, wrong_from = 0;
    while (conv.advance(i == n)) {
      for (; i < n; ++i)
        if (!conv.push(mr::pe(index[i] % g_pes), index[i] / g_pes)) break;
      std::int64_t slot = 0;
      mr::pe from;
      while (conv.pull(from, slot)) {
        ++histo[static_cast<std::size_t>(slot)];
        wrong_from += from.rank() < 0 || from.rank() >= g_pes;
      }
    }
    EXPECT(histo == expected && wrong_from == 0, "conveyor histogram differs from the recount");
  }
  {
    struct request {
      std::int64_t col, slot;
    };
    struct reply {
      std::int64_t slot, value;
    };
    mr::conveyor<request> requests;
    mr::conveyor<reply> replies;
    std::vector<std::int64_t> gather(n, -1);
    std::int64_t i = 0;
    bool more_requests = true, more_replies = true;
    while (more_requests || more_replies) {
      more_requests = requests.advance(i == n);
      more_replies = replies.advance(!more_requests);
      for (; i < n; ++i)
        if (!requests.push(mr::pe(index[i] % g_pes), request{index[i] / g_pes, i})) break;
      request q;
      mr::pe from;
      while (requests.pull(from, q)) {
        if (!replies.push(from, reply{q.slot, (q.col * g_pes + g_me) * 5})) {
          requests.unpull();
          break;
        }
      }
      reply r;
      while (replies.pull(from, r)) gather[static_cast<std::size_t>(r.slot)] = r.value;
    }
    std::int64_t bad = 0;
    for (std::int64_t j = 0; j < n; ++j) bad += gather[j] != index[j] * 5;
    EXPECT(bad == 0, "conveyor index-gather: %lld of %lld wrong", static_cast<long long>(bad),
           static_cast<long long>(n));
  }
  return failures;
}

// Symmetric arrays sit at the same address on every PE; freeing gives the space back, a new
// array is zeroed, and live arrays are never overlapped.
int symmetric_memory() {
  int failures = 0;
  auto same_everywhere = [](const void* p) {
    std::uint64_t v[2] = {reinterpret_cast<std::uint64_t>(p), ~reinterpret_cast<std::uint64_t>(p)};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return v[0] == reinterpret_cast<std::uint64_t>(p) &&
           ~v[1] == reinterpret_cast<std::uint64_t>(p);
  };
  auto a = mr::symmetric_array<std::int64_t>(1000);
  auto b = mr::symmetric_array<double>(333);
  EXPECT(same_everywhere(a.data()) && same_everywhere(b.data()), "addresses differ between PEs");
  EXPECT(a.size() == 1000 && b.size() == 333, "sizes %zu and %zu", a.size(), b.size());
  EXPECT(b.data() + 0 >= reinterpret_cast<double*>(a.end()) ||
             reinterpret_cast<std::int64_t*>(b.end()) <= a.data(),
         "two live arrays overlap");
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::int64_t>(i) + 1;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.5 * static_cast<double>(i) + 1;

  // Free the older one first: the younger stays live and must not be reused or clobbered.
  std::int64_t* const a_old = a.data();
  mr::symmetric_free(a);
  EXPECT(a.data() == nullptr && a.size() == 0, "symmetric_free left the handle set");
  auto c = mr::symmetric_array<std::int64_t>(2000);
  EXPECT(same_everywhere(c.data()), "address after free differs between PEs");
  EXPECT(reinterpret_cast<std::byte*>(c.data()) >= reinterpret_cast<std::byte*>(b.end()) ||
             reinterpret_cast<std::byte*>(c.end()) <= reinterpret_cast<std::byte*>(b.data()),
         "a new array overlaps a live one");
  std::int64_t nonzero = 0, b_changed = 0;
  for (std::size_t i = 0; i < c.size(); ++i) nonzero += c[i] != 0;
  for (std::size_t i = 0; i < b.size(); ++i) b_changed += b[i] != 0.5 * static_cast<double>(i) + 1;
  EXPECT(nonzero == 0, "%lld elements of a new array are not zero",
         static_cast<long long>(nonzero));
  EXPECT(b_changed == 0, "%lld elements of a live array changed",
         static_cast<long long>(b_changed));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = -1;

  // Free everything: a new, larger array reuses the space from the start, zeroed.
  mr::symmetric_free(c);
  mr::symmetric_free(b);
  auto d = mr::symmetric_array<std::int64_t>(5000);
  EXPECT(d.data() == a_old, "after freeing every array, a new one starts at %p, not %p",
         static_cast<void*>(d.data()), static_cast<void*>(a_old));
  nonzero = 0;
  for (std::size_t i = 0; i < d.size(); ++i) nonzero += d[i] != 0;
  EXPECT(nonzero == 0, "%lld elements of a reused array are not zero",
         static_cast<long long>(nonzero));
  // The memory is real and remote writes land in it: every PE writes its rank into slot `me` of
  // every PE.
  {
    mr::actor<> l;
    const std::int64_t me = g_me;
    for (int p = 0; p < g_pes; ++p)
      l.send(mr::pe(p), [=] { d[static_cast<std::size_t>(me)] = me + 1; });
    l.done();
    l.wait();
  }
  std::int64_t wrong = 0;
  for (int p = 0; p < g_pes; ++p) wrong += d[static_cast<std::size_t>(p)] != p + 1;
  EXPECT(wrong == 0, "%lld remote writes missing", static_cast<long long>(wrong));
  mr::symmetric_free(d);
  return failures;
}

// A symmetric_scope frees what was allocated inside it, and only that: also an array that took
// the place of an older one freed inside the scope, and not an older array still live.
int symmetric_scope_frees_its_arrays() {
  int failures = 0;
  auto kept = mr::symmetric_array<std::int64_t>(100);
  std::int64_t* const kept_at = kept.data();
  auto older = mr::symmetric_array<std::int64_t>(100);
  std::int64_t* const older_at = older.data();
  kept[7] = 7;
  {
    mr::symmetric_scope scope;
    mr::symmetric_free(older);                            // the top of the heap drops below it
    auto inside = mr::symmetric_array<std::int64_t>(50);  // so this one starts where older was
    EXPECT(inside.data() == older_at, "the freed space was not reused");
    const void* deeper_at = nullptr;
    {
      mr::symmetric_scope inner;
      auto deeper = mr::symmetric_array<std::int64_t>(10);
      deeper[0] = 1;
      deeper_at = deeper.data();
    }
    auto after_inner = mr::symmetric_array<std::int64_t>(10);
    EXPECT(after_inner.data() == deeper_at && after_inner[0] == 0,
           "the inner scope's array was not freed");
    inside[49] = 1;
  }
  auto next = mr::symmetric_array<std::int64_t>(100);
  EXPECT(next.data() == older_at, "after the scope, a new array starts at %p, not %p",
         static_cast<void*>(next.data()), static_cast<void*>(older_at));
  EXPECT(kept.size() == 100 && kept[7] == 7, "the scope freed or changed an older live array");
  std::int64_t nonzero = 0;
  for (std::int64_t v : next) nonzero += v != 0;
  EXPECT(nonzero == 0, "%lld elements of a reused array are not zero",
         static_cast<long long>(nonzero));
  mr::symmetric_free(next);
  mr::symmetric_free(kept);
  auto again = mr::symmetric_array<std::int64_t>(1);
  EXPECT(again.data() == kept_at, "the heap did not come back empty");
  mr::symmetric_free(again);
  return failures;
}

// With MAILROOM_IDLE_SLEEP_NS unset, idle PEs spin, unless this node has more PEs than cores:
// then they sleep, or the spinning ones would take the cores from those with work.
int idle_sleep_default() {
  int failures = 0;
  if (std::getenv("MAILROOM_IDLE_SLEEP_NS") != nullptr) return 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int here = 0;
  MPI_Comm_size(node, &here);
  MPI_Comm_free(&node);
  const bool oversubscribed = here > sysconf(_SC_NPROCESSORS_ONLN);
  const std::uint64_t got = mr::current_config().idle_sleep_ns;
  EXPECT(oversubscribed ? got > 0 : got == 0, "%d PEs on %ld cores, idle sleep %llu ns", here,
         sysconf(_SC_NPROCESSORS_ONLN), static_cast<unsigned long long>(got));
  return failures;
}

// 100000 dependent messages, each sent by the previous one's handler to the next PE's mailbox:
// the self-loop terminates by quiescence, and local delivery never recurses.
int long_dependent_chain() {
  int failures = 0;
  constexpr std::int64_t hops = 100000;
  std::int64_t handled = 0, last_seen = -1;
  mr::selector chain{mr::graph{{0, 0}},
                     mr::mailbox<std::int64_t>([&](std::int64_t left, mr::pe, auto& self) {
                       ++handled;
                       if (left == 0) last_seen = handled;
                       if (left > 0) self.template send<0>(mr::pe((g_me + 1) % g_pes), left - 1);
                     })};
  if (g_me == 0) chain.send<0>(mr::pe(0), hops);
  chain.done<0>();
  chain.wait();
  const std::int64_t total = sum_over_pes(handled);
  EXPECT(total == hops + 1, "%lld messages handled, expected %lld", static_cast<long long>(total),
         static_cast<long long>(hops + 1));
  EXPECT(sum_over_pes(last_seen >= 0 ? 1 : 0) == 1, "the last message was not seen exactly once");
  return failures;
}

// A handler may keep state of its own between messages: a mutable lambda, an assignable functor
// and one that cannot be assigned but counts in a mutable member (the runtime may call a copy of
// the handler for a buffer and copy it back). Its count must go on across buffers: every PE
// sends 3 buffers' worth to every PE.
int stateful_handlers() {
  int failures = 0;
  struct counter {
    std::int64_t n = 0;
    std::int64_t* last;
    void operator()(std::int64_t) { *last = ++n; }
  };
  static_assert(std::is_trivially_copyable_v<counter> && std::is_copy_assignable_v<counter>);
  struct cached {  // cannot be assigned (a const member); counts in a mutable one, called as const
    const std::int64_t step;
    mutable std::int64_t n;
    std::int64_t* last;
    void operator()(std::int64_t) const { *last = n += step; }
  };
  static_assert(std::is_trivially_copyable_v<cached> && !std::is_copy_assignable_v<cached>);
  const auto per_pe = static_cast<std::int64_t>(3 * mr::current_config().buffer_bytes / 8);
  std::int64_t last_lambda = 0, last_functor = 0, last_cached = 0;
  {
    mr::actor by_lambda{mr::mailbox<std::int64_t>(
        [n = std::int64_t{0}, &last_lambda](std::int64_t) mutable { last_lambda = ++n; })};
    mr::actor by_functor{mr::mailbox<std::int64_t>(counter{0, &last_functor})};
    mr::actor by_cached{mr::mailbox<std::int64_t>(cached{1, 0, &last_cached})};
    for (int p = 0; p < g_pes; ++p)
      for (std::int64_t i = 0; i < per_pe; ++i) {
        by_lambda.send(mr::pe(p), i);
        by_functor.send(mr::pe(p), i);
        by_cached.send(mr::pe(p), i);
      }
    by_lambda.done();
    by_functor.done();
    by_cached.done();
    by_lambda.wait();
    by_functor.wait();
    by_cached.wait();
  }
  const std::int64_t expected = per_pe * g_pes;
  EXPECT(last_lambda == expected && last_functor == expected && last_cached == expected,
         "the mutable lambda counted %lld, the functor %lld, the const functor %lld, of %lld "
         "messages",
         static_cast<long long>(last_lambda), static_cast<long long>(last_functor),
         static_cast<long long>(last_cached), static_cast<long long>(expected));
  return failures;
}

// A symmetric object is one per PE at the same address; each PE constructs it with its own
// value, and a closure capturing the handle reads the value of the PE it runs on.
int symmetric_object() {
  int failures = 0;
  struct state {
    std::int64_t rank;
    std::int64_t* seen;  // this PE's counts, per sender
  };
  mr::symmetric_scope scope;
  // seen[p]: closures from PE p; seen[P]: closures that read another PE's value.
  std::vector<std::int64_t> seen(static_cast<std::size_t>(g_pes) + 1, 0);
  const mr::symmetric<state> here({g_me, seen.data()});
  static_assert(sizeof here == sizeof(void*) && std::is_trivially_copyable_v<decltype(here)>);
  EXPECT(here->rank == g_me && (*here).seen == seen.data(), "the value is not this PE's");
  {
    mr::actor<> l;
    const std::int64_t me = g_me, pes = g_pes;
    for (int p = 0; p < g_pes; ++p)
      for (int k = 0; k <= p; ++k)  // PE p gets p + 1 closures from every PE
        l.send(mr::pe(p), [=](mr::pe from) {
          const bool right = here->rank == mr::this_pe().rank() && from.rank() == me;
          ++here->seen[right ? me : pes];
        });
    l.done();
    l.wait();
  }
  EXPECT(seen.back() == 0, "%lld closures read another PE's value",
         static_cast<long long>(seen.back()));
  for (int p = 0; p < g_pes; ++p)
    EXPECT(seen[static_cast<std::size_t>(p)] == g_me + 1, "PE %d's closures counted %lld, not %d",
           p, static_cast<long long>(seen[static_cast<std::size_t>(p)]), g_me + 1);
  return failures;
}

// send(mr::to<I>, pe, msg) from generic handlers (no `template` keyword) reaches mailbox I of
// every kind: typed, variable-size (from a vector) and lambdas; and from user code too. Every PE
// sends a number to every PE, which answers with two words, answered in turn by a closure that
// counts on the first PE.
int send_by_mailbox_argument() {
  int failures = 0;
  std::int64_t typed = 0, words = 0;
  mr::symmetric_scope scope;
  auto ran = mr::symmetric_array<std::int64_t>(1);
  ran[0] = 0;
  mr::barrier();
  {
    mr::selector sel{mr::graph({{0, 1}, {1, 2}}, {0}),
                     mr::mailbox<std::int64_t>([&](std::int64_t v, mr::pe from, auto& self) {
                       ++typed;
                       self.send(mr::to<1>, from, std::vector<std::int64_t>{v, v + 1});
                     }),
                     mr::mailbox<mr::span_of<std::int64_t>>(
                         [&](std::span<const std::int64_t> w, mr::pe from, auto& self) {
                           words += static_cast<std::int64_t>(w.size());
                           self.send(mr::to<2>, from, [ran] { ran[0] += 1; });
                         }),
                     mr::lambdas{}};
    for (int p = 0; p < g_pes; ++p) sel.send(mr::to<0>, mr::pe(p), std::int64_t{p});
    sel.done<0>();
    sel.wait();
  }
  EXPECT(typed == g_pes && words == 2 * g_pes && ran[0] == g_pes,
         "%lld typed, %lld words, %lld closures, expected %d, %d and %d",
         static_cast<long long>(typed), static_cast<long long>(words),
         static_cast<long long>(ran[0]), static_cast<int>(g_pes), 2 * static_cast<int>(g_pes),
         static_cast<int>(g_pes));
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  struct named {
    const char* name;
    int (*run)();
  };
  const named checks[] = {{"finish_waits_for_two_selectors", finish_waits_for_two_selectors},
                          {"yield_runs_handlers", yield_runs_handlers},
                          {"erased_handlers", erased_handlers},
                          {"mixed_lambda_types", mixed_lambda_types},
                          {"lambda_capture_patterns", lambda_capture_patterns},
                          {"lambda_from_and_self", lambda_from_and_self},
                          {"destructor_ends_streams", destructor_ends_streams},
                          {"early_messages_are_kept", early_messages_are_kept},
                          {"conveyor_loops", conveyor_loops},
                          {"symmetric_memory", symmetric_memory},
                          {"symmetric_scope_frees_its_arrays", symmetric_scope_frees_its_arrays},
                          {"symmetric_object", symmetric_object},
                          {"long_dependent_chain", long_dependent_chain},
                          {"stateful_handlers", stateful_handlers},
                          {"idle_sleep_default", idle_sleep_default},
                          {"send_by_mailbox_argument", send_by_mailbox_argument}};
  int failed = 0;
  for (const auto& c : checks) {
    const double t0 = mr::wtime();
    const std::int64_t f = sum_over_pes(c.run());
    const double t = mr::wtime() - t0;
    if (g_me == 0) std::printf("%-32s %s  %.2f s\n", c.name, f == 0 ? "PASSED" : "FAILED", t);
    std::fflush(stdout);
    failed += f != 0;
  }
  return failed == 0 ? 0 : 1;
}
