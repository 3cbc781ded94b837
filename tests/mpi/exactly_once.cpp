// SPDX-License-Identifier: MIT
// Exactly-once delivery: random traffic into a selector whose graph has a chain (E -> A -> B)
// that feeds a 2-cycle (B -> C <-> D) and a self-loop (S -> S), with two message sizes (E carries
// 184-byte messages whose every word is checked, the others 24 bytes). Every message must be
// handled once, on the PE it was sent to, with the right sender, intact; per-mailbox counts and
// sums are checked against what the senders computed.
#include <mailroom/mailroom.hpp>

#include "aggregation/exchange.hpp"  // (its counters: CMakeLists.txt)

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace mr = mailroom;

namespace {

enum box : int { a_box, b_box, s_box, c_box, d_box, e_box, box_count };
constexpr std::array<const char*, box_count> box_names{
    "A (chain)",   "B (chain, feeds C)", "S (self-loop)",
    "C (2-cycle)", "D (2-cycle)",        "E (chain head, large messages)"};

struct message {
  std::uint64_t payload;
  std::int32_t dest;    // the PE the message was sent to
  std::int32_t origin;  // the PE that sent it
  std::int32_t ttl;     // forwards still to do (the chain: hops done so far)
  std::int32_t pad = 0;
};

// A larger message: a header and words that depend on its payload, checked on arrival.
struct big_message {
  message head;
  std::array<std::uint64_t, 20> words;
};

// What a mailbox saw (or should see), summed over PEs: count, payload sum and a hash sum, so
// that a lost message and a duplicated one cannot cancel out.
struct tally {
  std::array<std::uint64_t, box_count> count{}, sum{}, hash{};
  void add(int b, std::uint64_t payload, std::uint64_t times = 1) {
    count[b] += times;
    sum[b] += payload * times;
    hash[b] += mix(payload) * times;
  }
  static std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    return x;
  }
  void allreduce() {
    for (auto* v : {&count, &sum, &hash})
      for (auto& x : *v) x = mr::all_reduce(x);  // (unsigned: sums modulo 2^64)
  }
};

std::array<std::uint64_t, 20> words_for(std::uint64_t payload) {
  std::array<std::uint64_t, 20> w{};
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = tally::mix(payload + k);
  return w;
}

// B forwards every message into the cycle with a ttl its sender can predict.
std::int32_t cycle_ttl_after_b(std::uint64_t payload) {
  return static_cast<std::int32_t>(payload % 5);
}

}  // namespace

int run(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank();
  const int pes = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 20000;
  // Optional: the mailboxes whose lanes within the node must be in the shared pool's slots, with
  // no slot left beyond their reservations (a pool sized to hold exactly their own slots).
  const long in_slots_wanted = argc > 2 ? std::atol(argv[2]) : -1;
  // Unequal senders, one of them silent (at 2 PEs and more): empty streams must terminate too.
  // (me % 16: at thousands of simulated PEs the spread stays within 16 steps of n.)
  const std::int64_t n_here = me % 3 == 1 ? 0 : n + 97 * (me % 16);

  std::mt19937_64 rng(0x5eed + static_cast<std::uint64_t>(me));
  auto random_pe = [&] { return mr::pe(static_cast<int>(rng() % static_cast<unsigned>(pes))); };
  tally seen, expected;
  // A message entering C with ttl t visits C, D, C, ... t + 1 times in all.
  auto add_cycle_visits = [&](std::uint64_t payload, std::int32_t ttl) {
    expected.add(c_box, payload, static_cast<std::uint64_t>(ttl) / 2 + 1);
    expected.add(d_box, payload, (static_cast<std::uint64_t>(ttl) + 1) / 2);
  };
  std::int64_t wrong_pe = 0, wrong_sender = 0, wrong_hops = 0, corrupt = 0;

  // Records a message in mailbox b; checks it reached the PE it was addressed to, from `from`.
  auto receive = [&](int b, const message& m, mr::pe from) {
    seen.add(b, m.payload);
    wrong_pe += m.dest != me;
    wrong_sender += m.origin != from.rank() || m.origin != mr::sender().rank();
  };
  auto forward = [&](const message& m, std::int32_t ttl) {
    const mr::pe to = random_pe();
    return message{m.payload, to.rank(), me, ttl};
  };

  mr::selector sel{mr::graph{{{a_box, b_box},
                              {b_box, c_box},
                              {s_box, s_box},
                              {c_box, d_box},
                              {d_box, c_box},
                              {e_box, a_box}},
                             {a_box, s_box, c_box, e_box}},
                   mr::mailbox<message>([&](const message& m, mr::pe from, auto& self) {
                     receive(a_box, m, from);
                     const message f = forward(m, m.ttl + 1);
                     self.template send<b_box>(mr::pe(f.dest), f);
                   }),
                   mr::mailbox<message>([&](const message& m, mr::pe from, auto& self) {
                     receive(b_box, m, from);
                     wrong_hops += m.ttl != 1;
                     const message f = forward(m, cycle_ttl_after_b(m.payload));
                     self.template send<c_box>(mr::pe(f.dest), f);
                   }),
                   mr::mailbox<message>([&](const message& m, mr::pe from, auto& self) {
                     receive(s_box, m, from);
                     if (m.ttl > 0) {
                       const message f = forward(m, m.ttl - 1);
                       self.template send<s_box>(mr::pe(f.dest), f);
                     }
                   }),
                   mr::mailbox<message>([&](const message& m, mr::pe from, auto& self) {
                     receive(c_box, m, from);
                     if (m.ttl > 0) {
                       const message f = forward(m, m.ttl - 1);
                       self.template send<d_box>(mr::pe(f.dest), f);
                     }
                   }),
                   mr::mailbox<message>([&](const message& m, mr::pe from, auto& self) {
                     receive(d_box, m, from);
                     if (m.ttl > 0) {
                       const message f = forward(m, m.ttl - 1);
                       self.template send<c_box>(mr::pe(f.dest), f);
                     }
                   }),
                   mr::mailbox<big_message>([&](const big_message& m, mr::pe from, auto& self) {
                     receive(e_box, m.head, from);
                     corrupt += m.words != words_for(m.head.payload);
                     const message f = forward(m.head, 0);
                     self.template send<a_box>(mr::pe(f.dest), f);
                   })};

  // Only the declared entries E, A, S and C are fed from outside (A and C also from handlers).
  for (std::int64_t i = 0; i < n_here; ++i) {
    const std::uint64_t payload = rng();
    const auto ttl = static_cast<std::int32_t>(rng() % 8);
    const mr::pe to = random_pe();
    switch (rng() % 4) {
      case 0:
        sel.send<a_box>(to, message{payload, to.rank(), me, 0});
        expected.add(a_box, payload);
        expected.add(b_box, payload);
        add_cycle_visits(payload, cycle_ttl_after_b(payload));
        break;
      case 1:
        sel.send<s_box>(to, message{payload, to.rank(), me, ttl});
        expected.add(s_box, payload, static_cast<std::uint64_t>(ttl) + 1);
        break;
      case 2:
        sel.send<c_box>(to, message{payload, to.rank(), me, ttl});
        add_cycle_visits(payload, ttl);
        break;
      default:
        sel.send<e_box>(to, big_message{message{payload, to.rank(), me, 0}, words_for(payload)});
        expected.add(e_box, payload);
        expected.add(a_box, payload);
        expected.add(b_box, payload);
        add_cycle_visits(payload, cycle_ttl_after_b(payload));
        break;
    }
  }
  sel.done<a_box>();
  sel.done<s_box>();
  sel.done<c_box>();
  sel.done<e_box>();
  sel.wait();

  int failures = 0;
  if (!sel.finished()) {
    std::printf("rank %d: wait() returned but the selector is not finished\n", me);
    ++failures;
  }
  // Buffers to the other PEs of this node go through the shared pool's slots (those of the
  // mailboxes it has room for), unless there are none (MAILROOM_SHARED_SLOTS=0, one PE per
  // node, or a pool too small for any mailbox); then every buffer goes through MPI.
  const auto& ex = mr::detail::exchange::get();
  const bool sharing = ex.shared_slots() > 0 && ex.conveyors_in_slots() > 0 && mr::num_pes() > 1;
  if (sharing ? ex.handed_over() == 0 : ex.handed_over() != 0) {
    std::printf(
        "rank %d: %llu buffers handed over in shared memory, %llu through MPI, with %u "
        "slots in the shared pool\n",
        me, static_cast<unsigned long long>(ex.handed_over()),
        static_cast<unsigned long long>(ex.sent_through_mpi()), ex.shared_slots());
    ++failures;
  }
  if (in_slots_wanted >= 0 &&
      (ex.conveyors_in_slots() != static_cast<std::uint64_t>(in_slots_wanted) ||
       ex.slot_extras_free() != 0)) {
    std::printf(
        "rank %d: %llu mailboxes in the shared pool's %u slots (expected %ld), %u slots "
        "beyond their reservations (expected 0)\n",
        me, static_cast<unsigned long long>(ex.conveyors_in_slots()), ex.shared_slots(),
        in_slots_wanted, ex.slot_extras_free());
    ++failures;
  }
  // The counters' room: every buffer sent had room for at least what it carried.
  const mr::statistics st = mr::stats();
  if (st.buffers_sent > 0 &&
      !(st.room_sent >= st.bytes_sent && st.mean_fill() > 0 && st.mean_fill() <= 1)) {
    std::printf("rank %d: %lld bytes sent in buffers with room for %lld\n", me,
                static_cast<long long>(st.bytes_sent), static_cast<long long>(st.room_sent));
    ++failures;
  }
  seen.allreduce();
  expected.allreduce();
  std::int64_t bad[4] = {wrong_pe, wrong_sender, wrong_hops, corrupt};
  for (auto& b : bad) b = mr::all_reduce(b);
  if (me == 0) {
    for (int b = 0; b < box_count; ++b) {
      if (seen.count[b] != expected.count[b] || seen.sum[b] != expected.sum[b] ||
          seen.hash[b] != expected.hash[b]) {
        std::printf(
            "mailbox %s: handled %llu messages (expected %llu), payload sum %llu "
            "(expected %llu), hash sum %llu (expected %llu)\n",
            box_names[b], static_cast<unsigned long long>(seen.count[b]),
            static_cast<unsigned long long>(expected.count[b]),
            static_cast<unsigned long long>(seen.sum[b]),
            static_cast<unsigned long long>(expected.sum[b]),
            static_cast<unsigned long long>(seen.hash[b]),
            static_cast<unsigned long long>(expected.hash[b]));
        ++failures;
      }
    }
    const char* what[4] = {"handled on a PE other than the one addressed",
                           "with a wrong sender (from or mr::sender())",
                           "in B with a wrong hop count", "in E with corrupted words"};
    for (int k = 0; k < 4; ++k) {
      if (bad[k] != 0) {
        std::printf("%lld messages %s\n", static_cast<long long>(bad[k]), what[k]);
        ++failures;
      }
    }
    std::uint64_t total = 0;
    for (auto c : seen.count) total += c;
    std::printf("exactly_once: %d PEs, %llu messages handled: %s\n", pes,
                static_cast<unsigned long long>(total), failures == 0 ? "PASSED" : "FAILED");
  }
  failures = static_cast<int>(mr::all_reduce(std::int64_t{failures}));
  return failures == 0 ? 0 : 1;
}

// Under mpiexec, or with MAILROOM_SIM set on a simulated machine (the `scale` tests).
int main(int argc, char** argv) {
  if (auto m = mr::simulated_machine::from_environment())
    return mr::simulate(*m, [&] { return run(argc, argv); });
  return run(argc, argv);
}
