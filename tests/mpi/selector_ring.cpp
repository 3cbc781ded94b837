// SPDX-License-Identifier: MIT
// Selectors that feed each other around a cycle (receives_from both ways, and around three):
// they terminate together by quiescence, whatever order done() and wait() come in.
//  - Two actors A and B: A's handler passes a token on to B on a pseudo-random PE, B's back to
//    A, until its hops run out. Each PE starts `tokens` tokens on A with 1 to `hops` hops, and
//    some on B. Closed in four orders of done()/wait(), one of them with a single wait().
//  - Three actors around a ring A -> B -> C -> A, the same way.
// Checks: every hop handled exactly once (count and a checksum), every actor finished on every
// PE once one wait() has returned, and the selectors stay usable for the next round.
// Usage: selector_ring [tokens per PE] [hops]
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;

namespace {

struct token {
  std::int64_t id;
  std::int64_t hops;  // still to go after this one
};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  return x;
}
mr::pe next_pe(const token& t) {
  return mr::pe(static_cast<int>(
      mix(static_cast<std::uint64_t>(t.id) * 131 + static_cast<std::uint64_t>(t.hops)) %
      static_cast<std::uint64_t>(g_pes)));
}

struct tally {
  std::int64_t handled = 0;
  std::int64_t checksum = 0;
  void count(const token& t) {
    ++handled;
    checksum += t.id * 7 + t.hops;
  }
};

// Runs `tokens` tokens per PE around a ring of N actors in the given order of calls, checks the
// totals; returns the failures.
template <std::size_t N>
int run_ring(std::int64_t tokens, std::int64_t hops, int order) {
  int failures = 0;
  std::array<tally, N> seen{};
  // Actor i passes its token on to actor (i + 1) % N.
  std::array<std::unique_ptr<mr::actor<token>>, N> ring;
  for (std::size_t i = 0; i < N; ++i) {
    ring[i] = std::make_unique<mr::actor<token>>([&, i](token t) {
      seen[i].count(t);
      if (t.hops == 0) return;
      const token next{t.id, t.hops - 1};
      ring[(i + 1) % N]->send(next_pe(next), next);
    });
  }
  for (std::size_t i = 0; i < N; ++i) ring[(i + 1) % N]->receives_from(*ring[i]);

  // What each PE starts: tokens on every actor, ids unique over the job.
  std::int64_t want_handled = 0, want_checksum = 0;
  for (int p = 0; p < g_pes; ++p)
    for (std::size_t i = 0; i < N; ++i)
      for (std::int64_t k = 0; k < tokens; ++k) {
        const std::int64_t id =
            ((p * static_cast<std::int64_t>(N) + static_cast<std::int64_t>(i)) * tokens) + k;
        const std::int64_t h = 1 + static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(id)) %
                                                             static_cast<std::uint64_t>(hops));
        want_handled += h + 1;
        for (std::int64_t j = 0; j <= h; ++j) want_checksum += id * 7 + j;
        if (p == g_me) ring[i]->send(next_pe(token{id, h}), token{id, h});
      }

  // The orders: 0 done all then wait all; 1 reverse; 2 one wait only; 3 done and wait
  // interleaved from the last actor.
  switch (order) {
    case 0:
      for (auto& a : ring) a->done();
      for (auto& a : ring) a->wait();
      break;
    case 1:
      for (std::size_t i = N; i-- > 0;) ring[i]->done();
      for (std::size_t i = N; i-- > 0;) ring[i]->wait();
      break;
    case 2:
      for (auto& a : ring) a->done();
      ring[N - 1]->wait();
      break;
    default:
      for (std::size_t i = N; i-- > 0;) ring[i]->done();
      ring[0]->wait();
      for (std::size_t i = N; i-- > 1;) ring[i]->wait();
      break;
  }
  for (std::size_t i = 0; i < N; ++i)
    EXPECT(ring[i]->finished(), "ring of %zu, order %d: actor %zu not finished after wait()", N,
           order, i);
  std::int64_t totals[2] = {0, 0};
  for (const tally& t : seen) {
    totals[0] += t.handled;
    totals[1] += t.checksum;
  }
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT(totals[0] == want_handled && totals[1] == want_checksum,
         "ring of %zu, order %d: %lld hops handled (checksum %lld), expected %lld (%lld)", N, order,
         static_cast<long long>(totals[0]), static_cast<long long>(totals[1]),
         static_cast<long long>(want_handled), static_cast<long long>(want_checksum));
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t tokens = argc > 1 ? std::atoll(argv[1]) : 2000;
  const std::int64_t hops = argc > 2 ? std::atoll(argv[2]) : 20;
  int failures = 0;
  for (int order = 0; order < 4; ++order) failures += run_ring<2>(tokens, hops, order);
  for (int order = 0; order < 4; ++order) failures += run_ring<3>(tokens, hops, order);
  if (g_me == 0)
    std::printf(
        "selector_ring: rings of 2 and 3 actors, %lld tokens per PE and actor, up to "
        "%lld hops, 4 orders each\n",
        static_cast<long long>(tokens), static_cast<long long>(hops));
  return mailroom_test::verdict(failures);
}
