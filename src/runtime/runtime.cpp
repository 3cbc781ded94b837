// SPDX-License-Identifier: MIT
// mailroom::runtime: start-up and shut-down of every layer, in order.
#include "mailroom/runtime.hpp"

#include "aggregation/exchange.hpp"
#include "mailroom/detail/lambda_registry.hpp"
#include "mailroom/simulate.hpp"
#include "runtime/engine.hpp"
#include "runtime/lifetime.hpp"
#include "runtime/workers.hpp"
#include "termination/protocols.hpp"
#include "transport/transport.hpp"

#include "common/environment.hpp"
#include "common/pe_local.hpp"
#include "common/trace.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mailroom {

namespace {
bool g_runtime_exists = false;
detail::job_pes g_job_pes{};  // num_pes() and the division by it (cyclic's)

// Idle sleep when this node's threads outnumber its cores and MAILROOM_IDLE_SLEEP_NS is not set: a
// PE that spins while it waits takes the core from one that has work (MPI libraries yield in this
// case too). Measured on a 2-core machine: 4 PEs through 80000 short kernels took 44 s spinning
// and 5 s sleeping once the other programs on the machine kept both cores busy.
constexpr std::uint64_t k_oversubscribed_idle_sleep_ns = 1000;

// The threads of this node's PEs (their workers) against the cores they may run on: the node's
// online cores, and this PE's affinity set (a launcher that binds each PE to one core, as Open
// MPI does at 2 processes or fewer, leaves its workers one core whatever the node has).
struct node_load {
  int workers = 1;    // this PE's
  int pes = 1;        // on this node
  int threads = 1;    // the workers of every PE of this node
  int cores = 1;      // online on this node
  int own_cores = 1;  // in this PE's affinity set
  [[nodiscard]] bool crowded() const noexcept { return threads > cores || workers > own_cores; }
};

node_load measure_node_load(int workers) {
  node_load l;
  l.workers = workers;
  l.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  l.own_cores = l.cores;
  if (cpu_set_t mask; sched_getaffinity(0, sizeof mask, &mask) == 0)
    l.own_cores = std::min(l.cores, CPU_COUNT(&mask));
  l.threads = workers;
  // (The simulated machine runs every PE on one thread: never crowded.)
  if (simulated()) return l;
  const auto n = static_cast<std::size_t>(transport::size());
  std::vector<int> all_workers(n), all_nodes(n);
  transport::allgather(workers, all_workers.data());
  transport::allgather(transport::layout().node, all_nodes.data());
  l.pes = 0;
  l.threads = 0;
  for (std::size_t r = 0; r < n; ++r)
    if (all_nodes[r] == transport::layout().node) {
      ++l.pes;
      l.threads += all_workers[r];
    }
  return l;
}

// Says what the node's load means, once per node when it is crowded with pool workers (the
// first PE of the node), and on rank 0 with MAILROOM_VERBOSE.
void report_node_load(const node_load& l, const mailroom::config& cfg, const char* worker0) {
  const bool crowded = l.crowded();
  const bool warn = crowded && l.threads > l.pes && transport::layout().node_rank == 0;
  if (!warn && !(cfg.verbose > 0 && transport::rank() == 0)) return;
  const bool thread = worker0 != nullptr && std::string_view(worker0) == "thread";
  std::string line = fmt::format("node {}: {} thread{} (the workers{} of its {} PE{}) on {} core{}",
                                 transport::layout().node, l.threads, l.threads == 1 ? "" : "s",
                                 thread ? " and progress threads" : "", l.pes,
                                 l.pes == 1 ? "" : "s", l.cores, l.cores == 1 ? "" : "s");
  if (l.workers > l.own_cores)
    line += fmt::format("; PE {} has {} threads but may run on {} core{} only (its CPU affinity)",
                        transport::rank(), l.workers, l.own_cores, l.own_cores == 1 ? "" : "s");
  const std::string progress =
      worker0 == nullptr ? "" : fmt::format(", MAILROOM_PROGRESS={}", worker0);
  if (!crowded) {
    std::fprintf(stderr, "mailroom: %s: waits spin%s\n", line.c_str(), progress.c_str());
    return;
  }
  line += fmt::format(
      ": oversubscribed, so waits yield instead of spinning (idle sleep {} ns){} and the threads "
      "take turns",
      cfg.idle_sleep_ns, progress);
  if (warn) {
    line += l.workers > l.own_cores
                ? ". Launch with `mpirun --bind-to none` or `--map-by slot:PE=N` "
                  "(scripts/mpirun.sh does when it sees MAILROOM_WORKERS, --workers or "
                  "MAILROOM_PROGRESS=thread)"
                : ". Fewer PEs or workers per node would run faster";
    std::fprintf(stderr, "mailroom: warning: %s\n", line.c_str());
  } else {
    std::fprintf(stderr, "mailroom: %s\n", line.c_str());
  }
}
std::unique_ptr<transport::collective_context> g_barrier, g_quiesce;
std::vector<void (*)() noexcept> g_stops;  // at_runtime_stop's
std::vector<void (*)()> g_at_barrier;      // at_barrier's
MAILROOM_PE_LOCAL(g_runtime_exists);
MAILROOM_PE_LOCAL(g_job_pes);
MAILROOM_PE_LOCAL(g_stops);
MAILROOM_PE_LOCAL(g_at_barrier);
MAILROOM_PE_LOCAL(g_barrier);
MAILROOM_PE_LOCAL(g_quiesce);

// A barrier that keeps mailroom moving while it waits: a PE blocked in MPI_Barrier would stop
// taking in buffers, and PEs still sending to it could never reach the barrier. At the end of
// the runtime (`closing`), a buffer for a mailbox this PE has not constructed can only mean that
// the PEs constructed different selectors: that stops the job at once, not at the watchdog.
void progressing_barrier(bool closing = false) {
  g_barrier->start_barrier();
  if (closing) detail::exchange::get().check_unclaimed();
  // (Closing, it polls even on the simulated machine, whose idle wait would sleep through the
  // arrivals that show a mismatch.)
  if (closing || !g_barrier->wait_idle("barrier()"))
    while (!g_barrier->test()) {
      detail::engine::progress_waiting("barrier()");
      if (closing) detail::exchange::get().check_unclaimed();
    }
}

// What the transport's collectives ask: does this PE hold mailroom state a peer may need it to
// move (then they wait without blocking, running the progress engine)?
bool mailroom_active() {
  if (!detail::exchange::running()) return false;
  const detail::exchange& ex = detail::exchange::get();
  return ex.live_conveyors() > 0 || !ex.drained() || ex.unacknowledged > 0;
}
void progress_in_collective(const char* what) {
  if (detail::exchange::running()) detail::engine::progress_waiting(what);
}

// The configuration, once every PE has read it: a bad variable (every PE usually sees the same
// environment) is reported once, by the first PE that found one, and every PE then ends as
// quietly as MPI allows (MPI_Finalize and exit 1, not an abort from each).
mailroom::config agreed_configuration() {
  std::string error;
  mailroom::config cfg = detail::read_environment(error);
  constexpr std::int64_t k_none = std::numeric_limits<std::int64_t>::max();
  const std::int64_t first = transport::allreduce_min(error.empty() ? k_none : transport::rank());
  if (first == k_none) return cfg;
  if (first == transport::rank())
    std::fprintf(stderr, "mailroom: rank %d: %s\n", transport::rank(), error.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  transport::barrier();  // (the report is out before any PE leaves)
  if (!simulated()) transport::finalize();
  std::_Exit(1);
}

void start(int* argc, char*** argv, communicator comm) {
  MAILROOM_CHECK(!g_runtime_exists,
                 "a second mailroom::runtime was constructed; create one per "
                 "program");
  // (Read again with the rest of the configuration below; MPI's thread level is chosen first.)
  const char* progress_env = std::getenv("MAILROOM_PROGRESS");
  transport::init(argc, argv, comm.is_world(), comm.fortran_handle(),
                  progress_env != nullptr && std::string_view(progress_env) == "thread");
  mailroom::config cfg = agreed_configuration();
  const auto workers = static_cast<int>(std::min<std::uint64_t>(cfg.workers, 1u << 20));
  const bool progress_thread = cfg.progress == static_cast<std::uint64_t>(progress_mode::thread);
  const node_load load = measure_node_load(workers + (progress_thread ? 1 : 0));
  if (std::getenv("MAILROOM_IDLE_SLEEP_NS") == nullptr && load.crowded())
    cfg.idle_sleep_ns = k_oversubscribed_idle_sleep_ns;
  detail::set_current_config(cfg);
  transport::group::world().reduce_within_node(cfg.node_reduce_bytes);
  if (cfg.verbose > 0 && transport::rank() == 0) {
    std::fprintf(stderr, "mailroom: %d PEs on %d node(s), %s (%s)\nmailroom configuration:\n%s",
                 transport::size(), transport::layout().nodes, transport::library_version().c_str(),
                 transport::thread_level(), cfg.describe().c_str());
  }
  detail::finalize_lambda_registry();
  detail::exchange::start();
  if (cfg.verbose > 0 && transport::rank() == 0) {
    const auto& ex = detail::exchange::get();
    const auto& r = ex.job_routes();
    std::fprintf(stderr,
                 "mailroom: routing %s: %d lanes per typed mailbox on rank 0, %d network "
                 "peers, %u link pool credits per lane to another node\n",
                 routing_in_use(), r.lanes(), r.network_peers(), ex.link_credits());
  }
  g_barrier = std::make_unique<transport::collective_context>();
  g_quiesce = std::make_unique<transport::collective_context>();
  const detail::index_magic by_pes = detail::index_magic_for(transport::size());
  g_job_pes = {by_pes.m, transport::size(), by_pes.s};
  g_runtime_exists = true;
  if (workers > 1) {
    MAILROOM_CHECK(!simulated(),
                   "MAILROOM_WORKERS={}: the simulated machine runs every PE on "
                   "one thread; use MAILROOM_WORKERS=1 there",
                   workers);
    MAILROOM_CHECK(transport::threads_allowed(),
                   "MAILROOM_WORKERS={} needs MPI initialised with MPI_THREAD_FUNNELED at least "
                   "(the program initialised it with MPI_THREAD_SINGLE, which allows no other "
                   "thread in the process)",
                   workers);
  }
  if (progress_thread) {
    MAILROOM_CHECK(!simulated(),
                   "MAILROOM_PROGRESS=thread: the simulated machine runs every PE on one thread; "
                   "use dedicated or shared there");
    MAILROOM_CHECK(transport::threads_allowed(true),
                   "MAILROOM_PROGRESS=thread needs MPI initialised with MPI_THREAD_SERIALIZED at "
                   "least (the progress thread and the main flow call MPI by turns); the program "
                   "initialised it with {}",
                   transport::thread_level());
  }
  const bool dedicated = cfg.progress == static_cast<std::uint64_t>(progress_mode::dedicated);
  report_node_load(load, cfg,
                   progress_thread ? "thread"
                   : workers > 1   ? (dedicated ? "dedicated" : "shared")
                                   : nullptr);
  detail::engine::staging_in_use = workers > 1 || progress_thread;
  detail::start_workers({workers, dedicated, load.crowded(), progress_thread});
  // (With a progress thread the main flow is worker 0 only in its turns, as in any runtime call.)
  const detail::runtime_turn turn;
  transport::barrier();
  detail::trace::start(transport::rank(), transport::size());
  transport::set_progress_hooks(
      {&mailroom_active, &progress_in_collective, [] { return detail::engine::waiting_in; }});
}
}  // namespace

runtime::runtime(int& argc, char**& argv, communicator comm) { start(&argc, &argv, comm); }
runtime::runtime(communicator comm) { start(nullptr, nullptr, comm); }

runtime::~runtime() {
  detail::stop_workers();
  detail::engine::staging_in_use = false;
  // Operations started and never waited for (collectives, gathers): every PE started them, so
  // they complete; a gather's selector goes with its operation.
  while (!detail::engine::pending.empty())
    detail::engine::progress_waiting("the end of the runtime: operations in flight");
  MAILROOM_CHECK(detail::engine::live.empty(),
                 "mailroom::runtime destroyed while {} selector(s) still exist",
                 detail::engine::live.size());
  progressing_barrier(true);
  // MAILROOM_TRACE: every PE writes its part, then rank 0 joins them (a barrier either way: the
  // variable might be set on some PEs only).
  detail::trace::write_part();
  transport::barrier();
  detail::trace::merge();
  transport::set_progress_hooks({});
  g_barrier.reset();
  g_quiesce.reset();
  detail::exchange::stop();
  g_at_barrier.clear();
  for (; !g_stops.empty(); g_stops.pop_back()) g_stops.back()();
  g_runtime_exists = false;
  transport::finalize();
}

const mailroom::config& runtime::config() const noexcept { return current_config(); }

bool detail::runtime_exists() noexcept { return g_runtime_exists; }
void detail::at_runtime_stop(void (*stop)() noexcept) { g_stops.push_back(stop); }
void detail::at_barrier(void (*complete)()) { g_at_barrier.push_back(complete); }
void detail::run_at_barrier() {
  for (void (*complete)() : g_at_barrier) complete();
}

namespace {
[[noreturn, gnu::cold]] void before_runtime(const char* call) {
  MAILROOM_FAIL(
      "{} called before mailroom::runtime exists (construct `mailroom::runtime "
      "rt(argc, argv);` first): it has no PEs to tell of yet",
      call);
}
}  // namespace

pe this_pe() noexcept {
  if (MAILROOM_UNLIKELY(!g_runtime_exists)) before_runtime("mailroom::this_pe()");
  return pe(transport::rank());
}
int num_pes() noexcept {
  if (MAILROOM_UNLIKELY(!g_runtime_exists)) before_runtime("mailroom::num_pes()");
  return transport::size();
}
detail::job_pes detail::job_division() noexcept {
  if (MAILROOM_UNLIKELY(!g_runtime_exists)) before_runtime("mailroom::num_pes()");
  return g_job_pes;
}
double wtime() noexcept {
  if (MAILROOM_UNLIKELY(!g_runtime_exists)) before_runtime("mailroom::wtime()");
  return transport::wtime();
}

void yield(source_location loc) {
  const detail::call_site here(loc);
  detail::scheduler::check_running("mailroom::yield");
  const detail::runtime_turn turn;  // (the main flow beside a progress thread polls too)
  // On a pool worker: another task, if one is queued.
  if (detail::t_worker > 0) {
    detail::publish_staged();  // (what it waits for may need what it sent)
    detail::run_one_task();
    return;
  }
  detail::engine::progress_waiting("yield()");
  detail::run_one_task();
}

namespace detail {
void progress_poll(source_location where) {
  const call_site here(where);
  scheduler::check_running("mailroom::progress");
  // Calls between two looks at the clock: doubled or halved so that looks come about
  // k_look_ns apart, whatever an iteration of the caller's loop costs.
  constexpr std::int64_t k_look_ns = 2'000, k_poll_ns = 10'000;
  constexpr std::int32_t k_most_calls = 1 << 20;
  thread_local std::int32_t calls = 1;
  thread_local std::int64_t last_look = 0, last_poll = 0;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  const std::int64_t gap = now - last_look;
  last_look = now;
  if (gap < k_look_ns / 2)
    calls = std::min(calls * 2, k_most_calls);
  else if (gap > 2 * k_look_ns)
    calls = std::max(calls / 2, 1);
  send_context::progress_countdown = calls;
  if (now - last_poll < k_poll_ns) return;
  last_poll = now;
  if (scheduler::in_handler()) return;
  if (t_worker > 0) {
    publish_staged();
    return;
  }
  engine::progress_waiting("progress()");
  // The loop that calls it is alive, whether or not messages come: not a stall to report.
  engine::last_activity = -1;
}
}  // namespace detail

void barrier(source_location loc) {
  const detail::call_site here(loc);
  const detail::runtime_turn turn;
  detail::scheduler::check_running("mailroom::barrier");
  MAILROOM_CHECK(!detail::scheduler::in_handler(),
                 "barrier() called from a handler: handlers "
                 "must never block");
  detail::run_at_barrier();  // (the symmetric heap's puts: quiet(); the global view's writes)
  progressing_barrier();
}

}  // namespace mailroom

namespace mailroom {

// Mattern's four-counter waves (detail::quiescence) over counts of every conveyor this PE
// has ever had: items shipped (to any PE) and items handled here. They are sampled only when
// nothing has arrived unhandled here, every partly filled buffer is shipped and none waits for a
// credit, so every item this PE pushed is counted as shipped; two waves with equal sums mean
// nothing was in flight between them, and nothing can be sent again before this returns (only
// handlers could, and nothing is left to handle). Then each PE waits for the acknowledgements of
// its own buffers: all were handled, so all are on their way.
void quiesce(source_location loc) {
  const detail::call_site here(loc);
  using detail::engine;
  using detail::scheduler;
  const detail::runtime_turn turn;
  scheduler::check_running("mailroom::quiesce");
  MAILROOM_CHECK(!scheduler::in_handler(),
                 "quiesce() called from a handler: handlers must "
                 "never block");
  detail::exchange& ex = detail::exchange::get();
  detail::quiescence waves;
  for (;;) {
    engine::progress_waiting("quiesce()");
    bool ready = ex.drained();
    for (const detail::selector_core* s : engine::live)
      if (s->has_arrivals()) ready = false;
    if (ready)
      for (detail::selector_core* s : engine::live)
        if (!s->flush_partial()) ready = false;
    if (waves.step(*g_quiesce, ready, ex.items_shipped, ex.items_handled)) break;
  }
  while (ex.unacknowledged > 0) engine::progress_waiting("quiesce(): acknowledgements");
}

}  // namespace mailroom

namespace mailroom {

namespace {
// s += sign * o, field by field (the per-PE vectors grow to the longer of the two).
void accumulate(statistics& s, const statistics& o, std::int64_t sign) {
  s.messages_sent += sign * o.messages_sent;
  s.bytes_sent += sign * o.bytes_sent;
  s.buffers_sent += sign * o.buffers_sent;
  s.room_sent += sign * o.room_sent;
  s.messages_forwarded += sign * o.messages_forwarded;
  s.messages_combined += sign * o.messages_combined;
  s.messages_combined_at_hops += sign * o.messages_combined_at_hops;
  s.messages_handled += sign * o.messages_handled;
  s.credit_wait_seconds += static_cast<double>(sign) * o.credit_wait_seconds;
  s.idle_flushed += sign * o.idle_flushed;
  const auto add = [sign](std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    if (a.size() < b.size()) a.resize(b.size(), 0);
    for (std::size_t i = 0; i < b.size(); ++i) a[i] += sign * b[i];
  };
  add(s.messages_to, o.messages_to);
  add(s.bytes_to, o.bytes_to);
  add(s.buffers_to, o.buffers_to);
  add(s.hop_in, o.hop_in);
  add(s.hop_combined, o.hop_combined);
}
}  // namespace

statistics& statistics::operator+=(const statistics& o) {
  accumulate(*this, o, 1);
  return *this;
}

statistics& statistics::operator-=(const statistics& o) {
  accumulate(*this, o, -1);
  return *this;
}

statistics stats() {
  const detail::runtime_turn turn;
  detail::scheduler::check_running("mailroom::stats");
  return detail::exchange::get().totals();
}

std::size_t buffer_payload_bytes() noexcept {
  return detail::exchange::running() ? detail::exchange::get().capacity() - detail::k_header_bytes
                                     : 0;
}

std::string mpi_library() {
  const detail::runtime_turn turn;
  return transport::library_version();
}
int num_nodes() noexcept {
  if (MAILROOM_UNLIKELY(!g_runtime_exists)) before_runtime("mailroom::num_nodes()");
  return transport::layout().nodes;
}
int routing_node(pe p) {
  detail::scheduler::check_running("mailroom::routing_node");
  return detail::exchange::get().node_of(p.rank());
}
double round_trip_seconds(int batches) {
  const detail::runtime_turn turn;
  return transport::round_trip_seconds(batches);
}

aggregation_report aggregation() {
  const detail::runtime_turn turn;
  detail::scheduler::check_running("mailroom::aggregation");
  const detail::exchange& ex = detail::exchange::get();
  return {ex.link_credits(), ex.shared_slots(), ex.node_capacity(), ex.peak_pool_bytes()};
}

const char* routing_in_use() noexcept {
  return routing_name(static_cast<std::uint64_t>(
      detail::exchange::running() ? detail::exchange::get().routing_used() : routing::direct));
}

}  // namespace mailroom
