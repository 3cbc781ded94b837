// SPDX-License-Identifier: MIT
// The simulated machine: P virtual PEs in one process, each a fiber with a stack of its own,
// taking turns on the calling thread. mailroom runs on them unchanged: what is per PE in its
// globals is swapped at each switch (common/pe_local.hpp), and sim*.cpp stand in for MPI.
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
//
// This file is the engine: the fibers and the switches between them, the deadlock report, the
// stall watchdog, the job-wide calls and simulate(). Each transport concept has a file of its
// own beside it (point to point: sim_channel.cpp; collectives: sim_collective.cpp; node memory
// and the symmetric heaps: sim_window.cpp; MAILROOM_SIM: sim_config.cpp), all sharing the
// engine's state through sim_engine.hpp.
#include "transport/sim.hpp"

#include "mailroom/error.hpp"
#include "mailroom/simulate.hpp"

#include "common/hooks.hpp"
#include "common/pe_local.hpp"
#include "transport/sim_engine.hpp"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
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
engine* g_engine = nullptr;

namespace {

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

}  // namespace

// From a fiber to the scheduler.
void switch_to_main(fiber& f) {
  engine& e = eng();
  start_switch(f.done ? nullptr : &f.fake_stack, e.main_stack_bottom, e.main_stack_size);
  swapcontext(&f.ctx, &e.main_ctx);
  finish_switch(f.fake_stack);
}

namespace {

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

}  // namespace

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

}  // namespace mailroom::transport::sim

namespace mailroom {

using transport::sim::eng;
using transport::sim::g_engine;

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
