// SPDX-License-Identifier: MIT
// Serialised messages (mailbox<serialized<T>>, cereal): values that own memory arrive whole and
// unchanged, exactly once.
//  - Mailbox 0 carries a struct of a string, a vector of neighbours and a map, of random sizes
//    (some larger than a buffer: they go in pieces); each field is a function of (sender,
//    message number), checked by the handler, which replies on mailbox 1 with a string. The
//    struct is marked reuse_decoded: each message is decoded into the value the last one left
//    (a longer or shorter name, more or fewer neighbours and labels).
//  - An actor of serialized<std::vector<std::string>> carries lists of names (each decoded into
//    a fresh value).
//  - Vectors of numbers (decoded into the mailbox's kept vector; those larger than a buffer
//    written there straight from their pieces) relayed from PE to PE by the handler: a send
//    while the handler runs on the kept vector, which may run the handler again.
// Checks: counts, summed sizes and every field, on every PE.
// Usage: serialized_messages [messages per PE]
#include <mailroom/mailroom.hpp>
#include <mailroom/serialized.hpp>

#include "mpi_check.hpp"

#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

namespace {

struct vertex {
  std::int64_t k = 0;
  std::string name;
  std::vector<std::int64_t> neighbours;
  std::map<int, std::string> labels;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(k, name, neighbours, labels);
  }
};

// Message k of PE `from`: its sizes by hash, every 200th with 20,000 neighbours (160 KB).
vertex make_vertex(int from, std::int64_t k) {
  const std::uint64_t h =
      mix(static_cast<std::uint64_t>(from) * 7919 + static_cast<std::uint64_t>(k));
  vertex v;
  v.k = k;
  v.name = std::string(h % 40, static_cast<char>('a' + (from + k) % 26));
  const std::size_t degree = k % 200 == 199 ? 20000 : (h >> 8) % 30;
  for (std::size_t i = 0; i < degree; ++i)
    v.neighbours.push_back(static_cast<std::int64_t>(mix(h + i) % 1000000));
  for (int i = 0; i < static_cast<int>((h >> 16) % 4); ++i) v.labels[i] = std::to_string(h + i);
  return v;
}

// Relayed vector k of PE `origin`: [origin, k, hops left, words...], some larger than a buffer.
std::vector<std::int64_t> make_relay(int origin, std::int64_t k, std::size_t room_words) {
  const std::uint64_t h =
      mix(static_cast<std::uint64_t>(origin) * 104729 + static_cast<std::uint64_t>(k));
  const std::size_t words = h % 4 == 0 ? room_words * (1 + h % 3) + h % 7 : (h >> 4) % 50;
  std::vector<std::int64_t> v{origin, k, 3};
  for (std::size_t i = 0; i < words; ++i) v.push_back(static_cast<std::int64_t>(mix(h + i) >> 1));
  return v;
}

}  // namespace

template <>
inline constexpr bool mr::reuse_decoded<vertex> = true;
static_assert(!mr::reuse_decoded<std::vector<std::string>>);

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 5000;
  int failures = 0;
  std::int64_t got = 0, bad = 0, replies = 0, reply_bytes = 0, lists = 0, names = 0;

  mr::selector sel{
      mr::graph({{0, 1}}, {0}),
      mr::mailbox<mr::serialized<vertex>>([&](const vertex& v, mr::pe from, auto& self) {
        ++got;
        const vertex want = make_vertex(from.rank(), v.k);
        if (v.name != want.name || v.neighbours != want.neighbours || v.labels != want.labels)
          ++bad;
        self.template send<1>(from, v.name);
      }),
      mr::mailbox<mr::serialized<std::string>>([&](const std::string& s) {
        ++replies;
        reply_bytes += static_cast<std::int64_t>(s.size());
      })};
  mr::actor<mr::serialized<std::vector<std::string>>> lists_actor(
      [&](const std::vector<std::string>& l, mr::pe from) {
        ++lists;
        names += static_cast<std::int64_t>(l.size());
        for (std::size_t i = 0; i < l.size(); ++i)
          if (l[i] != std::to_string(from.rank() * 1000 + static_cast<int>(i))) ++bad;
      });

  std::int64_t sent_bytes = 0, sent_names = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const auto to = mr::pe(static_cast<int>(
        mix(static_cast<std::uint64_t>(k) + 17 * static_cast<std::uint64_t>(g_me)) %
        static_cast<std::uint64_t>(g_pes)));
    const vertex v = make_vertex(g_me, k);
    sent_bytes += static_cast<std::int64_t>(v.name.size());
    sel.send<0>(to, v);
    if (k % 8 == 0) {
      std::vector<std::string> l(static_cast<std::size_t>(k % 13));
      for (std::size_t i = 0; i < l.size(); ++i)
        l[i] = std::to_string(g_me * 1000 + static_cast<int>(i));
      sent_names += static_cast<std::int64_t>(l.size());
      lists_actor.send(to, l);
    }
  }
  sel.done<0>();
  lists_actor.done();
  sel.wait();
  lists_actor.wait();

  std::int64_t relayed = 0, relay_words = 0, sent_relay_words = 0;
  mr::selector relay{mr::graph({{0, 0}}, {0}),
                     mr::mailbox<mr::serialized<std::vector<std::int64_t>>>(
                         [&](const std::vector<std::int64_t>& v, mr::pe, auto& self) {
                           ++relayed;
                           relay_words += static_cast<std::int64_t>(v.size());
                           std::vector<std::int64_t> want = make_relay(
                               static_cast<int>(v.at(0)), v.at(1), self.template var_room<0>() / 8);
                           want[2] = v[2];
                           if (v != want) ++bad;
                           if (v[2] == 0) return;
                           want[2] -= 1;
                           self.template send<0>(mr::pe((g_me + 1) % g_pes), want);
                         })};
  for (std::int64_t k = 0; k < n / 50; ++k) {
    const std::vector<std::int64_t> v = make_relay(g_me, k, relay.var_room<0>() / 8);
    sent_relay_words += static_cast<std::int64_t>(v.size()) * 4;
    relay.send<0>(mr::pe((g_me + 1) % g_pes), v);
  }
  relay.done<0>();
  relay.wait();

  std::int64_t totals[6] = {got, bad, replies, reply_bytes, lists, names};
  std::int64_t want[2] = {sent_bytes, sent_names};
  MPI_Allreduce(MPI_IN_PLACE, totals, 6, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, want, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const std::int64_t messages = n * g_pes;
  EXPECT(totals[0] == messages, "%lld vertices arrived, expected %lld",
         static_cast<long long>(totals[0]), static_cast<long long>(messages));
  EXPECT(totals[1] == 0, "%lld values changed on the way", static_cast<long long>(totals[1]));
  EXPECT(totals[2] == messages && totals[3] == want[0],
         "%lld replies of %lld bytes, expected %lld of %lld", static_cast<long long>(totals[2]),
         static_cast<long long>(totals[3]), static_cast<long long>(messages),
         static_cast<long long>(want[0]));
  EXPECT(totals[4] == (n + 7) / 8 * g_pes && totals[5] == want[1],
         "%lld lists of %lld names, expected %lld of %lld", static_cast<long long>(totals[4]),
         static_cast<long long>(totals[5]), static_cast<long long>((n + 7) / 8 * g_pes),
         static_cast<long long>(want[1]));
  std::int64_t relays[3] = {relayed, relay_words, sent_relay_words};
  MPI_Allreduce(MPI_IN_PLACE, relays, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT(relays[0] == n / 50 * g_pes * 4 && relays[1] == relays[2],
         "%lld relays of %lld words, expected %lld of %lld", static_cast<long long>(relays[0]),
         static_cast<long long>(relays[1]), static_cast<long long>(n / 50 * g_pes * 4),
         static_cast<long long>(relays[2]));
  if (g_me == 0)
    std::printf("serialized_messages: %lld vertices (%zu bytes in one buffer), %lld lists\n",
                static_cast<long long>(messages), sel.var_room<0>(),
                static_cast<long long>(totals[4]));
  return mailroom_test::verdict(failures);
}
