// SPDX-License-Identifier: MIT
// Lambda messages bound to one handler (selector::bind): every item handled once, by its own
// sender's handler with that sender's captures, never another's. Two senders of one handler type
// with different captures take turns on the same lanes (each turn opens a run of its own), with
// plain lambda sends and a second handler type between them; a handler that takes the sender,
// one that replies through `self`, a captureless one, a generic one given its item type; items
// with padding and of 4 bytes; a handler that is not whole words and one too large for the run
// coder (both sent as send<I> would), and sends from pool workers (staged).
// Usage: lambda_bind [messages per PE]
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

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What the captureless handler adds to, on the PE that runs it.
std::int64_t g_empty = 0;

// An item with padding (an int beside a word), and one of 4 bytes.
struct padded_item {
  std::int32_t small;
  std::int64_t word;
};

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 20000;
  const int P = g_pes;
  const int me = g_me;
  constexpr std::int64_t slots = 64;
  int failures = 0;

  auto table = mr::symmetric_array<std::int64_t>(slots);
  // What the other checks count, on the PE that handles them.
  enum { from_ok, from_bad, replies, padded, small, odd, large, generic, plain, k_sums };
  auto sums = mr::symmetric_array<std::int64_t>(k_sums);
  // Mailbox 0 takes the sends; mailbox 1 the replies of the handler that takes `self`.
  mr::selector<mr::lambdas, mr::lambdas> sel{mr::lambdas{}, mr::lambdas{}};

  // Two senders of one handler type, adding 1 and 1,000,000: the same lanes, in turns of
  // varying length, with plain lambda sends and a second handler type between them.
  const auto adder = [&](std::int64_t add) {
    return sel.bind<0>([table, add](std::int64_t slot) { table[slot] += add; });
  };
  auto ones = adder(1);
  auto millions = adder(1'000'000);
  auto twice = sel.bind<0>([table](std::int64_t slot) { table[slot] += 2; });
  std::int64_t want_local = 0;  // what this PE's sends add to the tables
  for (std::int64_t k = 0; k < n; ++k) {
    const std::uint64_t h = mix(static_cast<std::uint64_t>(k) * 131 + static_cast<unsigned>(me));
    const mr::pe dest(static_cast<int>(h % static_cast<unsigned>(P)));
    const auto slot = static_cast<std::int64_t>((h >> 20) % slots);
    switch ((h >> 40) % 8) {
      case 0:
      case 1:
      case 2:
        ones.send(dest, slot);
        want_local += 1;
        break;
      case 3:
      case 4:
        millions.send(dest, slot);
        want_local += 1'000'000;
        break;
      case 5:
        twice.send(dest, slot);
        want_local += 2;
        break;
      case 6:
        sel.send<0>(dest, [sums] { sums[plain] += 1; });
        break;
      default:
        sel.send<0>(dest, [table, slot] { table[slot] += 3; });
        want_local += 3;
        break;
    }
  }
  std::int64_t plain_sent = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::uint64_t h = mix(static_cast<std::uint64_t>(k) * 131 + static_cast<unsigned>(me));
    plain_sent += (h >> 40) % 8 == 6 ? 1 : 0;
  }

  // The sender as the handler sees it; a reply through `self`; items with padding and of 4
  // bytes; a captureless handler; a generic one given its item type.
  auto senders = sel.bind<0>([sums](std::int64_t sender, mr::pe from) {
    sums[from.rank() == sender ? from_ok : from_bad] += 1;
  });
  auto echo = sel.bind<0, std::int64_t>([sums](std::int64_t v, mr::pe from, auto& self) {
    self.template send<1>(from, [sums, v] { sums[replies] += v; });
  });
  auto pad = sel.bind<0>([sums](padded_item it) { sums[padded] += it.small * it.word; });
  auto four = sel.bind<0>([sums](std::int32_t v) { sums[small] += v; });
  auto none = sel.bind<0>([](std::int64_t v) { g_empty += v; });
  auto gen = sel.bind<0, std::int64_t>([sums](auto v) { sums[generic] += v; });
  for (std::int64_t k = 0; k < n / 4; ++k) {
    const mr::pe dest(static_cast<int>((k + me) % P));
    senders.send(dest, me);
    echo.send(dest, k % 7);
    pad.send(dest, padded_item{static_cast<std::int32_t>(k % 5), 3});
    four.send(dest, static_cast<std::int32_t>(k % 11));
    gen.send(dest, 2);
    none.send(dest, 5);
  }
  // Not the fast path: a handler of 4 bytes, and one of 20 words.
  const std::int32_t third = 3;
  auto odd_sender = sel.bind<0>([sums, third](std::int64_t v) { sums[odd] += v * third; });
  struct big {
    std::int64_t w[20];
  };
  big b{};
  for (int i = 0; i < 20; ++i) b.w[i] = i;
  auto large_sender = sel.bind<0>([sums, b](std::int64_t v) {
    std::int64_t s = 0;
    for (const std::int64_t x : b.w) s += x;
    sums[large] += s * v;
  });
  for (std::int64_t k = 0; k < n / 8; ++k) {
    const mr::pe dest(static_cast<int>(k % P));
    large_sender.send(dest, 1);
    odd_sender.send(dest, 2);
  }
  // From pool workers (with MAILROOM_WORKERS > 1): staged, then pushed by worker 0.
  mr::parallel_for(std::int64_t{0}, n / 4, [&](std::int64_t k) {
    millions.send(mr::pe(static_cast<int>(k % P)), k % slots);
  });
  want_local += (n / 4) * 1'000'000;
  sel.done<0>();
  sel.wait();
  mr::barrier();

  std::int64_t local = 0;
  for (std::int64_t s = 0; s < slots; ++s) local += table[static_cast<std::size_t>(s)];
  const std::int64_t total = sum_over_pes(local);
  const std::int64_t want = sum_over_pes(want_local);
  EXPECT(total == want, "the tables sum to %lld, expected %lld (captures mixed up or lost)",
         static_cast<long long>(total), static_cast<long long>(want));
  std::int64_t got[k_sums];
  for (int k = 0; k < k_sums; ++k) got[k] = sum_over_pes(sums[static_cast<std::size_t>(k)]);
  const std::int64_t per = std::int64_t{P} * (n / 4);
  const auto expect_sum = [&](int which, std::int64_t expected, const char* what) {
    EXPECT(got[which] == expected, "%s: %lld, expected %lld", what,
           static_cast<long long>(got[which]), static_cast<long long>(expected));
  };
  expect_sum(from_ok, per, "handlers told the right sender");
  expect_sum(from_bad, 0, "handlers told a wrong sender");
  std::int64_t echo_want = 0, padded_want = 0, small_want = 0;
  for (std::int64_t k = 0; k < n / 4; ++k) {
    echo_want += k % 7;
    padded_want += (k % 5) * 3;
    small_want += k % 11;
  }
  expect_sum(replies, std::int64_t{P} * echo_want, "replies through self");
  expect_sum(padded, std::int64_t{P} * padded_want, "padded items");
  expect_sum(small, std::int64_t{P} * small_want, "4-byte items");
  expect_sum(generic, 2 * per, "a generic handler's items");
  expect_sum(large, std::int64_t{P} * (n / 8) * 190, "a large handler's items");
  expect_sum(odd, std::int64_t{P} * (n / 8) * 6, "a 12-byte handler's items");
  const std::int64_t empty_got = sum_over_pes(g_empty);
  EXPECT(empty_got == 5 * per, "a captureless handler's items: %lld, expected %lld",
         static_cast<long long>(empty_got), static_cast<long long>(5 * per));
  expect_sum(plain, sum_over_pes(plain_sent), "plain lambda messages between the runs");
  if (me == 0)
    std::printf("lambda_bind: %lld messages per PE through bound senders\n",
                static_cast<long long>(n + 6 * (n / 4) + 2 * (n / 8) + n / 4));
  return mailroom_test::verdict(failures);
}
