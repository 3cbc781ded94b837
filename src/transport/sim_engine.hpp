// SPDX-License-Identifier: MIT
// The simulated machine's engine, shared by its files (transport/sim*.cpp): the PEs' fibers, the
// messages in flight, the meetings that its collectives are, and the scheduler. Not installed.
#pragma once

#include "mailroom/simulate.hpp"

#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mailroom::transport::sim {

inline constexpr double k_turn = 1e-7;       // a turn that found work: 100 ns of the PE's clock
inline constexpr double k_idle_most = 2e-6;  // an idle turn costs twice the last one, up to this
// Idle turns per PE before a deadlock report.
inline constexpr std::uint64_t k_deadlock_turns = 2000;
// A PE keeps running while its clock is at most this far ahead of the earliest other PE's (each
// switch costs two system calls, and a remapping of the symmetric heap).
inline constexpr double k_quantum = 1e-6;

struct message {
  double at;
  std::uint64_t seq;
  int source;
  bool ack;
  std::vector<std::byte> data;
};
struct arrives_later {
  bool operator()(const message* a, const message* b) const noexcept {
    return a->at != b->at ? a->at > b->at : a->seq > b->seq;
  }
};
using inbox = std::priority_queue<message*, std::vector<message*>, arrives_later>;

struct link_state {
  double free = 0;  // when the link has sent what it was given
  double last = 0;  // the latest arrival on it (no overtaking)
};

struct meeting;

struct fiber {
  int pe = 0;
  ucontext_t ctx{};
  std::byte* stack = nullptr;
  std::size_t stack_bytes = 0;
  std::vector<void*> parked;  // this PE's globals while it does not run
  double clock = 0;
  double idle_cost = k_turn;
  bool busy = false;  // found work since its last turn
  bool done = false;
  bool asleep = false;  // waits in a meeting and is out of the ready queue until it completes
  int exit_code = 0;
  const char* waiting = nullptr;  // the simulator's own wait (collectives)
  std::uint64_t world_seq = 0, node_seq = 0, contexts = 0, channels = 0;
  // The meetings of the program's collectives started here whose result this PE has not
  // computed yet: once all members have arrived, the others cannot leave before it computes,
  // so a wait here must keep testing rather than sleep.
  std::vector<meeting*> to_compute;
  std::unordered_map<int, link_state> links;  // by destination
  void* fake_stack = nullptr;                 // AddressSanitizer's, while switched out
};

struct meeting {
  int expected = 0;
  int arrived = 0, computed = 0, departed = 0;
  std::vector<const void*> in;  // each member's arguments
  double last_arrival = 0;
  std::vector<fiber*> sleepers;  // members that wait without polling (nothing to progress)
  // Members whose non-blocking request is on this meeting: once all have arrived, those asleep
  // in another meeting are woken to compute their result (the others wait for it).
  std::vector<fiber*> holders;
};
using meeting_key = std::pair<std::int64_t, std::uint64_t>;  // (group, sequence)

struct engine {
  simulated_machine m;
  const std::function<int()>* program = nullptr;
  std::vector<std::unique_ptr<fiber>> fibers;
  fiber* current = nullptr;
  ucontext_t main_ctx{};
  void* main_fake_stack = nullptr;
  const void* main_stack_bottom = nullptr;
  std::size_t main_stack_size = 0;
  std::mt19937_64 rng;
  std::uint64_t seq = 0;
  std::uint64_t turns = 0, last_activity = 0;
  int live = 0;
  using entry = std::tuple<double, std::uint64_t, int>;                  // clock, tie-break, PE
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;  // all but the one running
  std::map<meeting_key, meeting> meetings;
  // The id of each group split from another: (parent, split, colour) -> id.
  std::map<std::tuple<std::int64_t, std::uint64_t, int>, std::int64_t> split_ids;
  std::int64_t next_split_id = (std::int64_t{1} << 40) + 1;
  std::map<std::pair<int, std::uint64_t>, inbox> inboxes;  // (PE, channel)
  // The symmetric heaps: one file, a part per PE, mapped at one address for the PE that runs.
  int heap_fd = -1;
  std::byte* heap_base = nullptr;
  std::size_t heap_bytes = 0;
  int heap_mapped = -1;
  std::byte* heaps_all = nullptr;  // every PE's heap, side by side (one-sided access)
  // The stall watchdog (a thread of its own, reading these).
  std::atomic<std::uint64_t> turns_seen{0};
  std::atomic<int> running_pe{-1};

  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }
  void activity() noexcept { last_activity = turns; }
  int node_of(int pe) const noexcept { return pe / m.per_node; }
  int node_size(int node) const noexcept { return std::min(m.per_node, m.pes - node * m.per_node); }
};
extern engine* g_engine;  // (sim.cpp: simulate() sets it)

inline engine& eng() noexcept { return *g_engine; }
inline fiber& me() noexcept { return *g_engine->current; }

// ---- switching (sim.cpp) -----------------------------------------------------------------------
// From a fiber to the scheduler.
void switch_to_main(fiber& f);

// ---- meetings (collectives; sim_collective.cpp) ------------------------------------------------
// Sums wrap, as MPI's do (signed overflow would be undefined in C++).
inline std::int64_t wrapping_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

inline constexpr std::int64_t k_world = 0;
inline std::int64_t node_group(int node) { return -1 - static_cast<std::int64_t>(node); }

void wait_in(meeting& g, const char* what, bool progress);
meeting& arrive(meeting_key key, int expected, int member, const void* in);
void leave(meeting_key key, meeting& g, const char* what, bool progress);

template <class Compute>
void meet(std::int64_t group, std::uint64_t seq, int expected, int member, const void* in,
          const char* what, bool progress, Compute compute) {
  const meeting_key key{group, seq};
  meeting& g = arrive(key, expected, member, in);
  fiber& f = me();
  const char* outer = f.waiting;
  f.waiting = what;
  while (g.arrived < g.expected) wait_in(g, what, progress);
  f.waiting = outer;
  compute(g.in);
  leave(key, g, what, progress);
}

// A collective of all PEs (progress engine running while mailroom is active, as under MPI).
template <class Compute>
void world(const void* in, const char* what, Compute compute) {
  fiber& f = me();
  meet(k_world, f.world_seq++, eng().m.pes, f.pe, in, what, true, compute);
}

template <class T>
const T& arg(const std::vector<const void*>& in, int p) {
  return *static_cast<const T*>(in[static_cast<std::size_t>(p)]);
}

inline int pes() { return eng().m.pes; }

}  // namespace mailroom::transport::sim
