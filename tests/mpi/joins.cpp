// SPDX-License-Identifier: MIT
// Joins (make_join): messages with the same key on several mailboxes meet in one handler.
//  - A 3-way join: for each key k (owned by PE k % P), c(k) copies (1 to 3) arrive on each of
//    inputs A, B and C, every copy sent by a PE chosen from (k, copy, input), so the copies of a
//    key come from different PEs in no particular order. Its handler, in the form
//    handler(a, from_a, b, from_b, c, from_c, self), checks the keys and the senders, and sends
//    the match on to mailbox 3 of the next PE (a join sends like its inputs' handlers).
//  - A 2-way join on another selector, handler(a, b), whose keys arrive once each, sent from
//    parallel loops (with MAILROOM_WORKERS > 1 from every worker).
// Checks: every key matched c(k) times (count and sums of the copies' numbers on every input),
// every forwarded match handled once, nothing left waiting.
// Usage: joins [keys per PE]
#include <mailroom/join.hpp>
#include <mailroom/mailroom.hpp>

#include "expect.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;

namespace {

struct part {
  std::int64_t key;
  std::int64_t copy;  // which copy of the key on this input (0 .. copies(key) - 1)
};
struct tag {
  std::int64_t key;
};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 29;
  return x;
}
std::int64_t copies(std::int64_t key) {
  return 1 + static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(key)) % 3);
}
// The PE that sends copy j of key k on input i.
int sender(std::int64_t k, std::int64_t j, int input) {
  return static_cast<int>(mix(static_cast<std::uint64_t>(k) * 8 +
                              static_cast<std::uint64_t>(j) * 3 +
                              static_cast<std::uint64_t>(input)) %
                          static_cast<std::uint64_t>(g_pes));
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t per_pe = argc > 1 ? std::atoll(argv[1]) : 20000;
  const std::int64_t keys = per_pe * g_pes;
  int failures = 0;

  std::int64_t matches = 0, copy_sums = 0, forwarded = 0, forwarded_keys = 0;
  auto three = mr::make_join<part, part, tag>(
      [](const auto& m) { return m.key; },
      [&](const part& a, mr::pe from_a, const part& b, mr::pe from_b, const tag& c, mr::pe from_c,
          auto& self) {
        ++matches;
        if (a.key != b.key || a.key != c.key || a.key % g_pes != g_me) ++failures;
        if (from_a.rank() != sender(a.key, a.copy, 0) || from_b.rank() != sender(b.key, b.copy, 1))
          ++failures;
        (void)from_c;
        copy_sums += a.copy + b.copy;
        self.template send<3>(mr::pe((g_me + 1) % g_pes), tag{a.key});
      });
  {
    mr::selector sel{mr::graph({{0, 3}, {1, 3}, {2, 3}}, {0, 1, 2}),
                     mr::mailbox<part>(three.input<0>()), mr::mailbox<part>(three.input<1>()),
                     mr::mailbox<tag>(three.input<2>()), mr::mailbox<tag>([&](tag t) {
                       ++forwarded;
                       forwarded_keys += t.key;
                     })};
    for (std::int64_t k = 0; k < keys; ++k) {
      const mr::pe owner(static_cast<int>(k % g_pes));
      for (std::int64_t j = 0; j < copies(k); ++j) {
        if (sender(k, j, 0) == g_me) sel.send<0>(owner, part{k, j});
        if (sender(k, j, 1) == g_me) sel.send<1>(owner, part{k, j});
        if (sender(k, j, 2) == g_me) sel.send<2>(owner, tag{k});
      }
    }
    sel.done<0>();
    sel.done<1>();
    sel.done<2>();
    sel.wait();
  }
  EXPECT(three.waiting() == 0, "%zu messages still wait in the join", three.waiting());

  // (Atomics: with workers, the two inputs' handlers may run on two threads at once.)
  std::atomic<std::int64_t> pairs{0}, pair_sum{0};
  std::atomic<int> wrong_pairs{0};
  auto two = mr::make_join<part, tag>([](const auto& m) { return m.key; },
                                      [&](const part& a, const tag& b) {
                                        ++pairs;
                                        if (a.key != b.key) ++wrong_pairs;
                                        pair_sum += a.key;
                                      });
  {
    mr::selector sel{mr::graph({}, {0, 1}), mr::mailbox<part>(two.input<0>()),
                     mr::mailbox<tag>(two.input<1>())};
    // Key k's part comes from PE k % P, its tag from the PE before: the two ends of every
    // pair are different PEs (from 2 PEs on). Sent from parallel loops: with workers, a pool
    // worker may handle the first arrival on a PE (what it sent to its own PE).
    const std::int64_t mine = (keys - g_me + g_pes - 1) / g_pes;
    mr::parallel_for(std::int64_t{0}, mine, [&](std::int64_t i) {
      const std::int64_t k = g_me + i * g_pes;
      const mr::pe owner(
          static_cast<int>(mix(static_cast<std::uint64_t>(k)) % static_cast<std::uint64_t>(g_pes)));
      sel.send<0>(owner, part{k, 0});
    });
    const std::int64_t first = (g_me + 1) % g_pes;
    mr::parallel_for(std::int64_t{0}, (keys - first + g_pes - 1) / g_pes, [&](std::int64_t i) {
      const std::int64_t k = first + i * g_pes;
      const mr::pe owner(
          static_cast<int>(mix(static_cast<std::uint64_t>(k)) % static_cast<std::uint64_t>(g_pes)));
      sel.send<1>(owner, tag{k});
    });
    sel.done<0>();
    sel.done<1>();
    sel.wait();
  }
  failures += wrong_pairs.load();

  // What every key's copies add up to.
  std::int64_t want_matches = 0, want_copy_sums = 0, want_keys = 0;
  for (std::int64_t k = 0; k < keys; ++k) {
    const std::int64_t c = copies(k);
    want_matches += c;
    want_copy_sums += c * (c - 1);  // sum of copy numbers, on two inputs
    want_keys += c * k;
  }
  // (Through mailroom, not MPI: beside a progress thread, MAILROOM_PROGRESS=thread, a call of
  // the program's own to MPI would need MPI_THREAD_MULTIPLE.)
  const std::array<std::int64_t, 6> mine = {matches,        copy_sums,    forwarded,
                                            forwarded_keys, pairs.load(), pair_sum.load()};
  std::array<std::int64_t, 6> totals{};
  mr::all_reduce(std::span<const std::int64_t>(mine), std::span<std::int64_t>(totals));
  EXPECT(totals[0] == want_matches, "3-way join: %lld matches, expected %lld",
         static_cast<long long>(totals[0]), static_cast<long long>(want_matches));
  EXPECT(totals[1] == want_copy_sums, "3-way join: copy numbers sum to %lld, expected %lld",
         static_cast<long long>(totals[1]), static_cast<long long>(want_copy_sums));
  EXPECT(totals[2] == want_matches && totals[3] == want_keys,
         "forwarded matches: %lld with keys summing to %lld, expected %lld and %lld",
         static_cast<long long>(totals[2]), static_cast<long long>(totals[3]),
         static_cast<long long>(want_matches), static_cast<long long>(want_keys));
  EXPECT(totals[4] == keys && totals[5] == keys * (keys - 1) / 2,
         "2-way join: %lld pairs summing to %lld, expected %lld and %lld",
         static_cast<long long>(totals[4]), static_cast<long long>(totals[5]),
         static_cast<long long>(keys), static_cast<long long>(keys * (keys - 1) / 2));
  EXPECT(failures == 0, "%d matches with wrong keys or senders", failures);
  if (g_me == 0)
    std::printf("joins: %lld keys, %lld 3-way matches, %lld pairs\n", static_cast<long long>(keys),
                static_cast<long long>(totals[0]), static_cast<long long>(totals[4]));
  return mailroom_test::verdict(failures);
}
