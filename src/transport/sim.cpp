// SPDX-License-Identifier: MIT
// The simulated machine: P virtual PEs in one process, each a fiber with a stack of its own,
// taking turns on the calling thread. mailroom runs on them unchanged: what is per PE in its
// globals is swapped at each switch (common/pe_local.hpp), and this file stands in for MPI.
//
// Time is virtual. Each PE has a clock; the PE with the earliest clock runs next (ties broken
// by the seed), until it polls for messages or waits, which is a turn: its clock advances by a
// turn's cost (longer while it finds nothing to do, so idle PEs stay out of the way). A message
// leaves when its link is free, takes its bytes over the link's bandwidth, and arrives after the
// link's latency plus a seeded jitter; messages between a pair of PEs never overtake each other
// (what MPI promises). A collective completes for each member at the latest arrival plus the
// latency times log2 of the members. Nothing depends on the real time taken, so a seed replays.
//
// Never silent: a PE that runs for simulated_machine::stall_seconds of real time without a turn,
// and a machine where no PE has found work for many turns each (a deadlock), end the run with a
// report of what every PE was waiting for.
#include "transport/sim.hpp"

#include "mailroom/error.hpp"
#include "mailroom/simulate.hpp"

#include <fmt/format.h>

#include "common/hooks.hpp"
#include "common/pe_local.hpp"
#include "transport/backend.hpp"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <queue>
#include <random>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define MAILROOM_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAILROOM_SIM_ASAN 1
#endif
#endif
#ifdef MAILROOM_SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace mailroom::transport::sim {

bool g_active = false;

namespace {

constexpr double k_turn = 1e-7;       // a turn that found work: 100 ns of the PE's clock
constexpr double k_idle_most = 2e-6;  // an idle turn costs twice the last one, up to this
constexpr std::uint64_t k_deadlock_turns = 2000;  // idle turns per PE before a deadlock report
// A PE keeps running while its clock is at most this far ahead of the earliest other PE's (each
// switch costs two system calls, and a remapping of the symmetric heap).
constexpr double k_quantum = 1e-6;

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
engine* g_engine = nullptr;

engine& eng() noexcept { return *g_engine; }
fiber& me() noexcept { return *g_engine->current; }

// ---- switching ---------------------------------------------------------------------------------
// AddressSanitizer must be told of every switch between stacks (else it takes a fiber's frames
// for overflows of another stack).
void start_switch(void** fake_save, const void* bottom, std::size_t size) {
#ifdef MAILROOM_SIM_ASAN
  __sanitizer_start_switch_fiber(fake_save, bottom, size);
#else
  (void)fake_save, (void)bottom, (void)size;
#endif
}
void finish_switch(void* fake_save, const void** old_bottom = nullptr,
                   std::size_t* old_size = nullptr) {
#ifdef MAILROOM_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_save, old_bottom, old_size);
#else
  (void)fake_save, (void)old_bottom, (void)old_size;
#endif
}

// From a fiber to the scheduler.
void switch_to_main(fiber& f) {
  engine& e = eng();
  start_switch(f.done ? nullptr : &f.fake_stack, e.main_stack_bottom, e.main_stack_size);
  swapcontext(&f.ctx, &e.main_ctx);
  finish_switch(f.fake_stack);
}

[[noreturn]] void fiber_failed(int pe, const char* what) {
  std::fprintf(stderr, "mailroom: rank %d: %s\n", pe, what);
  std::fflush(stderr);
  std::_Exit(1);
}

// An exception that leaves a PE's program ends the job there, without unwinding (as one that
// leaves main() ends an MPI process, and mpiexec the job): unwinding would run the runtime's
// destructor, which waits for PEs that may wait for this one. Nothing on a fiber's stack catches
// (not even a noexcept frame, which GCC unwinds to), so the search for a handler reaches the
// bottom of the stack and std::terminate runs at the throw: here.
[[noreturn]] void uncaught() noexcept {
  const int pe = g_engine != nullptr && g_engine->current != nullptr ? g_engine->current->pe : -1;
  if (!std::current_exception()) fiber_failed(pe, "std::terminate called");
  try {
    throw;
  } catch (const std::exception& ex) {
    fiber_failed(pe, (std::string("uncaught exception: ") + ex.what()).c_str());
  } catch (...) {
    fiber_failed(pe, "uncaught exception of an unknown type");
  }
}

void fiber_entry() {
  engine& e = eng();
  finish_switch(nullptr, &e.main_stack_bottom, &e.main_stack_size);
  fiber& f = me();
  f.exit_code = (*e.program)();
  f.done = true;
  switch_to_main(f);
  std::abort();  // a finished fiber is never resumed
}

// From the scheduler to fiber f, until its next turn ends.
void run(fiber& f) {
  engine& e = eng();
  e.current = &f;
  e.running_pe.store(f.pe, std::memory_order_relaxed);
  mailroom::detail::pe_locals::swap(f.parked);
  mailroom::detail::pe_locals::run_switch_hooks();
  start_switch(&e.main_fake_stack, f.stack, f.stack_bytes);
  swapcontext(&e.main_ctx, &f.ctx);
  finish_switch(e.main_fake_stack);
  mailroom::detail::pe_locals::swap(f.parked);
  e.current = nullptr;
  e.running_pe.store(-1, std::memory_order_relaxed);
}

// ---- deadlock report ---------------------------------------------------------------------------
// `all_asleep`: every PE left waits in a collective that some PE never joins; else none of them
// has found work for k_deadlock_turns turns each.
[[noreturn]] void report_deadlock(bool all_asleep) {
  engine& e = eng();
  // What each PE waits in: the simulator's own wait, else what its runtime reports.
  std::map<std::string, std::vector<int>> by_wait;
  for (auto& fp : e.fibers) {
    fiber& f = *fp;
    if (f.done) continue;
    // (The PE that runs has its values in the globals; the others' are parked.)
    const bool parked = &f != e.current;
    if (parked) mailroom::detail::pe_locals::swap(f.parked);
    const char* rt = runtime_wait();
    if (parked) mailroom::detail::pe_locals::swap(f.parked);
    std::string what = f.waiting != nullptr ? f.waiting : rt != nullptr ? rt : "(no wait named)";
    if (f.waiting != nullptr && rt != nullptr) what += std::string(" (runtime: ") + rt + ")";
    by_wait[what].push_back(f.pe);
  }
  double now = 0;
  for (auto& fp : e.fibers) now = std::max(now, fp->clock);
  const std::string why = all_asleep ? "every one of the " + std::to_string(e.live) +
                                           " running PEs waits in a "
                                           "collective that another never joins"
                                     : "none of the " + std::to_string(e.live) +
                                           " running PEs has found work in " +
                                           std::to_string(k_deadlock_turns) + " turns each";
  std::fprintf(stderr,
               "mailroom: simulated machine: deadlock: %s (virtual time %.6f s; %s). What they "
               "wait for:\n",
               why.c_str(), now, e.m.describe().c_str());
  for (const auto& [what, pes] : by_wait) {
    std::string list;
    for (std::size_t i = 0; i < pes.size() && i < 12; ++i) {
      if (i > 0) list += ',';
      list += std::to_string(pes[i]);
    }
    if (pes.size() > 12) list += ",... (" + std::to_string(pes.size()) + " PEs)";
    std::fprintf(stderr, "  PE %s: %s\n", list.c_str(), what.c_str());
  }
  std::fflush(stderr);
  std::_Exit(1);
}

// ---- meetings (collectives) --------------------------------------------------------------------
// Sums wrap, as MPI's do (signed overflow would be undefined in C++).
std::int64_t wrapping_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

constexpr std::int64_t k_world = 0;
std::int64_t node_group(int node) { return -1 - static_cast<std::int64_t>(node); }

// Members that wait for a meeting with nothing else to do sleep (out of the ready queue: a
// thousand PEs in a barrier cost no turns) until the member they wait for arrives.
void wake(meeting& g) {
  engine& e = eng();
  for (fiber* f : g.sleepers) {
    if (!f->asleep) continue;  // (woken already, as a holder of another meeting)
    f->asleep = false;
    f->clock = std::max(f->clock, g.last_arrival);
    e.ready.emplace(f->clock, e.rng(), f->pe);
  }
  g.sleepers.clear();
}

// One step of a member's wait: the progress engine while mailroom is active here, else sleep.
void wait_in(meeting& g, const char* what, bool progress) {
  if (progress && runtime_active()) {
    wait_step(what, true);
    return;
  }
  fiber& f = me();
  f.asleep = true;
  g.sleepers.push_back(&f);
  switch_to_main(f);
}

meeting& arrive(meeting_key key, int expected, int member, const void* in) {
  engine& e = eng();
  auto [it, fresh] = e.meetings.try_emplace(key);
  meeting& g = it->second;
  if (fresh) {
    g.expected = expected;
    g.in.assign(static_cast<std::size_t>(expected), nullptr);
  }
  MAILROOM_ASSERT(g.expected == expected && member < expected);
  g.in[static_cast<std::size_t>(member)] = in;
  ++g.arrived;
  g.last_arrival = std::max(g.last_arrival, me().clock);
  e.activity();
  if (g.arrived == g.expected) {
    wake(g);
    for (fiber* f : g.holders)
      if (f->asleep) {
        f->asleep = false;
        f->clock = std::max(f->clock, g.last_arrival);
        e.ready.emplace(f->clock, e.rng(), f->pe);
      }
  }
  return g;
}

double meeting_latency(int members) {
  const double hops = std::ceil(std::log2(std::max(members, 2)));
  return eng().m.network_latency * hops;
}

// After computing its result: waits until every member has (their arguments stay valid until
// then), takes the completion time, and the last to leave ends the meeting.
void leave(meeting_key key, meeting& g, const char* what, bool progress) {
  ++g.computed;
  eng().activity();
  if (g.computed == g.expected) wake(g);
  fiber& f = me();
  const char* outer = f.waiting;
  f.waiting = what;
  while (g.computed < g.expected) wait_in(g, what, progress);
  f.waiting = outer;
  f.clock = std::max(f.clock, g.last_arrival + meeting_latency(g.expected));
  if (++g.departed == g.expected) eng().meetings.erase(key);
}

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

int pes() { return eng().m.pes; }

// ---- point to point ----------------------------------------------------------------------------
inbox& inbox_of(int pe, std::uint64_t channel) { return eng().inboxes[{pe, channel}]; }

void post(std::uint64_t channel, int dest, const void* data, std::size_t bytes, bool ack) {
  engine& e = eng();
  fiber& f = me();
  const bool near = e.node_of(dest) == e.node_of(f.pe);
  const double latency = dest == f.pe ? 0 : near ? e.m.node_latency : e.m.network_latency;
  const double bandwidth = near ? e.m.node_bandwidth : e.m.network_bandwidth;
  link_state& l = f.links[dest];
  const double depart = std::max(f.clock, l.free);
  const double wire = static_cast<double>(bytes) / bandwidth;
  l.free = depart + wire;
  const double at = std::max(l.last, depart + wire + latency * (1 + e.m.jitter * e.uniform()));
  l.last = at;
  const auto* b = static_cast<const std::byte*>(data);
  inbox_of(dest, channel).push(new message{at, e.seq++, f.pe, ack, {b, b + bytes}});
  e.activity();
}

class sim_channel final : public channel::impl {
 public:
  sim_channel(std::size_t capacity, channel_sink& sink)
      : capacity_(capacity), sink_(sink), id_(me().channels++), in_(&inbox_of(me().pe, id_)) {}
  ~sim_channel() override {
    // (Under MPI, what was not received by now is cancelled.)
    while (!in_->empty()) {
      delete in_->top();
      in_->pop();
    }
    eng().inboxes.erase({me().pe, id_});
  }
  [[nodiscard]] int sends_in_flight() const noexcept override {
    return static_cast<int>(sent_.size());
  }
  void send(int dest, const std::byte* data, std::size_t bytes, void* cookie) override {
    MAILROOM_ASSERT(bytes <= capacity_);
    post(id_, dest, data, bytes, false);
    sent_.push_back(cookie);  // copied: complete at the next poll
  }
  void send_acks(int dest, const std::uint32_t* ids, std::size_t n) override {
    post(id_, dest, ids, n * sizeof *ids, true);
  }
  int poll() override {
    yield();
    int n = 0;
    if (!sent_.empty()) {
      done_.swap(sent_);  // (sent() may send again)
      for (void* c : done_) sink_.sent(c);
      n += static_cast<int>(done_.size());
      done_.clear();
    }
    const double now = me().clock;
    while (!in_->empty() && in_->top()->at <= now) {
      std::unique_ptr<message> m(in_->top());
      in_->pop();
      ++n;
      eng().activity();
      if (m->ack) {
        acks_.resize(m->data.size() / sizeof(std::uint32_t));
        std::memcpy(acks_.data(), m->data.data(), m->data.size());
        sink_.acknowledged(m->source, acks_.data(), acks_.size());
      } else {
        std::byte* buf = sink_.fresh_buffer();
        std::memcpy(buf, m->data.data(), m->data.size());
        sink_.received(m->source, buf, m->data.size());
      }
    }
    return n;
  }

 private:
  std::size_t capacity_;
  channel_sink& sink_;
  std::uint64_t id_;
  inbox* in_;
  std::vector<void*> sent_, done_;
  std::vector<std::uint32_t> acks_;
};

// ---- non-blocking collectives ------------------------------------------------------------------
// One collective of a group in flight: the member arrived with its input; it computes its result
// (from every member's input) once all have arrived, and completes once all have computed (their
// inputs stay valid until then). `keep` holds what its own input points into until then.
class sim_request final : public request {
 public:
  template <class F>
  sim_request(meeting_key key, int expected, int member, const void* in, F compute,
              std::shared_ptr<const void> keep = nullptr)
      : key_(key), compute_(std::move(compute)), keep_(std::move(keep)) {
    g_ = &arrive(key_, expected, member, in);
    me().to_compute.push_back(g_);
    g_->holders.push_back(&me());
  }
  ~sim_request() override {
    while (!test()) wait_step("a collective (destroyed while in flight)", false);
  }
  sim_request(const sim_request&) = delete;
  sim_request& operator=(const sim_request&) = delete;
  bool test() override {
    if (g_ == nullptr) return true;
    if (g_->arrived < g_->expected) return false;
    if (compute_) {
      compute_(g_->in);
      compute_ = nullptr;
      auto& mine = me().to_compute;
      *std::find(mine.begin(), mine.end(), g_) = mine.back();
      mine.pop_back();
      ++g_->computed;
      eng().activity();
      if (g_->computed == g_->expected) wake(*g_);
    }
    if (g_->computed < g_->expected) return false;
    fiber& f = me();
    f.clock = std::max(f.clock, g_->last_arrival + meeting_latency(g_->expected));
    if (++g_->departed == g_->expected) eng().meetings.erase(key_);
    g_ = nullptr;
    keep_.reset();
    return true;
  }
  // Asleep in the meeting while mailroom is not active here (woken when it completes), else
  // the progress engine's polls, as the transport's own collectives wait.
  bool wait_idle(const char* what) override {
    fiber& f = me();
    const char* outer = f.waiting;
    f.waiting = what;
    while (!test()) wait_in(*g_, what, true);
    f.waiting = outer;
    return true;
  }

 private:
  meeting_key key_;
  meeting* g_ = nullptr;
  std::function<void(const std::vector<const void*>&)> compute_;
  std::shared_ptr<const void> keep_;
};

class sim_context final : public collective_context::impl {
 public:
  // The job's: every PE makes its contexts in the same order.
  sim_context() : sim_context(1 + static_cast<std::int64_t>(me().contexts++), pes(), me().pe) {}
  // Among `size` members (this one of rank `rank`), meeting under `key`.
  sim_context(std::int64_t key, int size, int rank) : group_(key), size_(size), rank_(rank) {}
  void start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out) override {
    begin(in, [out, size = size_, rank = rank_](const std::vector<const void*>& all) {
      std::int64_t s = 0;
      for (int p = 0; p < size; ++p)
        s = wrapping_add(s, static_cast<const std::int64_t*>(all[p])[rank]);
      *out = s;
    });
  }
  void start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n) override {
    begin(in, [out, n, size = size_](const std::vector<const void*>& all) {
      for (int i = 0; i < n; ++i) {
        std::int64_t s = 0;
        for (int p = 0; p < size; ++p)
          s = wrapping_add(s, static_cast<const std::int64_t*>(all[p])[i]);
        out[i] = s;
      }
    });
  }
  void start_barrier() override {
    begin(&group_, [](const std::vector<const void*>&) {});
  }
  bool test() override {
    if (req_ == nullptr || !req_->test()) return req_ == nullptr;
    req_.reset();
    return true;
  }
  bool wait_idle(const char* what) override {
    if (req_ != nullptr) req_->wait_idle(what);
    req_.reset();
    return true;
  }
  [[nodiscard]] bool busy() const noexcept override { return req_ != nullptr; }

 private:
  template <class F>
  void begin(const void* in, F compute) {
    MAILROOM_ASSERT(req_ == nullptr);
    req_ = std::make_unique<sim_request>(meeting_key{group_, ops_++}, size_, rank_, in,
                                         std::move(compute));
  }
  std::int64_t group_;
  int size_, rank_;
  std::uint64_t ops_ = 0;
  std::unique_ptr<sim_request> req_;
};

// The program's collectives. Group ids: the world's, then one per split (the same on every
// member: the engine numbers each (parent, split, colour) once).
constexpr std::int64_t k_program_world = std::int64_t{1} << 40;

// inout = in[from] op ... op in[to - 1] op inout's first operand, folded from the right so that
// the result is x_from op x_from+1 op ... in rank order, as MPI's.
void fold(const std::vector<const void*>& all, int from, int to, void* out, std::size_t count,
          const mailroom::detail::reduction& r) {
  const std::size_t bytes = count * r.elem_bytes;
  if (bytes == 0) return;  // (the buffers of an empty reduction may be null)
  std::memcpy(out, all[static_cast<std::size_t>(to - 1)], bytes);
  for (int p = to - 2; p >= from; --p)
    r.combine(all[static_cast<std::size_t>(p)], out, count, r.ctx);
}

class sim_group final : public group {
 public:
  sim_group(std::int64_t id, int rank, int size, std::vector<int> members) : id_(id) {
    rank_ = rank;
    size_ = size;
    members_ = std::move(members);
  }

  std::unique_ptr<group> split(int colour, int key) override {
    const std::array<int, 2> mine{colour, key};
    const std::uint64_t seq = ops_++;
    std::unique_ptr<group> out;
    meet(id_, seq, size_, rank_, &mine, "team split", true,
         [&](const std::vector<const void*>& all) {
           if (colour < 0) return;
           std::vector<std::array<int, 3>> same;  // key, rank here, world rank
           for (int p = 0; p < size_; ++p) {
             const auto& a =
                 *static_cast<const std::array<int, 2>*>(all[static_cast<std::size_t>(p)]);
             if (a[0] == colour) same.push_back({a[1], p, world_rank(p)});
           }
           std::sort(same.begin(), same.end());
           std::vector<int> world;
           int rank = 0;
           for (const auto& m : same) {
             if (m[1] == rank_) rank = static_cast<int>(world.size());
             world.push_back(m[2]);
           }
           engine& e = eng();
           auto [it, fresh] = e.split_ids.try_emplace({id_, seq, colour}, e.next_split_id);
           if (fresh) ++e.next_split_id;
           const int n = static_cast<int>(world.size());
           out = std::make_unique<sim_group>(it->second, rank, n, std::move(world));
         });
    return out;
  }

  std::unique_ptr<collective_context::impl> make_context() override {
    // Keys of their own: far below zero (the job's contexts count up from 1, groups' meetings
    // are keyed by their ids, the nodes' by -1 - node), from the group's id and its members'
    // count of contexts. (Teams split from the world only: the world's selectors use the job's.)
    MAILROOM_ASSERT(id_ != k_program_world);
    const std::int64_t key =
        -(std::int64_t{1} << 62) - ((id_ - k_program_world) << 24 | contexts_++);
    return std::make_unique<sim_context>(key, size_, rank_);
  }

  std::unique_ptr<request> start_barrier() override {
    return begin(&id_, 0, [](const std::vector<const void*>&) {});
  }
  std::unique_ptr<request> start_allreduce(const void* in, void* out, std::size_t count,
                                           const mailroom::detail::reduction& r) override {
    return begin(in, count * r.elem_bytes,
                 [size = size_, out, count, r](const std::vector<const void*>& all) {
                   fold(all, 0, size, out, count, r);
                 });
  }
  std::unique_ptr<request> start_exscan(const void* in, void* out, std::size_t count,
                                        const mailroom::detail::reduction& r) override {
    return begin(in, count * r.elem_bytes,
                 [rank = rank_, out, count, r](const std::vector<const void*>& all) {
                   if (rank > 0) fold(all, 0, rank, out, count, r);
                 });
  }
  std::unique_ptr<request> start_broadcast(void* data, std::size_t bytes, int root) override {
    return begin(data, rank_ == root ? bytes : 0,
                 [rank = rank_, data, bytes, root](const std::vector<const void*>& all) {
                   if (rank != root) std::memcpy(data, all[static_cast<std::size_t>(root)], bytes);
                 });
  }
  std::unique_ptr<request> start_gather(const void* in, void* out, std::size_t bytes,
                                        int root) override {
    return begin(
        in, bytes,
        [rank = rank_, size = size_, out, bytes, root](const std::vector<const void*>& all) {
          if (rank == root) gather_all(all, size, out, bytes);
        });
  }
  std::unique_ptr<request> start_allgather(const void* in, void* out, std::size_t bytes) override {
    return begin(in, bytes, [size = size_, out, bytes](const std::vector<const void*>& all) {
      gather_all(all, size, out, bytes);
    });
  }
  std::unique_ptr<request> start_alltoall(const void* in, void* out, std::size_t bytes) override {
    return begin(in, bytes * static_cast<std::size_t>(size_),
                 [rank = rank_, size = size_, out, bytes](const std::vector<const void*>& all) {
                   for (int p = 0; p < size; ++p)
                     std::memcpy(static_cast<std::byte*>(out) + static_cast<std::size_t>(p) * bytes,
                                 static_cast<const std::byte*>(all[static_cast<std::size_t>(p)]) +
                                     static_cast<std::size_t>(rank) * bytes,
                                 bytes);
                 });
  }
  std::unique_ptr<request> start_alltoallv(const void* send, const int* send_counts,
                                           const int* send_displs, void* recv,
                                           const int* recv_counts, const int* recv_displs,
                                           std::size_t elem_bytes) override {
    // A copy of what is sent (see begin()), packed: only the elements sent, not the gaps
    // between the blocks (a BSP superstep sends a little of large buckets).
    struct side {
      std::vector<std::byte> send;
      std::vector<int> counts, displs;
    };
    auto mine = std::make_shared<side>();
    const auto n = static_cast<std::size_t>(size_);
    mine->counts.assign(send_counts, send_counts + n);
    mine->displs.resize(n);
    std::size_t total = 0;
    for (std::size_t p = 0; p < n; ++p) total += static_cast<std::size_t>(send_counts[p]);
    mine->send.resize(total * elem_bytes);
    const auto* b = static_cast<const std::byte*>(send);
    for (std::size_t p = 0, at = 0; p < n; ++p) {
      mine->displs[p] = static_cast<int>(at);
      const auto k = static_cast<std::size_t>(send_counts[p]);
      std::memcpy(mine->send.data() + at * elem_bytes,
                  b + static_cast<std::size_t>(send_displs[p]) * elem_bytes, k * elem_bytes);
      at += k;
    }
    return begin_kept(
        mine.get(),
        [rank = rank_, size = size_, recv, recv_counts, recv_displs,
         elem_bytes](const std::vector<const void*>& all) {
          for (int p = 0; p < size; ++p) {
            const auto& s = *static_cast<const side*>(all[static_cast<std::size_t>(p)]);
            const int k = s.counts[static_cast<std::size_t>(rank)];
            MAILROOM_CHECK(k == recv_counts[p],
                           "all_to_all_v: member {} sends {} elements to "
                           "member {}, which expects {}",
                           p, k, rank, recv_counts[p]);
            std::memcpy(
                static_cast<std::byte*>(recv) +
                    static_cast<std::size_t>(recv_displs[p]) * elem_bytes,
                s.send.data() +
                    static_cast<std::size_t>(s.displs[static_cast<std::size_t>(rank)]) * elem_bytes,
                static_cast<std::size_t>(k) * elem_bytes);
          }
        },
        mine);
  }

 private:
  static void gather_all(const std::vector<const void*>& all, int size, void* out,
                         std::size_t bytes) {
    for (int p = 0; p < size; ++p)
      std::memcpy(static_cast<std::byte*>(out) + static_cast<std::size_t>(p) * bytes,
                  all[static_cast<std::size_t>(p)], bytes);
  }
  // The members read each other's input while each runs, but an input may lie in the symmetric
  // heap, which is mapped for the running PE only: each member's input is copied first.
  template <class F>
  std::unique_ptr<request> begin(const void* in, std::size_t bytes, F compute) {
    const auto* b = static_cast<const std::byte*>(in);
    auto copy = std::make_shared<std::vector<std::byte>>(b, b + bytes);
    return begin_kept(copy->data(), std::move(compute), copy);
  }
  template <class F>
  std::unique_ptr<request> begin_kept(const void* in, F compute, std::shared_ptr<const void> keep) {
    return std::make_unique<sim_request>(meeting_key{id_, ops_++}, size_, rank_, in,
                                         std::move(compute), std::move(keep));
  }
  std::int64_t id_;
  std::uint64_t ops_ = 0;
  std::int64_t contexts_ = 0;
};

// ---- node memory -------------------------------------------------------------------------------
class sim_node_memory final : public node_memory::impl {
 public:
  explicit sim_node_memory(std::size_t bytes) {
    engine& e = eng();
    const int pe = me().pe, node = e.node_of(pe);
    if (e.node_size(node) == 1 || bytes == 0) return;
    bytes_ = (bytes + 4095) / 4096 * 4096;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    MAILROOM_CHECK(p != MAP_FAILED, "simulated machine: cannot map {} bytes of node memory: {}",
                   bytes_, std::strerror(errno));
    mine_ = static_cast<std::byte*>(p);
    const std::byte* my_part = mine_;
    meet(node_group(node), me().node_seq++, e.node_size(node), pe - node * e.m.per_node, &my_part,
         "node memory (MPI_Win_allocate_shared)", false, [&](const std::vector<const void*>& all) {
           for (int i = 0; i < e.node_size(node); ++i) {
             members.push_back(node * e.m.per_node + i);
             parts.push_back(const_cast<std::byte*>(arg<const std::byte*>(all, i)));
           }
         });
  }
  ~sim_node_memory() override {
    if (mine_ == nullptr) return;
    node_barrier();  // (collective, as MPI_Win_free: nobody touches this part after it)
    munmap(mine_, bytes_);
  }
  void node_barrier() override {
    engine& e = eng();
    const int pe = me().pe, node = e.node_of(pe);
    meet(node_group(node), me().node_seq++, e.node_size(node), pe - node * e.m.per_node, &pe,
         "node barrier", false, [](const std::vector<const void*>&) {});
  }

 private:
  std::byte* mine_ = nullptr;
  std::size_t bytes_ = 0;
};

// ---- one-sided access
// ---------------------------------------------------------------------------- A completed remote
// operation: a round trip on the PE's clock; every 1024th (of `ops`, the window's count) lets the
// others have a turn. One each would make the naive baselines cost a switch per element, and a
// switch to a PE that uses the symmetric heap remaps it (its cost grows with the pages the PE
// touched since: 64 made the naive variants 5x slower in real time once they kept their arrays in
// the heap).
void charge_remote_access(int target, std::uint64_t& ops) {
  engine& e = eng();
  fiber& f = me();
  if (target != f.pe)
    f.clock += 2 * (e.node_of(target) == e.node_of(f.pe) ? e.m.node_latency : e.m.network_latency);
  if (++ops % 1024 == 0) {
    f.busy = true;
    yield();
  }
}

// ---- one-sided access to the symmetric heaps
// ----------------------------------------------------- Every heap through a second mapping of
// their file; each access is charged as the naive baselines' windows are (charge_remote_access).
class done_request final : public request {
 public:
  bool test() override { return true; }
};

class sim_heap_window final : public heap_window::impl {
 public:
  sim_heap_window() {
    engine& e = eng();
    if (e.heaps_all == nullptr) {
      void* p = mmap(nullptr, e.heap_bytes * static_cast<std::size_t>(e.m.pes),
                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, e.heap_fd, 0);
      MAILROOM_CHECK(p != MAP_FAILED,
                     "simulated machine: cannot map the symmetric heaps for "
                     "one-sided access: {}",
                     std::strerror(errno));
      e.heaps_all = static_cast<std::byte*>(p);
    }
    barrier();
  }
  ~sim_heap_window() override { barrier(); }
  void get(int target, std::size_t offset, void* out, std::size_t bytes) override {
    std::memcpy(out, at(target, offset), bytes);
  }
  void put(int target, std::size_t offset, const void* in, std::size_t bytes) override {
    std::memcpy(at(target, offset), in, bytes);
  }
  std::unique_ptr<request> start_get(int target, std::size_t offset, void* out,
                                     std::size_t bytes) override {
    get(target, offset, out, bytes);
    return std::make_unique<done_request>();
  }
  std::unique_ptr<request> start_put(int target, std::size_t offset, const void* in,
                                     std::size_t bytes) override {
    put(target, offset, in, bytes);
    return std::make_unique<done_request>();
  }
  std::uint64_t atomic(int target, std::size_t offset, mailroom::detail::elem_type type,
                       atomic_op op, std::uint64_t operand, std::uint64_t compare) override {
    using mailroom::detail::elem_type;
    std::size_t width = 8;
    switch (type) {
      case elem_type::i8:
      case elem_type::u8:
        width = 1;
        break;
      case elem_type::i16:
      case elem_type::u16:
        width = 2;
        break;
      case elem_type::i32:
      case elem_type::u32:
        width = 4;
        break;
      default:
        break;
    }
    std::byte* p = at(target, offset);
    std::uint64_t old = 0;
    std::memcpy(&old, p, width);  // (little-endian)
    std::uint64_t now = old;
    switch (op) {
      case atomic_op::add:
        now = old + operand;
        break;
      case atomic_op::band:
        now = old & operand;
        break;
      case atomic_op::bor:
        now = old | operand;
        break;
      case atomic_op::bxor:
        now = old ^ operand;
        break;
      case atomic_op::swap:
        now = operand;
        break;
      case atomic_op::load:
        break;
      case atomic_op::compare_swap: {
        const std::uint64_t mask = width == 8 ? ~0ull : (1ull << (8 * width)) - 1;
        if ((old & mask) == (compare & mask)) now = operand;
        break;
      }
    }
    std::memcpy(p, &now, width);
    return old;
  }
  std::unique_ptr<request> start_atomic(int target, std::size_t offset,
                                        mailroom::detail::elem_type type, atomic_op op,
                                        std::uint64_t operand, std::uint64_t compare,
                                        std::uint64_t* result) override {
    *result = atomic(target, offset, type, op, operand, compare);
    return std::make_unique<done_request>();
  }
  void flush_all() override {}

 private:
  std::byte* at(int target, std::size_t offset) {
    charge_remote_access(target, ops_);
    const engine& e = eng();
    return e.heaps_all + e.heap_bytes * static_cast<std::size_t>(target) + offset;
  }
  std::uint64_t ops_ = 0;
};

// ---- the stall watchdog ------------------------------------------------------------------------
class stall_watch {
 public:
  explicit stall_watch(double seconds) : seconds_(seconds), thread_([this] { watch(); }) {}
  ~stall_watch() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    std::uint64_t seen = ~0ull;
    auto since = std::chrono::steady_clock::now();
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(250));
      const std::uint64_t t = g_engine->turns_seen.load(std::memory_order_relaxed);
      const auto now = std::chrono::steady_clock::now();
      if (t != seen) {
        seen = t;
        since = now;
        continue;
      }
      const int pe = g_engine->running_pe.load(std::memory_order_relaxed);
      if (pe >= 0 && std::chrono::duration<double>(now - since).count() > seconds_) {
        std::fprintf(stderr,
                     "mailroom: simulated machine: PE %d has run for %.0f s without letting the "
                     "others have a turn: a loop that waits without polling mailroom (calling "
                     "mailroom::yield() in it lets the other PEs run)\n",
                     pe, seconds_);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }
  double seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// ---- parsing -----------------------------------------------------------------------------------
bool parse_double(std::string_view s, double& out) {
  const std::string t(s);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size() && errno == 0 && std::isfinite(out);
}
bool parse_u64(std::string_view s, std::uint64_t& out) {
  std::uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) mult = 1ull << 10;
  if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) mult = 1ull << 20;
  if (mult > 1) s.remove_suffix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return false;
  out *= mult;
  return true;
}

}  // namespace

bool computing_collectives() noexcept {
  if (g_engine == nullptr || g_engine->current == nullptr) return false;
  const auto& mine = me().to_compute;
  return std::any_of(mine.begin(), mine.end(),
                     [](const meeting* g) { return g->arrived == g->expected; });
}

// ---- the job-wide calls ------------------------------------------------------------------------
void describe_pe(int& rank, int& size, node_layout& layout) noexcept {
  engine& e = eng();
  const int pe = me().pe;
  rank = pe;
  size = e.m.pes;
  layout.node = e.node_of(pe);
  layout.node_rank = pe - layout.node * e.m.per_node;
  layout.node_size = e.node_size(layout.node);
  layout.nodes = (e.m.pes + e.m.per_node - 1) / e.m.per_node;
}

double wtime() noexcept { return me().clock; }

void abort(int code) noexcept {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

std::string library_version() { return "simulated machine (" + eng().m.describe() + ")"; }

void yield() {
  engine& e = eng();
  fiber& f = me();
  double cost = k_turn;
  if (f.busy) {
    f.idle_cost = k_turn;
    e.activity();
  } else {
    cost = f.idle_cost;
    f.idle_cost = std::min(f.idle_cost * 2, k_idle_most);
  }
  f.busy = false;
  f.clock += cost * (1 + e.m.jitter * e.uniform());
  ++e.turns;
  e.turns_seen.store(e.turns, std::memory_order_relaxed);
  if (e.turns - e.last_activity > k_deadlock_turns * static_cast<std::uint64_t>(e.live) + 10000)
    report_deadlock(false);
  if (e.ready.empty() || f.clock <= std::get<0>(e.ready.top()) + k_quantum) return;
  switch_to_main(f);
}

void note_poll(bool any) noexcept {
  if (any) me().busy = true;
}

void barrier() {
  int unused = 0;
  world(&unused, "barrier", [](const std::vector<const void*>&) {});
}

std::int64_t allreduce(std::int64_t v, reduce_op op) {
  std::int64_t out = 0;
  world(&v, "allreduce", [&](const std::vector<const void*>& all) {
    out = arg<std::int64_t>(all, 0);
    for (int p = 1; p < pes(); ++p) {
      const std::int64_t x = arg<std::int64_t>(all, p);
      out = op == reduce_op::min   ? std::min(out, x)
            : op == reduce_op::max ? std::max(out, x)
                                   : wrapping_add(out, x);
    }
  });
  return out;
}

void broadcast(void* data, std::size_t bytes, int root) {
  world(data, "broadcast", [&](const std::vector<const void*>& all) {
    if (me().pe != root) std::memcpy(data, all[static_cast<std::size_t>(root)], bytes);
  });
}

double round_trip_seconds() { return 2 * eng().m.network_latency; }

void allgather(int v, int* out) {
  world(&v, "allgather", [&](const std::vector<const void*>& all) {
    for (int p = 0; p < pes(); ++p) out[p] = arg<int>(all, p);
  });
}

void alltoall(const int* send, int* recv) {
  world(send, "alltoall", [&](const std::vector<const void*>& all) {
    for (int p = 0; p < pes(); ++p)
      recv[p] = static_cast<const int*>(all[static_cast<std::size_t>(p)])[me().pe];
  });
}

namespace {
struct v_args {
  const void* data;
  const int* counts;
  const int* displs;
  int count;
};
void copy_elems(void* to, int to_at, const void* from, int from_at, int n, std::size_t elem) {
  if (n <= 0) return;
  std::memcpy(static_cast<std::byte*>(to) + static_cast<std::size_t>(to_at) * elem,
              static_cast<const std::byte*>(from) + static_cast<std::size_t>(from_at) * elem,
              static_cast<std::size_t>(n) * elem);
}
}  // namespace

void alltoallv(const void* send, const int* send_counts, const int* send_displs, void* recv,
               const int* recv_counts, const int* recv_displs, std::size_t elem_bytes) {
  const v_args mine{send, send_counts, send_displs, 0};
  world(&mine, "alltoallv", [&](const std::vector<const void*>& all) {
    const int pe = me().pe;
    for (int p = 0; p < pes(); ++p) {
      const v_args& a = arg<v_args>(all, p);
      MAILROOM_CHECK(a.counts[pe] == recv_counts[p],
                     "alltoallv: PE {} sends {} elements to PE "
                     "{}, which expects {}",
                     p, a.counts[pe], pe, recv_counts[p]);
      copy_elems(recv, recv_displs[p], a.data, a.displs[pe], a.counts[pe], elem_bytes);
    }
  });
}

void gather(int send, int* recv, int root) {
  world(&send, "gather", [&](const std::vector<const void*>& all) {
    if (me().pe == root)
      for (int p = 0; p < pes(); ++p) recv[p] = arg<int>(all, p);
  });
}

int scatter(const int* send, int root) {
  int out = 0;
  world(send, "scatter", [&](const std::vector<const void*>& all) {
    out = static_cast<const int*>(all[static_cast<std::size_t>(root)])[me().pe];
  });
  return out;
}

void gatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
             std::size_t elem_bytes, int root) {
  const v_args mine{send, nullptr, nullptr, count};
  world(&mine, "gatherv", [&](const std::vector<const void*>& all) {
    if (me().pe != root) return;
    for (int p = 0; p < pes(); ++p) {
      const v_args& a = arg<v_args>(all, p);
      MAILROOM_CHECK(a.count == counts[p], "gatherv: PE {} sends {} elements, root expects {}", p,
                     a.count, counts[p]);
      copy_elems(recv, displs[p], a.data, 0, a.count, elem_bytes);
    }
  });
}

void scatterv(const void* send, const int* counts, const int* displs, void* recv, int count,
              std::size_t elem_bytes, int root) {
  const v_args mine{send, counts, displs, count};
  world(&mine, "scatterv", [&](const std::vector<const void*>& all) {
    const v_args& r = arg<v_args>(all, root);
    const int pe = me().pe;
    MAILROOM_CHECK(r.counts[pe] == count,
                   "scatterv: root sends {} elements to PE {}, which "
                   "expects {}",
                   r.counts[pe], pe, count);
    copy_elems(recv, 0, r.data, r.displs[pe], count, elem_bytes);
  });
}

std::int64_t exscan_sum(std::int64_t v) {
  std::int64_t out = 0;
  world(&v, "exscan", [&](const std::vector<const void*>& all) {
    for (int p = 0; p < me().pe; ++p) out = wrapping_add(out, arg<std::int64_t>(all, p));
  });
  return out;
}

std::unique_ptr<channel::impl> make_channel(std::size_t capacity, channel_sink& sink) {
  return std::make_unique<sim_channel>(capacity, sink);
}
std::unique_ptr<collective_context::impl> make_context() { return std::make_unique<sim_context>(); }
std::unique_ptr<group> make_world_group() {
  return std::make_unique<sim_group>(k_program_world, me().pe, pes(), std::vector<int>());
}
std::unique_ptr<node_memory::impl> make_node_memory(std::size_t bytes) {
  return std::make_unique<sim_node_memory>(bytes);
}
std::unique_ptr<heap_window::impl> make_heap_window(std::byte* base, std::size_t bytes) {
  MAILROOM_CHECK(base == eng().heap_base && bytes <= eng().heap_bytes,
                 "simulated machine: a heap window over memory other than the symmetric heap");
  return std::make_unique<sim_heap_window>();
}

// ---- the symmetric heaps -----------------------------------------------------------------------
std::byte* heap_start(std::size_t bytes) {
  engine& e = eng();
  bytes = (bytes + 4095) / 4096 * 4096;
  const auto lo = allreduce(static_cast<std::int64_t>(bytes), reduce_op::min);
  const auto hi = allreduce(static_cast<std::int64_t>(bytes), reduce_op::max);
  MAILROOM_CHECK(lo == hi, "MAILROOM_SYMMETRIC_HEAP_BYTES differs between PEs");
  if (e.heap_base == nullptr) {
    e.heap_bytes = bytes;
    e.heap_fd = memfd_create("mailroom-simulated-heaps", MFD_CLOEXEC);
    MAILROOM_CHECK(e.heap_fd >= 0, "simulated machine: memfd_create failed: {}",
                   std::strerror(errno));
    MAILROOM_CHECK(
        ftruncate(e.heap_fd, static_cast<off_t>(bytes * static_cast<std::size_t>(e.m.pes))) == 0,
        "simulated machine: cannot size the symmetric heaps ({} x {} bytes): {} "
        "(lower MAILROOM_SYMMETRIC_HEAP_BYTES)",
        e.m.pes, bytes, std::strerror(errno));
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    MAILROOM_CHECK(p != MAP_FAILED,
                   "simulated machine: cannot reserve {} bytes for the "
                   "symmetric heap: {}",
                   bytes, std::strerror(errno));
    e.heap_base = static_cast<std::byte*>(p);
  }
  MAILROOM_CHECK(bytes == e.heap_bytes,
                 "simulated machine: a second runtime asked for a "
                 "symmetric heap of another size ({} bytes, then {})",
                 e.heap_bytes, bytes);
  return e.heap_base;  // (mapped at the PE's first allocation: symmetric.cpp)
}

void heap_map() noexcept {
  engine& e = eng();
  const int pe = me().pe;
  if (e.heap_mapped == pe) return;
  void* p = mmap(e.heap_base, e.heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                 e.heap_fd, static_cast<off_t>(e.heap_bytes * static_cast<std::size_t>(pe)));
  if (p == MAP_FAILED) {
    std::fprintf(stderr,
                 "mailroom: rank %d: simulated machine: cannot map its symmetric heap: "
                 "%s\n",
                 pe, std::strerror(errno));
    std::_Exit(1);
  }
  e.heap_mapped = pe;
}

}  // namespace mailroom::transport::sim

namespace mailroom {

using transport::sim::eng;
using transport::sim::g_engine;

simulated_machine simulated_machine::parse(std::string_view spec) {
  simulated_machine m;
  const std::string whole(spec);
  auto bad = [&](std::string_view part, std::string_view why) {
    MAILROOM_FAIL(
        "MAILROOM_SIM=\"{}\": {} in \"{}\" (expected P[xN][,key=value...], keys seed, "
        "latency, node_latency (us), bandwidth, node_bandwidth (GB/s), jitter, stack, stall (s))",
        whole, why, part);
  };
  std::size_t comma = spec.find(',');
  std::string_view head = spec.substr(0, comma);
  const std::size_t x = head.find('x');
  std::uint64_t pes = 0, per_node = 1;
  if (!transport::sim::parse_u64(head.substr(0, x), pes) || pes < 1 || pes > (1u << 20))
    bad(head, "the number of PEs is not a whole number from 1 to 1048576");
  if (x != std::string_view::npos &&
      (!transport::sim::parse_u64(head.substr(x + 1), per_node) || per_node < 1))
    bad(head, "the PEs per node are not a whole number of at least 1");
  m.pes = static_cast<int>(pes);
  m.per_node = static_cast<int>(std::min<std::uint64_t>(per_node, pes));
  while (comma != std::string_view::npos) {
    spec.remove_prefix(comma + 1);
    comma = spec.find(',');
    const std::string_view kv = spec.substr(0, comma);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos) bad(kv, "no '='");
    const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
    double d = 0;
    std::uint64_t u = 0;
    if (key == "seed") {
      if (!transport::sim::parse_u64(value, u)) bad(kv, "the seed is not a whole number");
      m.seed = u;
    } else if (key == "stack") {
      if (!transport::sim::parse_u64(value, u) || u < 65536) bad(kv, "the stack is below 64K");
      m.stack_bytes = u;
    } else if (key == "stall") {
      if (!transport::sim::parse_double(value, d) || d <= 0) bad(kv, "not a number of seconds");
      m.stall_seconds = d;
    } else if (key == "jitter") {
      if (!transport::sim::parse_double(value, d) || d < 0 || d > 10)
        bad(kv, "jitter not in 0..10");
      m.jitter = d;
    } else if (key == "latency" || key == "node_latency") {
      if (!transport::sim::parse_double(value, d) || d < 0) bad(kv, "not a latency");
      (key == "latency" ? m.network_latency : m.node_latency) = d * 1e-6;
    } else if (key == "bandwidth" || key == "node_bandwidth") {
      if (!transport::sim::parse_double(value, d) || d <= 0) bad(kv, "not a bandwidth");
      (key == "bandwidth" ? m.network_bandwidth : m.node_bandwidth) = d * 1e9;
    } else {
      bad(kv, "unknown key");
    }
  }
  return m;
}

std::optional<simulated_machine> simulated_machine::from_environment() {
  const char* s = std::getenv("MAILROOM_SIM");
  if (s == nullptr || *s == '\0') return std::nullopt;
  return parse(s);
}

std::string simulated_machine::describe() const {
  const int nodes = (pes + per_node - 1) / per_node;
  return fmt::format(
      "{} PEs, {} per node ({} nodes), network {:g} us {:g} GB/s, node {:g} us "
      "{:g} GB/s, jitter {:g}, seed {}",
      pes, per_node, nodes, network_latency * 1e6, network_bandwidth / 1e9, node_latency * 1e6,
      node_bandwidth / 1e9, jitter, seed);
}

namespace {
// Each PE's stack is two mappings (the guard page below it has other permissions), and the kernel
// caps a process's mappings (vm.max_map_count, 65530 by default): past the cap a stack cannot be
// mapped. Said before the first PE starts, with the cap and how to raise it.
void check_mappings(int pes) {
  long cap = 0;
  if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%ld", &cap) != 1) cap = 0;
    std::fclose(f);
  }
  constexpr long k_others = 4096;  // the program's own: libraries, heaps, MPI, the symmetric heap
  const long need = 2L * pes + k_others;
  MAILROOM_CHECK(cap <= 0 || need <= cap,
                 "MAILROOM_SIM: {} PEs need about {} memory mappings (two per PE: its stack and "
                 "the guard page below it), but this kernel allows a process {} "
                 "(vm.max_map_count): at most about {} PEs here. Raise it with `sysctl -w "
                 "vm.max_map_count={}` (as root), or simulate fewer PEs",
                 pes, need, cap, (cap - k_others) / 2, need + k_others);
}
}  // namespace

bool simulated() noexcept { return transport::sim::g_active; }

int simulate(const simulated_machine& m, const std::function<int()>& program) {
  using namespace transport::sim;
  MAILROOM_CHECK(!g_active, "simulate() called on a simulated PE");
  MAILROOM_CHECK(m.pes >= 1 && m.per_node >= 1, "simulate(): {} PEs, {} per node", m.pes,
                 m.per_node);
  engine e;
  e.m = m;
  e.m.per_node = std::min(m.per_node, m.pes);
  e.program = &program;
  e.rng.seed(m.seed);
  e.live = m.pes;
#ifdef MAILROOM_SIM_ASAN
  const std::size_t default_stack = 1u << 20;
#else
  const std::size_t default_stack = 256u << 10;
#endif
  const std::size_t stack = (m.stack_bytes > 0 ? m.stack_bytes : default_stack) + 4096;
  check_mappings(m.pes);
  g_engine = &e;
  for (int pe = 0; pe < m.pes; ++pe) {
    auto f = std::make_unique<fiber>();
    f->pe = pe;
    // A guard page below each stack: an overflow faults instead of corrupting a neighbour.
    void* s = mmap(nullptr, stack, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    MAILROOM_CHECK(s != MAP_FAILED, "simulated machine: cannot map a stack for PE {}: {}", pe,
                   std::strerror(errno));
    mprotect(s, 4096, PROT_NONE);
    f->stack = static_cast<std::byte*>(s) + 4096;
    f->stack_bytes = stack - 4096;
    f->parked = mailroom::detail::pe_locals::make_parked();
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = f->stack_bytes;
    f->ctx.uc_link = nullptr;
    makecontext(&f->ctx, &fiber_entry, 0);
    e.fibers.push_back(std::move(f));
  }
  g_active = true;
  const std::terminate_handler outer_terminate = std::set_terminate(&uncaught);
  auto& ready = e.ready;
  for (int pe = 0; pe < m.pes; ++pe) ready.emplace(0.0, e.rng(), pe);
  {
    stall_watch watch(m.stall_seconds);
    while (!ready.empty()) {
      const int pe = std::get<2>(ready.top());
      ready.pop();
      fiber& f = *e.fibers[static_cast<std::size_t>(pe)];
      run(f);
      if (f.done) {
        --e.live;
        e.activity();
        munmap(f.stack - 4096, f.stack_bytes + 4096);
        f.stack = nullptr;
        continue;
      }
      if (!f.asleep) ready.emplace(f.clock, e.rng(), pe);
    }
    if (e.live > 0) report_deadlock(true);  // every PE left sleeps in a meeting
  }
  g_active = false;
  std::set_terminate(outer_terminate);
  int rc = 0;
  for (auto& f : e.fibers) {
    mailroom::detail::pe_locals::destroy_parked(f->parked);
    if (rc == 0) rc = f->exit_code;
  }
  for (auto& [key, box] : e.inboxes)
    while (!box.empty()) {
      delete box.top();
      box.pop();
    }
  if (e.heap_base != nullptr) munmap(e.heap_base, e.heap_bytes);
  if (e.heaps_all != nullptr) munmap(e.heaps_all, e.heap_bytes * static_cast<std::size_t>(e.m.pes));
  if (e.heap_fd >= 0) close(e.heap_fd);
  g_engine = nullptr;
  return rc;
}

}  // namespace mailroom
