// SPDX-License-Identifier: MIT
// Message reductions (mailbox_spec::reduce), checked against an uncombined recount on every PE:
// counts added (many sends to few keys, so that most combine), minima, duplicates dropped, a
// user-defined key and rule over a struct, and a self-loop mailbox with min reductions (a
// breadth-first search of an implicit graph, against a serial one), whose held messages must
// leave before its cycle may terminate. statistics::messages_combined must show combining.
#include <mailroom/mailroom.hpp>

#include "expect.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace mr = mailroom;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

constexpr std::int64_t k_keys_per_pe = 64;

std::int64_t key_of(int p, int k) {
  return static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(p) * 7919 + k) %
                                   static_cast<std::uint64_t>(k_keys_per_pe * g_pes));
}
std::int64_t value_of(int p, int k) {
  return static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(k) * 104729 + p) % 1000000);
}

int adds_minima_and_duplicates(int sends) {
  int failures = 0;
  const mr::cyclic d(k_keys_per_pe * g_pes);
  const mr::pe me{int{g_me}};
  const auto mine = static_cast<std::size_t>(k_keys_per_pe);
  std::vector<std::int64_t> want_sum(mine, 0), want_count(mine, 0),
      want_min(mine, std::numeric_limits<std::int64_t>::max());
  for (int p = 0; p < g_pes; ++p)
    for (int k = 0; k < sends; ++k) {
      const std::int64_t g = key_of(p, k);
      if (d.owner(g) != me) continue;
      want_sum[d.local(g)] += value_of(p, k);
      want_count[d.local(g)] += 1;
      want_min[d.local(g)] = std::min(want_min[d.local(g)], value_of(p, k));
    }

  const mr::statistics before = mr::stats();
  std::vector<std::int64_t> sum(mine, 0), minimum(mine, std::numeric_limits<std::int64_t>::max());
  std::vector<std::int64_t> seen(mine, 0), handled(mine, 0);
  auto add = [&](const mr::at<std::int64_t>& m) { sum[m.index] += m.value; };
  auto least = [&](const mr::at<std::int64_t>& m) {
    minimum[m.index] = std::min(minimum[m.index], m.value);
  };
  auto visit = [&](const mr::at<std::int64_t>& m) {
    seen[m.index] = 1;
    ++handled[m.index];
  };
  mr::selector sel{mr::graph(), mr::mailbox<mr::at<std::int64_t>>(add).reduce(mr::plus<>{}),
                   mr::mailbox<mr::at<std::int64_t>>(least).reduce(mr::min<>{}),
                   mr::mailbox<mr::at<std::int64_t>>(visit).reduce(mr::keep_first{})};
  for (int k = 0; k < sends; ++k) {
    const std::int64_t g = key_of(g_me, k);
    sel.send<0>(d, g, value_of(g_me, k));
    sel.send<1>(d, g, value_of(g_me, k));
    sel.send<2>(d, g, 0);
  }
  sel.done<0>();
  sel.done<1>();
  sel.done<2>();
  sel.wait();
  const mr::statistics delta = [&] {
    mr::statistics s = mr::stats();
    s -= before;
    return s;
  }();
  EXPECT(sum == want_sum, "sums differ from the uncombined recount");
  EXPECT(minimum == want_min, "minima differ from the uncombined recount");
  for (std::size_t l = 0; l < mine; ++l) {
    EXPECT(seen[l] == (want_count[l] > 0 ? 1 : 0), "key %zu: visited %lld, sent %lld times", l,
           static_cast<long long>(seen[l]), static_cast<long long>(want_count[l]));
    EXPECT(handled[l] <= want_count[l], "key %zu handled %lld times, sent %lld", l,
           static_cast<long long>(handled[l]), static_cast<long long>(want_count[l]));
  }
  // Every message was sent or combined (counted per link: with direct routing, once). With at
  // least 4 sends per key and PE, most combine (the cache holds 4,096 messages by default).
  // Only worker 0's sends combine, and a pool worker's (or, under the progress thread, the main
  // flow's) sends to its own PE are handled without a conveyor: the counts hold with 1 worker.
  const std::int64_t combined = mr::all_reduce(delta.messages_combined);
  const std::int64_t sent = mr::all_reduce(delta.messages_sent);
  const char* progress = std::getenv("MAILROOM_PROGRESS");
  if (mr::num_workers() > 1 || (progress != nullptr && std::string_view(progress) == "thread"))
    return failures;
  if (std::string_view(mr::routing_in_use()) == "direct")
    EXPECT(combined + sent == 3LL * sends * g_pes, "%lld combined + %lld sent, %lld messages",
           static_cast<long long>(combined), static_cast<long long>(sent), 3LL * sends * g_pes);
  if (std::getenv("MAILROOM_REDUCE_SLOTS") == nullptr && sends >= 4 * k_keys_per_pe * g_pes)
    EXPECT(combined > sent, "only %lld of %lld messages combined", static_cast<long long>(combined),
           3LL * sends * g_pes);
  EXPECT(combined > 0, "no message combined");
  return failures;
}

// A user-defined rule: a sample's sum, count and largest value, keyed by its bucket.
struct sample {
  std::int64_t bucket, sum, count, largest;
};

int user_defined(int sends) {
  int failures = 0;
  const auto buckets = static_cast<std::size_t>(16);
  std::vector<sample> want(buckets, sample{0, 0, 0, 0}), got(buckets, sample{0, 0, 0, 0});
  for (int p = 0; p < g_pes; ++p)
    for (int k = 0; k < sends; ++k) {
      const auto b = static_cast<std::size_t>(value_of(p, k) % 16);
      if (static_cast<int>(b % static_cast<std::size_t>(g_pes)) != g_me) continue;
      want[b].bucket = static_cast<std::int64_t>(b);
      want[b].sum += value_of(p, k);
      want[b].count += 1;
      want[b].largest = std::max(want[b].largest, value_of(p, k));
    }
  mr::actor a{mr::mailbox<sample>([&](const sample& s) {
                auto& g = got[static_cast<std::size_t>(s.bucket)];
                g.bucket = s.bucket;
                g.sum += s.sum;
                g.count += s.count;
                g.largest = std::max(g.largest, s.largest);
              })
                  .reduce([](const sample& s) { return static_cast<std::uint64_t>(s.bucket); },
                          [](sample& into, const sample& s) {
                            into.sum += s.sum;
                            into.count += s.count;
                            into.largest = std::max(into.largest, s.largest);
                          })};
  for (int k = 0; k < sends; ++k) {
    const std::int64_t v = value_of(g_me, k);
    a.send(mr::pe(static_cast<int>(v % 16 % g_pes)), sample{v % 16, v, 1, v});
  }
  a.done();
  a.wait();
  for (std::size_t b = 0; b < buckets; ++b)
    EXPECT(got[b].sum == want[b].sum && got[b].count == want[b].count &&
               got[b].largest == want[b].largest,
           "bucket %zu: sum %lld count %lld, want %lld %lld", b, static_cast<long long>(got[b].sum),
           static_cast<long long>(got[b].count), static_cast<long long>(want[b].sum),
           static_cast<long long>(want[b].count));
  return failures;
}

// selector::flush() pushes what the cache holds: two messages to one key, combined and held at
// the sender, leave as one at flush(), before done(). (Under the progress thread the main flow's
// sends are staged, not held: only the sum is checked there.)
int flush_pushes_held() {
  int failures = 0;
  std::int64_t got = 0;
  mr::actor a{mr::mailbox<mr::at<std::int64_t>>([&](const mr::at<std::int64_t>& m) {
                got += m.value;
              }).reduce(mr::plus<>{})};
  const mr::pe next{(g_me + 1) % g_pes};
  const std::int64_t before = mr::stats().messages_sent;
  a.send(next, mr::at<std::int64_t>{5, 0});
  a.send(next, mr::at<std::int64_t>{7, 0});
  const std::int64_t held = mr::stats().messages_sent - before;
  a.flush();
  const std::int64_t pushed = mr::stats().messages_sent - before;
  const char* progress = std::getenv("MAILROOM_PROGRESS");
  if (progress == nullptr || std::string(progress) != "thread")
    EXPECT(held == 0 && pushed == 1, "%lld pushed before flush(), %lld after (want 0, 1)",
           static_cast<long long>(held), static_cast<long long>(pushed));
  a.done();
  a.wait();
  EXPECT(got == 12, "received %lld, want 12", static_cast<long long>(got));
  return failures;
}

// Breadth-first search of an implicit graph on n vertices (v -> 2v + 1, 2v + 2, 7v + 3 mod n),
// asynchronous: a vertex reached at a lower level than it had passes it on. The level messages
// to one vertex are combined by min while they wait: the search's answer must not change.
int search_with_min(std::int64_t n) {
  int failures = 0;
  const mr::cyclic d(n);
  const auto neighbours = [n](std::int64_t v) {
    return std::array<std::int64_t, 3>{(2 * v + 1) % n, (2 * v + 2) % n, (7 * v + 3) % n};
  };
  // Serial levels, on every PE.
  std::vector<std::int64_t> want(static_cast<std::size_t>(n), -1);
  std::deque<std::int64_t> q{0};
  want[0] = 0;
  while (!q.empty()) {
    const std::int64_t v = q.front();
    q.pop_front();
    for (const std::int64_t w : neighbours(v))
      if (want[static_cast<std::size_t>(w)] < 0) {
        want[static_cast<std::size_t>(w)] = want[static_cast<std::size_t>(v)] + 1;
        q.push_back(w);
      }
  }
  const mr::pe me{int{g_me}};
  std::vector<std::int64_t> level(mr::local_size(d, me), std::numeric_limits<std::int64_t>::max());
  mr::selector bfs{
      mr::graph{{0, 0}},
      mr::mailbox<mr::at<std::int64_t>>([&](const mr::at<std::int64_t>& m, mr::pe, auto& self) {
        if (m.value >= level[m.index]) return;
        level[m.index] = m.value;
        const std::int64_t v = d.global(me, m.index);
        for (const std::int64_t w : neighbours(v)) self.template send<0>(d, w, m.value + 1);
      }).reduce(mr::min<>{})};
  if (g_me == 0) bfs.send<0>(d, 0, 0);
  bfs.done<0>();
  bfs.wait();
  for (std::size_t l = 0; l < level.size(); ++l) {
    const std::int64_t v = d.global(me, l);
    const std::int64_t w = want[static_cast<std::size_t>(v)];
    EXPECT((w < 0 && level[l] == std::numeric_limits<std::int64_t>::max()) || level[l] == w,
           "vertex %lld: level %lld, a serial search says %lld", static_cast<long long>(v),
           static_cast<long long>(level[l]), static_cast<long long>(w));
  }
  return failures;
}

// All PEs add to one key (PE 0's): with node or grid routing the messages combine at every PE
// they pass through as well, so that PE 0 handles at most a message per lane into it per round
// of buffers (a PE of its node reaches it by two lanes, its own messages' and those it delivers
// from the network; the PEs that sent to it directly are counted from every PE's traffic), where
// without hop reductions it handles one from every PE at least (MAILROOM_REDUCE_HOPS=0: this
// check fails at 256 PEs and more). The sum is checked against the recount, and PE 0 prints the
// counters per hop (the reduction tree).
int all_to_one(int sends) {
  int failures = 0;
  const mr::cyclic d(g_pes);
  const mr::statistics before = mr::stats();
  std::int64_t sum = 0, handled = 0;
  auto add = [&](const mr::at<std::int64_t>& m) {
    sum += m.value;
    ++handled;
  };
  mr::selector sel{mr::graph(), mr::mailbox<mr::at<std::int64_t>>(add).reduce(mr::plus<>{})};
  for (int k = 0; k < sends; ++k) sel.send<0>(d, 0, 1 + g_me % 7);
  sel.done<0>();
  sel.wait();
  mr::statistics delta = mr::stats();
  delta -= before;
  std::int64_t want = 0;
  for (int p = 0; p < g_pes; ++p) want += static_cast<std::int64_t>(sends) * (1 + p % 7);
  const std::int64_t links_in = mr::all_reduce(
      static_cast<std::int64_t>(!delta.messages_to.empty() && delta.messages_to[0] > 0));
  const std::int64_t at_hops = mr::all_reduce(delta.messages_combined_at_hops);
  std::vector<std::int64_t> hop_in = delta.hop_in, hop_combined = delta.hop_combined;
  const std::size_t hops = static_cast<std::size_t>(
      mr::all_reduce(static_cast<std::int64_t>(hop_in.size()), mr::max<>{}));
  hop_in.resize(hops, 0);
  hop_combined.resize(hops, 0);
  for (std::size_t k = 0; k < hops; ++k) {
    hop_in[k] = mr::all_reduce(hop_in[k]);
    hop_combined[k] = mr::all_reduce(hop_combined[k]);
  }
  if (g_me != 0) return failures;
  EXPECT(sum == want, "PE 0 summed %lld, the messages add to %lld", static_cast<long long>(sum),
         static_cast<long long>(want));
  // A round: as many messages as a buffer holds (each PE's combine at the sender anyway).
  const auto per_buffer = static_cast<std::int64_t>(mr::buffer_payload_bytes() / 16);
  const std::int64_t rounds = (sends + per_buffer - 1) / per_buffer;
  std::string tree;
  for (std::size_t k = 0; k < hops; ++k)
    tree.append(" ")
        .append(std::to_string(hop_in[k]))
        .append("/")
        .append(std::to_string(hop_combined[k]));
  std::printf(
      "all_to_one: %d PEs, %d sends each, routing %s: PE 0 handled %lld from %lld links "
      "in; per hop (in/combined):%s\n",
      int{g_pes}, sends, mr::routing_in_use(), static_cast<long long>(handled),
      static_cast<long long>(links_in), tree.empty() ? " none" : tree.c_str());
  // (From 64 PEs: on a few PEs under MPI whether two messages meet at a hop is timing.)
  if (std::string_view(mr::routing_in_use()) != "direct" && mr::num_workers() == 1 && g_pes >= 64) {
    EXPECT(handled <= 2 * links_in * rounds,
           "PE 0 handled %lld messages, more than 2 lanes from each of %lld PEs x %lld rounds",
           static_cast<long long>(handled), static_cast<long long>(links_in),
           static_cast<long long>(rounds));
    EXPECT(links_in == g_pes || at_hops > 0, "no message combined at a hop");
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    // (`all_to_one N`: that part alone, N sends per PE: the simulated machine's large runs.)
    if (argc > 2 && std::string_view(argv[1]) == "all_to_one")
      return mailroom_test::verdict(all_to_one(std::atoi(argv[2])));
    const int sends = argc > 1 ? std::atoi(argv[1]) : 20000;
    int failures = 0;
    failures += adds_minima_and_duplicates(sends);
    failures += user_defined(sends);
    failures += flush_pushes_held();
    failures += search_with_min(argc > 2 ? std::atoll(argv[2]) : 50000);
    failures += all_to_one(argc > 3 ? std::atoi(argv[3]) : 1000);
    return mailroom_test::verdict(failures);
  });
}
