// SPDX-License-Identifier: MIT
// Lambda messages with a shared context (selector::with_context): every message handled once,
// with its own sender's context, never another's. Two senders with different contexts take
// turns on the same lanes (each turn opens a run of its own), a closure with padding, a closure
// that takes the sender, a context that is not whole words and a closure too large for the
// run coder (both sent as send<I> would), and sends from pool workers (staged).
// Usage: lambda_context [messages per PE]
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::sum_over_pes;

namespace {

// A context of whole words: the table and what every message of the loop adds.
struct ctx_words {
  mr::symmetric_array<std::int64_t> table;
  std::int64_t add;
};
// One that is not (12 bytes): sent as send<I> would.
struct ctx_odd {
  std::int32_t a, b, c;
};

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 20000;
  const int P = g_pes;
  const int me = g_me;
  constexpr std::int64_t slots = 64;
  int failures = 0;

  auto table = mr::symmetric_array<std::int64_t>(slots);
  // What the other checks count, on the PE that handles them: senders right and wrong, sums
  // of padded, odd-context and large closures.
  auto sums = mr::symmetric_array<std::int64_t>(5);
  enum { from_ok, from_bad, padded, odd_ctx, large };
  mr::selector<mr::lambdas> sel{mr::lambdas{}};
  static_assert(sizeof(ctx_words) % 8 == 0);

  // Two contexts on the same lanes, in turns of varying length: 1 and 1,000,000 per message.
  auto ones = sel.with_context<0>(ctx_words{table, 1});
  auto millions = sel.with_context<0>(ctx_words{table, 1'000'000});
  std::int64_t sent_ones = 0, sent_millions = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::uint64_t h = mix(static_cast<std::uint64_t>(k) * 131 + static_cast<unsigned>(me));
    const mr::pe dest(static_cast<int>(h % static_cast<unsigned>(P)));
    const std::int64_t slot = static_cast<std::int64_t>((h >> 20) % slots);
    if ((h >> 40) % 7 < 4) {
      ones.send(dest,
                [=](const ctx_words& c) { c.table[static_cast<std::size_t>(slot)] += c.add; });
      ++sent_ones;
    } else {
      millions.send(dest,
                    [=](const ctx_words& c) { c.table[static_cast<std::size_t>(slot)] += c.add; });
      ++sent_millions;
    }
  }
  // The sender as the handler sees it, and a closure with padding (an int beside a word).
  for (std::int64_t k = 0; k < n / 4; ++k) {
    const mr::pe dest(static_cast<int>((k + me) % P));
    const int sender = me;
    ones.send(dest, [=](const ctx_words&, mr::pe from) {
      sums[from.rank() == sender ? from_ok : from_bad] += 1;
    });
    const std::int32_t small = static_cast<std::int32_t>(k % 5);
    const std::int64_t word = 3;
    ones.send(dest, [=](const ctx_words& c) { sums[padded] += small * word * c.add; });
  }
  // Not the fast path: a context of 12 bytes, and a closure of 20 words.
  auto odd = sel.with_context<0>(ctx_odd{1, 2, 3});
  for (std::int64_t k = 0; k < n / 8; ++k)
    odd.send(mr::pe(static_cast<int>(k % P)),
             [=](const ctx_odd& c) { sums[odd_ctx] += c.a + c.b + c.c; });
  struct big {
    std::int64_t w[20];
  };
  big b{};
  for (int i = 0; i < 20; ++i) b.w[i] = i;
  for (std::int64_t k = 0; k < n / 8; ++k)
    ones.send(mr::pe(static_cast<int>(k % P)), [=](const ctx_words& c) {
      std::int64_t s = 0;
      for (const std::int64_t v : b.w) s += v;
      sums[large] += s * c.add;
    });
  // From pool workers (with MAILROOM_WORKERS > 1): staged, then pushed by worker 0.
  mr::parallel_for(std::int64_t{0}, n / 4, [&](std::int64_t k) {
    const std::int64_t slot = k % slots;
    millions.send(mr::pe(static_cast<int>(k % P)), [=](const ctx_words& c) {
      c.table[static_cast<std::size_t>(slot)] += 2 * c.add;
    });
  });
  sel.done<0>();
  sel.wait();
  mr::barrier();

  std::int64_t local = 0;
  for (std::int64_t s = 0; s < slots; ++s) local += table[static_cast<std::size_t>(s)];
  const std::int64_t total = sum_over_pes(local);
  const std::int64_t want = sum_over_pes(sent_ones) + sum_over_pes(sent_millions) * 1'000'000 +
                            std::int64_t{P} * (n / 4) * 2'000'000;
  EXPECT(total == want, "the tables sum to %lld, expected %lld (a context mixed up or lost)",
         static_cast<long long>(total), static_cast<long long>(want));
  std::int64_t got[5];
  for (int k = 0; k < 5; ++k) got[k] = sum_over_pes(sums[static_cast<std::size_t>(k)]);
  const std::int64_t per = std::int64_t{P} * (n / 4);
  EXPECT(got[from_bad] == 0 && got[from_ok] == per,
         "senders: %lld right, %lld wrong, expected %lld", static_cast<long long>(got[from_ok]),
         static_cast<long long>(got[from_bad]), static_cast<long long>(per));
  std::int64_t padded_want = 0;
  for (std::int64_t k = 0; k < n / 4; ++k) padded_want += (k % 5) * 3;
  EXPECT(got[padded] == std::int64_t{P} * padded_want, "padded closures sum to %lld, expected %lld",
         static_cast<long long>(got[padded]),
         static_cast<long long>(std::int64_t{P} * padded_want));
  EXPECT(got[odd_ctx] == std::int64_t{P} * (n / 8) * 6, "odd contexts sum to %lld, expected %lld",
         static_cast<long long>(got[odd_ctx]),
         static_cast<long long>(std::int64_t{P} * (n / 8) * 6));
  EXPECT(got[large] == std::int64_t{P} * (n / 8) * 190, "large closures sum to %lld, expected %lld",
         static_cast<long long>(got[large]),
         static_cast<long long>(std::int64_t{P} * (n / 8) * 190));
  if (me == 0)
    std::printf("lambda_context: %lld messages per PE with contexts\n",
                static_cast<long long>(n + n / 2 + n / 4 + n / 4));
  return mailroom_test::verdict(failures);
}
