// SPDX-License-Identifier: MIT
// Variable-size messages (mailbox<span_of<T>>): exactly once, whole and unchanged, with random
// lengths from empty to several buffers.
//  - Mailbox 0 carries arrays of 64-bit words: each PE sends `n` messages to PEs by hash, of
//    0 to 16 words mostly, every 64th as long as one buffer allows (var_room), every 256th 2 to
//    5 buffers long and one of 1 MiB (those go in pieces and are reassembled). Each word is a
//    function of (sender, message number, index), checked by the handler, which also replies
//    on mailbox 1 with the message's length, so variable-size sends from handlers run too.
//  - Mailbox 2 carries strings (span_of<char>) of odd lengths: their bytes are checked the same
//    way.
// With MAILROOM_WORKERS > 1 the messages are sent from a parallel loop (every worker at once:
// pool workers stage them, large ones in pieces a staging block holds).
// Checks: count, summed lengths and every word, on every PE.
// Usage: var_messages [messages per PE]
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

namespace {

std::uint64_t word(int from, std::int64_t k, std::size_t i) {
  return mix((static_cast<std::uint64_t>(from) << 40) ^ (static_cast<std::uint64_t>(k) << 12) ^ i);
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 20000;
  int failures = 0;
  std::int64_t got = 0, got_words = 0, bad = 0, replies = 0, reply_words = 0, strings = 0,
               string_bytes = 0;

  // A message's first word is its number k (then word(from, k, i) for i >= 1).
  mr::selector sel{mr::graph({{0, 1}}, {0, 2}),
                   mr::mailbox<mr::span_of<std::uint64_t>>(
                       [&](std::span<const std::uint64_t> w, mr::pe from, auto& self) {
                         ++got;
                         got_words += static_cast<std::int64_t>(w.size());
                         if (!w.empty()) {
                           const auto k = static_cast<std::int64_t>(w[0]);
                           for (std::size_t i = 1; i < w.size(); ++i)
                             if (w[i] != word(from.rank(), k, i)) ++bad;
                         }
                         const std::uint64_t back[2] = {w.size(), w.size()};
                         self.template send<1>(
                             from, std::span<const std::uint64_t>(back, w.size() % 2 == 0 ? 1 : 2));
                       }),
                   mr::mailbox<mr::span_of<std::uint64_t>>([&](std::span<const std::uint64_t> w) {
                     ++replies;
                     reply_words += static_cast<std::int64_t>(w[0]);
                     if (w.size() == 2 && w[0] != w[1]) ++bad;
                   }),
                   mr::mailbox<mr::span_of<char>>([&](std::span<const char> s, mr::pe from) {
                     ++strings;
                     string_bytes += static_cast<std::int64_t>(s.size());
                     for (std::size_t i = 0; i < s.size(); ++i)
                       if (s[i] != static_cast<char>('a' + (from.rank() + i) % 26)) ++bad;
                   })};

  const std::size_t room_words = sel.var_room<0>() / 8;
  std::atomic<std::int64_t> sent_words{0}, sent_bytes{0};
  const auto send_one = [&](std::int64_t k) {
    thread_local std::vector<std::uint64_t> buf;
    thread_local std::string text;
    const std::uint64_t h = mix(static_cast<std::uint64_t>(g_me) * 1000003 + k);
    const mr::pe to(static_cast<int>(h % static_cast<std::uint64_t>(g_pes)));
    std::size_t len = (h >> 20) % 17;                    // 0 to 16 words
    if (k % 64 == 63) len = room_words - (h >> 40) % 3;  // up to a full buffer
    if (k % 256 == 255) len = room_words * (2 + (h >> 44) % 4) + (h >> 48) % 7;  // in pieces
    if (k == n / 2) len = std::size_t{1} << 17;                                  // 1 MiB
    buf.resize(std::max(len, std::size_t{1}));
    buf[0] = static_cast<std::uint64_t>(k);
    for (std::size_t i = 1; i < len; ++i) buf[i] = word(g_me, k, i);
    sel.send<0>(to, std::span<const std::uint64_t>(buf.data(), len));
    sent_words += static_cast<std::int64_t>(len);
    if (k % 4 == 0) {
      text.resize((h >> 30) % 61);  // 0 to 60 bytes
      for (std::size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<char>('a' + (g_me + i) % 26);
      sel.send<2>(to, std::span<const char>(text.data(), text.size()));
      sent_bytes += static_cast<std::int64_t>(text.size());
    }
  };
  mr::parallel_for(std::int64_t{0}, n, send_one);
  sel.done<0>();
  sel.done<2>();
  sel.wait();

  std::int64_t totals[7] = {got, got_words, bad, replies, reply_words, strings, string_bytes};
  std::int64_t want[3] = {sent_words.load(), sent_bytes.load(), (n + 3) / 4};
  MPI_Allreduce(MPI_IN_PLACE, totals, 7, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, want, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const std::int64_t messages = n * g_pes;
  EXPECT(totals[0] == messages && totals[1] == want[0],
         "%lld messages of %lld words in all, expected %lld of %lld",
         static_cast<long long>(totals[0]), static_cast<long long>(totals[1]),
         static_cast<long long>(messages), static_cast<long long>(want[0]));
  EXPECT(totals[2] == 0, "%lld words or bytes changed on the way",
         static_cast<long long>(totals[2]));
  EXPECT(totals[3] == messages && totals[4] == want[0],
         "%lld replies counting %lld words, expected %lld and %lld",
         static_cast<long long>(totals[3]), static_cast<long long>(totals[4]),
         static_cast<long long>(messages), static_cast<long long>(want[0]));
  EXPECT(totals[5] == want[2] && totals[6] == want[1],
         "%lld strings of %lld bytes, expected %lld of %lld", static_cast<long long>(totals[5]),
         static_cast<long long>(totals[6]), static_cast<long long>(want[2]),
         static_cast<long long>(want[1]));
  if (g_me == 0)
    std::printf("var_messages: %lld messages, %lld words (%zu in one buffer), %lld strings\n",
                static_cast<long long>(messages), static_cast<long long>(want[0]), room_words,
                static_cast<long long>(want[2]));
  return mailroom_test::verdict(failures);
}
