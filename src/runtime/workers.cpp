// SPDX-License-Identifier: MIT
// The workers of a PE: a deque of tasks per worker with stealing, the queue of handlers' tasks,
// the blocks in which pool workers stage their sends, and the rounds in which every worker
// publishes what it staged (docs/design.md, workers).
#include "runtime/workers.hpp"

#include "runtime/context.hpp"

#include "mailroom/config.hpp"
#include "mailroom/error.hpp"
#include "runtime/engine.hpp"

#include "common/pe_local.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mailroom::detail {

namespace {

void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// How a pool worker waits for another thread to move (worker 0 to take in its sends, a task to
// end, a publish round): it spins while the node's threads have a core each; when they do not,
// it yields at once, since the thread it waits for may need its core. After a while it naps.
class backoff {
 public:
  explicit backoff(bool oversubscribed) noexcept : spins_(oversubscribed ? 0 : k_spins) {}
  void reset() noexcept { n_ = 0; }
  void pause() noexcept {
    if (n_ < spins_) {
      cpu_pause();
    } else if (n_ < spins_ + k_yields) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(k_nap_us));
      return;
    }
    ++n_;
  }

 private:
  static constexpr std::uint32_t k_spins = 2000, k_yields = 200, k_nap_us = 20;
  std::uint32_t spins_;
  std::uint32_t n_ = 0;
};

// Blocks a pool worker may have published and worker 0 not yet drained: beyond, the worker waits.
// Bounds what the workers stage at k_max_published blocks each, whatever the traffic.
constexpr std::int64_t k_max_published = 8;

struct alignas(64) worker_state {
  std::mutex m;
  std::deque<task*> q;
  std::atomic<std::size_t> size{0};
  std::atomic<std::uint64_t> acked{0};     // the last publish round it took part in
  std::atomic<std::int64_t> published{0};  // its blocks published and not yet drained
};

struct pool {
  int n = 1;
  bool dedicated = true;        // worker 0 runs no task (worker_plan)
  bool oversubscribed = false;  // waits yield at once (worker_plan)
  // MAILROOM_PROGRESS=thread: the slot of the main flow's thread (n: after the pool workers'),
  // which acts as worker 0 only in its turns; 0 without a progress thread.
  int main_slot = 0;
  // Whoever holds it acts as worker 0 (the progress thread between the main flow's turns).
  std::mutex baton;
  std::atomic<int> want{0};  // the main flow waits for a turn, or has one: the thread stands by
  std::atomic<bool> stop_progress{false};
  std::thread progress;
  std::vector<std::unique_ptr<worker_state>> w;
  std::vector<std::thread> threads;
  std::atomic<bool> stop{false};
  // Tasks that handlers spawned: run by worker 0's progress engine and by idle pool workers.
  std::mutex hq_m;
  std::deque<task*> hq;
  std::atomic<std::size_t> hq_size{0};
  // Completions of futures of tasks that pool workers ran, for worker 0 to run.
  std::mutex done_m;
  std::vector<callback> completions;
  std::atomic<std::size_t> completions_n{0};
  std::atomic<std::uint64_t> epoch{0};  // publish rounds started
  std::mutex sleep_m;
  std::condition_variable sleep_cv;
  std::atomic<int> sleepers{0};
  std::atomic<int> looking{0};  // pool workers idle or waiting for worker 0, spinning
  std::mutex blocks_m;
  std::vector<stage_block*> free_blocks;
  finish_state root;  // tasks spawned outside any finish
  std::atomic<std::int64_t> handler_work{0};

  ~pool() {
    for (stage_block* b : free_blocks) delete b;
  }
};

pool* g_pool = nullptr;
MAILROOM_PE_LOCAL(g_pool);
MAILROOM_PE_LOCAL(t_worker);
MAILROOM_PE_LOCAL(t_finish);
MAILROOM_PE_LOCAL(t_handler_task);
MAILROOM_PE_LOCAL(t_in_task);

thread_local std::uint64_t t_seen_epoch = 0;
// The main flow's own sending context, kept while it has a turn as worker 0.
thread_local std::uint8_t t_sender_from = 0;
// The stagings in which this worker has an open block.
thread_local std::vector<staging*> t_open;
// The mailboxes to which this pool worker has published blocks to its own PE: it handles them
// when it looks for work. Forgotten at each publish round (a mailbox being destroyed runs one).
thread_local std::vector<mailbox_base*> t_local_boxes;

// Stops the job once a wait of a pool worker has lasted the watchdog's time.
class stall_clock {
 public:
  explicit stall_clock(const char* what) : what_(what) {}
  /// The wait moved (a task ran, what it waits for came nearer): its time starts again.
  void reset() noexcept { t0_ = -1; }
  void tick() {
    if (++polls_ % 1024 != 0) return;
    const std::uint64_t limit = current_config().watchdog;
    if (limit == 0) return;
    const double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (t0_ < 0) t0_ = now;
    MAILROOM_CHECK(now - t0_ < static_cast<double>(limit),
                   "watchdog: worker {} has waited {:.0f} s in {} (MAILROOM_WATCHDOG={}): "
                   "worker 0, which runs the communication, has not taken in its sends or "
                   "completed what it waits for; is worker 0 computing without calling mailroom?",
                   t_worker, now - t0_, what_, limit);
  }

 private:
  const char* what_;
  std::uint64_t polls_ = 0;
  double t0_ = -1;
};

void publish_own() {
  for (staging* s : t_open) s->publish_mine();
  t_open.clear();
}

// Takes part in the newest publish round, if this worker has not yet.
void check_publish() {
  pool& p = *g_pool;
  const std::uint64_t e = p.epoch.load(std::memory_order_acquire);
  if (e == t_seen_epoch) return;
  t_seen_epoch = e;
  t_local_boxes.clear();
  publish_own();
  p.w[static_cast<std::size_t>(t_worker)]->acked.store(e, std::memory_order_release);
}

// A pool worker looking for work handles the blocks it sent to its own PE (any worker's blocks
// of those mailboxes), in its cache; true if it handled any. Not the main flow beside a progress
// thread: handlers run on worker 0 there, one at a time, as they would without the thread.
bool help_locals() {
  if (t_main_flow) return false;
  bool any = false;
  for (std::size_t k = 0; k < t_local_boxes.size();) {
    mailbox_base* box = t_local_boxes[k];
    any = box->handle_locals() || any;
    if (box->staged.local_waiting()) {
      ++k;
    } else {
      t_local_boxes[k] = t_local_boxes.back();
      t_local_boxes.pop_back();
    }
  }
  return any;
}

task* pop_front_of(std::mutex& m, std::deque<task*>& q, std::atomic<std::size_t>& size) {
  if (size.load(std::memory_order_relaxed) == 0) return nullptr;
  const std::lock_guard lock(m);
  if (q.empty()) return nullptr;
  task* t = q.front();
  q.pop_front();
  size.store(q.size(), std::memory_order_relaxed);
  return t;
}

task* find_task() {
  pool& p = *g_pool;
  const auto me = static_cast<std::size_t>(t_worker);
  worker_state& mine = *p.w[me];
  // A pool worker takes handlers' tasks first: they hold buffers that arrived (a concurrent
  // mailbox's), and their mailbox takes in no more until they have run. Worker 0 runs them from
  // its progress engine, not from user code (nor does the main flow beside a progress thread).
  if (me != 0 && !t_main_flow)
    if (task* t = pop_front_of(p.hq_m, p.hq, p.hq_size)) return t;
  if (mine.size.load(std::memory_order_relaxed) > 0) {
    const std::lock_guard lock(mine.m);
    if (!mine.q.empty()) {
      task* t = mine.q.back();  // the newest: depth first, as it was spawned
      mine.q.pop_back();
      mine.size.store(mine.q.size(), std::memory_order_relaxed);
      return t;
    }
  }
  for (std::size_t k = 1; k < p.w.size(); ++k) {
    worker_state& v = *p.w[(me + k) % p.w.size()];
    if (task* t = pop_front_of(v.m, v.q, v.size)) return t;  // the oldest: the largest
  }
  return nullptr;
}

// Worker 0 (dedicated): a piece of a parallel loop of the main flow: the newest of its own deque,
// else the oldest of another worker's (the largest left); no other task.
task* main_flow_piece() {
  pool& p = *g_pool;
  for (std::size_t k = 0; k < p.w.size(); ++k) {
    worker_state& v = *p.w[k];
    if (v.size.load(std::memory_order_relaxed) == 0) continue;
    const std::lock_guard lock(v.m);
    if (v.q.empty()) continue;
    task*& end = k == 0 ? v.q.back() : v.q.front();
    if (!end->piece) continue;
    task* t = end;
    if (k == 0)
      v.q.pop_back();
    else
      v.q.pop_front();
    v.size.store(v.q.size(), std::memory_order_relaxed);
    return t;
  }
  return nullptr;
}

void run(task* t) {
  const bool from_handler = t->from_handler;
  finish_state* const scope = t->scope;
  try {
    const scoped_assign in_finish(t_finish, scope);
    const scoped_assign in_task(t_in_task, t_in_task + 1);
    const scoped_assign in_piece(t_main_piece, t->piece);
    if (t_worker == 0) {
      if (from_handler) {
        const handler_scope in_handler;
        t->fn();
      } else {
        t->fn();
      }
    } else {
      const worker_task_scope in_worker_task(from_handler);
      t->fn();
    }
  } catch (const std::exception& e) {
    MAILROOM_FAIL(
        "a task threw an exception on worker {}: {}. Tasks must not throw: what waits "
        "for them would wait forever",
        t_worker, e.what());
  } catch (...) {
    MAILROOM_FAIL(
        "a task threw an exception (not a std::exception) on worker {}. Tasks must not "
        "throw: what waits for them would wait forever",
        t_worker);
  }
  delete t;
  // What the task staged goes to worker 0 before the task counts as done: a finish (or a
  // handler's selector) that sees it done sees its sends too (release below, acquire there).
  if (t_worker > 0) publish_own();
  if (from_handler)
    g_pool->handler_work.fetch_sub(1, std::memory_order_release);
  else
    scope->pending.fetch_sub(1, std::memory_order_release);
}

void worker_main(int k) {
  t_worker = k;
  scheduler::sending_from = scheduler::k_from_worker_user;
  pool& p = *g_pool;
  int idle = 0;
  bool spinning = false;  // counted in p.looking
  const auto spin = [&](bool on) {
    if (on != spinning) p.looking.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
    spinning = on;
  };
  while (!p.stop.load(std::memory_order_acquire)) {
    check_publish();
    if (task* t = find_task()) {
      spin(false);
      run(t);
      idle = 0;
      continue;
    }
    if (!t_local_boxes.empty() && help_locals()) continue;
    // Nothing to do: what this worker staged goes to worker 0 now, not at the next round.
    if (idle == 0) publish_own();
    ++idle;
    // Spins a while (not when the node's threads outnumber its cores), yields a while, then
    // sleeps until work comes (spawn wakes it) or 200 us pass.
    const int spins = p.oversubscribed ? 0 : 2000;
    spin(idle < spins + 200);
    if (idle < spins) {
      cpu_pause();
    } else if (idle < spins + 200) {
      std::this_thread::yield();
    } else {
      std::unique_lock lock(p.sleep_m);
      p.sleepers.fetch_add(1, std::memory_order_relaxed);
      p.sleep_cv.wait_for(lock, std::chrono::microseconds(200));
      p.sleepers.fetch_sub(1, std::memory_order_relaxed);
      idle = spins;
    }
  }
  spin(false);
  publish_own();
}

// MAILROOM_PROGRESS=thread. The main flow's turn as worker 0: what it staged goes to worker 0
// first (its sends before the call stay before what the call does), then it holds the baton.
thread_local bool t_in_turn = false;
void enter_turn() {
  pool& p = *g_pool;
  t_local_boxes.clear();  // (worker 0 handles them; a selector may go in this turn)
  publish_own();
  p.want.fetch_add(1, std::memory_order_acq_rel);
  p.baton.lock();
  t_sender_from = scheduler::sending_from;
  t_worker = 0;
  scheduler::sending_from = scheduler::k_from_user;
  t_in_turn = true;
  // Into the aggregation buffers: the call sees the flow's sends where it would without a
  // progress thread (a flush() ships them).
  for (std::size_t i = 0; i < engine::live.size(); ++i) engine::live[i]->drain_staged();
}
}  // namespace

void end_turn() noexcept {
  pool& p = *g_pool;
  t_in_turn = false;
  scheduler::sending_from = t_sender_from;
  t_worker = p.main_slot;
  p.baton.unlock();
  p.want.fetch_sub(1, std::memory_order_release);
}

namespace {

// Polls of the progress thread that found nothing: it spins (not on a crowded node), then
// yields, then naps between polls. On the way to its naps it ships the partly filled buffers once
// (as a wait does after MAILROOM_IDLE_FLUSH idle polls): a PE that computes keeps nothing back
// for long. (Tried: naps doubling up to 80-320 us, which cost the computation less but left a
// bandwidth-bound exchange beside it 1.2-1.3x slower; and shipping every MAILROOM_IDLE_FLUSH
// idle polls, which sent more part-filled buffers for nothing.)
constexpr std::uint32_t k_progress_spins = 256, k_progress_yields = 64, k_progress_nap_us = 20;

// The progress thread: worker 0 whenever the main flow is not in a runtime call. It runs the
// progress engine (transport, staged sends, handlers, termination, completions), never a task
// of the program's. While the main flow has its turn, it sleeps on the baton (waking every few
// microseconds to look would take the core from the flow on a crowded node: a latency-bound
// exchange in the flow's waits ran 2-3x slower).
void progress_main() {
  t_progress_thread = true;
  t_worker = 0;
  scheduler::sending_from = scheduler::k_from_user;
  pool& p = *g_pool;
  const std::uint32_t spins = p.oversubscribed ? 0 : k_progress_spins;
  const std::uint32_t naps_from = spins + k_progress_yields;
  std::uint32_t idle = 0;
  bool shipped = false;  // the partly filled buffers, since the last poll that found work
  while (!p.stop_progress.load(std::memory_order_acquire)) {
    if (p.want.load(std::memory_order_acquire) > 0) {
      // (Given back at once once it has it: the flow may want the next turn.)
      const std::lock_guard sleep_through(p.baton);
      continue;
    }
    bool any = false;
    {
      const std::unique_lock turn(p.baton, std::try_to_lock);
      if (!turn.owns_lock()) continue;
      any = engine::progress();
      if (!any && !shipped && idle >= naps_from && current_config().idle_flush > 0) {
        engine::flush_idle();
        shipped = true;
      }
    }
    if (any) {
      idle = 0;
      shipped = false;
    } else if (++idle <= spins) {
      cpu_pause();
    } else if (idle <= naps_from) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(k_progress_nap_us));
      idle = naps_from + 1;
    }
  }
}

void wake_all() {
  pool& p = *g_pool;
  if (p.sleepers.load(std::memory_order_relaxed) > 0) {
    const std::lock_guard lock(p.sleep_m);
    p.sleep_cv.notify_all();
  }
}

}  // namespace

int workers() noexcept { return g_pool != nullptr ? g_pool->n : 1; }

bool threads_share_pe() noexcept {
  return g_pool != nullptr && (g_pool->n > 1 || g_pool->main_slot > 0);
}

bool take_turn() {
  pool* p = g_pool;
  if (p == nullptr || p->main_slot == 0 || t_worker != p->main_slot || t_in_turn || t_in_task > 0 ||
      t_handler_task)
    return false;
  enter_turn();
  return true;
}

void start_workers(const worker_plan& plan) {
  const int n = plan.workers;
  MAILROOM_CHECK(n >= 1 && n <= 1024, "MAILROOM_WORKERS={}: give 1 to 1024 workers per PE", n);
  g_pool = new pool;
  g_pool->n = n;
  g_pool->dedicated = plan.dedicated;
  g_pool->oversubscribed = plan.oversubscribed;
  // With a progress thread, the main flow has a slot of its own (its deque and its staging)
  // after the pool workers'.
  g_pool->main_slot = plan.progress_thread ? n : 0;
  for (int k = 0; k < n + (plan.progress_thread ? 1 : 0); ++k)
    g_pool->w.push_back(std::make_unique<worker_state>());
  t_worker = 0;
  scheduler::sending_from = scheduler::k_from_user;
  for (int k = 1; k < n; ++k) g_pool->threads.emplace_back(worker_main, k);
  if (plan.progress_thread) {
    t_main_flow = true;
    t_worker = g_pool->main_slot;
    scheduler::sending_from = scheduler::k_from_worker_user;
    g_pool->progress = std::thread(progress_main);
  }
}

void stop_workers() {
  if (g_pool == nullptr) return;
  join(g_pool->root, "the end of the runtime: tasks spawned outside any finish");
  if (g_pool->main_slot > 0) {
    // The main flow is worker 0 alone from now on.
    publish_own();
    g_pool->stop_progress.store(true, std::memory_order_release);
    g_pool->progress.join();
    t_main_flow = false;
    t_worker = 0;
    scheduler::sending_from = scheduler::k_from_user;
  }
  g_pool->stop.store(true, std::memory_order_release);
  {
    const std::lock_guard lock(g_pool->sleep_m);
    g_pool->sleep_cv.notify_all();
  }
  for (auto& t : g_pool->threads) t.join();
  delete g_pool;
  g_pool = nullptr;
  t_worker = -1;
}

bool in_handler_context() noexcept { return scheduler::in_handler() || t_handler_task; }

void publish_staged() {
  if (t_worker > 0 && g_pool != nullptr) publish_own();
}

namespace {
// Queues a task as a handler's: the handler queue, which termination waits for.
void spawn_handler_task(task* t) {
  pool& p = *g_pool;
  t->from_handler = true;
  p.handler_work.fetch_add(1, std::memory_order_relaxed);
  {
    const std::lock_guard lock(p.hq_m);
    p.hq.push_back(t);
    p.hq_size.store(p.hq.size(), std::memory_order_relaxed);
  }
  if (p.sleepers.load(std::memory_order_relaxed) > 0) p.sleep_cv.notify_one();
}
}  // namespace

void spawn(task* t) {
  scheduler::check_running("mailroom::async");
  MAILROOM_CHECK(t_worker >= 0,
                 "mailroom::async called from a thread that is not one of the "
                 "PE's workers");
  pool& p = *g_pool;
  if (scheduler::in_handler() || t_handler_task) return spawn_handler_task(t);
  t->scope = t_finish != nullptr ? t_finish : &p.root;
  t->scope->pending.fetch_add(1, std::memory_order_relaxed);
  {
    worker_state& w = *p.w[static_cast<std::size_t>(t_worker)];
    const std::lock_guard lock(w.m);
    w.q.push_back(t);
    w.size.store(w.q.size(), std::memory_order_relaxed);
  }
  if (p.sleepers.load(std::memory_order_relaxed) > 0) p.sleep_cv.notify_one();
}

bool run_one_task() {
  if (g_pool == nullptr || scheduler::in_handler()) return false;
  if (t_in_turn) {
    // The main flow in a wait of its turn (MAILROOM_PROGRESS=thread): it runs the task as a
    // sender, the progress thread taking in the messages meanwhile, however long it lasts.
    task* t = find_task();
    if (t == nullptr) return false;
    end_turn();
    run(t);
    enter_turn();
    return true;
  }
  // With pool workers, worker 0 keeps to the main flow and the communication
  // (MAILROOM_PROGRESS=dedicated): a long task on it would stop the PE taking in buffers, so the
  // pool workers run the tasks. It takes only the pieces of the main flow's own parallel loops,
  // as it would run the whole loop with one worker.
  task* t = t_worker == 0 && g_pool->n > 1 && g_pool->dedicated ? main_flow_piece() : find_task();
  if (t == nullptr) return false;
  run(t);
  return true;
}

bool run_handler_tasks() {
  pool& p = *g_pool;
  // With pool workers, one per poll: they take the rest, while worker 0 keeps taking in buffers
  // and moving their staged sends (all of them at once would leave it the only one handling).
  // None while a pool worker looks for work: it takes them, and worker 0 goes on with its own.
  if (p.n > 1 && p.looking.load(std::memory_order_relaxed) > 0) return false;
  std::size_t budget = p.n > 1 ? 1 : p.hq_size.load(std::memory_order_relaxed);
  bool any = false;
  for (; budget > 0; --budget) {
    task* t = pop_front_of(p.hq_m, p.hq, p.hq_size);
    if (t == nullptr) break;
    run(t);
    any = true;
  }
  return any;
}

void hold_handler_work(int delta) noexcept {
  g_pool->handler_work.fetch_add(delta,
                                 delta > 0 ? std::memory_order_relaxed : std::memory_order_release);
}

bool pool_looking() noexcept {
  return g_pool != nullptr && g_pool->looking.load(std::memory_order_relaxed) > 0;
}

bool handler_tasks_queued() noexcept {
  return g_pool != nullptr && g_pool->hq_size.load(std::memory_order_relaxed) > 0;
}

std::int64_t handler_work() noexcept {
  return g_pool != nullptr ? g_pool->handler_work.load(std::memory_order_acquire) : 0;
}

void complete_on_runtime_thread(callback fn) {
  pool& p = *g_pool;
  const std::lock_guard lock(p.done_m);
  p.completions.push_back(std::move(fn));
  p.completions_n.store(p.completions.size(), std::memory_order_release);
}

bool run_completions() {
  pool& p = *g_pool;
  if (p.completions_n.load(std::memory_order_acquire) == 0) return false;
  std::vector<callback> now;
  {
    const std::lock_guard lock(p.done_m);
    now.swap(p.completions);
    p.completions_n.store(0, std::memory_order_relaxed);
  }
  // As the progress engine's other completions: nothing collective may start from them.
  const bool outer = engine::completing;
  engine::completing = true;
  for (auto& fn : now) fn();
  engine::completing = outer;
  return true;
}

void publish_round(const char* what) {
  pool& p = *g_pool;
  if (p.n == 1) return;  // (no pool worker: with a progress thread, the main flow published)
  const std::uint64_t e = p.epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (t_worker > 0) check_publish();
  wake_all();
  stall_clock clock(what);
  backoff wait(p.oversubscribed);
  // (Not the main flow's slot: it publishes what it staged when it takes a turn, and a mailbox
  // goes only in one.)
  for (std::size_t k = 1; k < p.w.size(); ++k) {
    if (static_cast<int>(k) == p.main_slot) continue;
    while (p.w[k]->acked.load(std::memory_order_acquire) < e) {
      if (t_worker == 0) {
        engine::progress_waiting(what);
      } else {
        check_publish();
        wait.pause();
        clock.tick();
      }
    }
  }
}

void join(finish_state& fs, const char* what) {
  stall_clock clock(what);
  backoff wait(g_pool->oversubscribed);
  std::int64_t last = fs.pending.load(std::memory_order_acquire);
  for (std::int64_t left = last; left > 0; left = fs.pending.load(std::memory_order_acquire)) {
    if (t_worker == 0) {
      // The communication first: the pool workers' staged sends and the arrivals are worker 0's
      // alone, and a pool worker whose blocks wait for it stops sending. A task when there is
      // nothing else to do.
      const bool any = engine::progress_waiting(what);
      if ((!any && run_one_task()) || left != last) engine::note_activity();
    } else if (run_one_task() || help_locals() || left != last) {
      clock.reset();
      wait.reset();
    } else {
      check_publish();
      publish_own();
      wait.pause();
      clock.tick();
    }
    last = left;
  }
}

void help_until(bool (*ready)(const void*), const void* arg, const char* what) {
  stall_clock clock(what);
  backoff wait(g_pool->oversubscribed);
  while (!ready(arg)) {
    if (run_one_task() || help_locals()) {
      clock.reset();
      wait.reset();
      continue;
    }
    check_publish();
    publish_own();  // (what it waits for may answer what it staged)
    wait.pause();
    clock.tick();
  }
}

// ---- staging ----

staging::staging() : slots_(g_pool != nullptr ? g_pool->w.size() : 1) {}

staging::~staging() {
  // Every worker gives back its open block of this mailbox first (they send to it no more).
  if (touched_.load(std::memory_order_acquire) && g_pool != nullptr)
    publish_round("the end of a selector: the workers' staged sends");
  MAILROOM_CHECK(full_.empty() && draining_ == nullptr && local_full_.empty(),
                 "a mailbox was destroyed with sends of workers not yet delivered");
}

stage_block* staging::next_block(stage_slot& s, std::uint32_t bytes, bool local) {
  pool& p = *g_pool;
  stage_block*& slot = local ? s.local : s.current;
  stage_block* b = slot;
  if (b != nullptr && b->used + bytes <= stage_block::k_bytes) {
    // A block that has room, first written by a handler's task: termination now counts it.
    b->has_handler = true;
    p.handler_work.fetch_add(1, std::memory_order_relaxed);
    return b;
  }
  slot = nullptr;
  if (b != nullptr) publish(b, local);
  // Bounded: at most k_max_published blocks of this worker wait for worker 0. (Waiting, it takes
  // part in publish rounds, which publish its other open blocks.)
  // A handler's task never waits (as a handler on worker 0 never does: it spills): its sends are
  // bounded by the arrivals it handles, which its mailbox takes in no more of meanwhile.
  worker_state& w = *p.w[static_cast<std::size_t>(t_worker)];
  if (!t_handler_task && w.published.load(std::memory_order_acquire) > k_max_published) {
    stall_clock clock("a send (worker 0 has not yet taken in this worker's earlier sends)");
    backoff wait(p.oversubscribed);
    // (The main flow beside a progress thread runs no handler: it only waits.)
    const int looking = t_main_flow ? 0 : 1;
    p.looking.fetch_add(looking, std::memory_order_relaxed);
    while (w.published.load(std::memory_order_acquire) > k_max_published) {
      // Meanwhile it handles its blocks to this PE and runs handlers' tasks (neither waits);
      // each publishes what it staged when it ends, this slot's block too.
      if (help_locals()) {
        clock.reset();
        wait.reset();
        continue;
      }
      if (task* t = t_main_flow ? nullptr : pop_front_of(p.hq_m, p.hq, p.hq_size)) {
        run(t);
        clock.reset();
        wait.reset();
        continue;
      }
      check_publish();
      wait.pause();
      clock.tick();
    }
    p.looking.fetch_sub(looking, std::memory_order_relaxed);
  }
  if (slot != nullptr) publish(std::exchange(slot, nullptr), local);  // (a handler task's)
  if (!s.listed) {
    s.listed = true;
    t_open.push_back(this);
    touched_.store(true, std::memory_order_relaxed);
  }
  {
    const std::lock_guard lock(p.blocks_m);
    if (!p.free_blocks.empty()) {
      b = p.free_blocks.back();
      p.free_blocks.pop_back();
    } else {
      b = nullptr;
    }
  }
  if (b == nullptr) b = new stage_block;
  b->used = 0;
  b->owner = t_worker;
  b->has_handler = t_handler_task;
  if (t_handler_task) p.handler_work.fetch_add(1, std::memory_order_relaxed);
  slot = b;
  return b;
}

void staging::publish(stage_block* b, bool local) {
  g_pool->w[static_cast<std::size_t>(b->owner)]->published.fetch_add(1, std::memory_order_relaxed);
  if (local && std::find(t_local_boxes.begin(), t_local_boxes.end(), owner_) == t_local_boxes.end())
    t_local_boxes.push_back(owner_);
  const std::lock_guard lock(mutex_);
  if (local) {
    local_full_.push_back(b);
    published_local_.store(local_full_.size(), std::memory_order_release);
  } else {
    full_.push_back(b);
    published_.store(full_.size(), std::memory_order_release);
  }
}

void staging::publish_mine() {
  stage_slot& s = slots_[static_cast<std::size_t>(t_worker)];
  s.listed = false;
  for (const bool local : {false, true}) {
    stage_block*& slot = local ? s.local : s.current;
    stage_block* b = slot;
    slot = nullptr;
    if (b == nullptr) continue;
    if (b->used == 0)
      release_block(b);
    else
      publish(b, local);
  }
}

stage_block* staging::take_local() {
  if (published_local_.load(std::memory_order_acquire) == 0) return nullptr;
  const std::lock_guard lock(mutex_);
  if (local_full_.empty()) return nullptr;
  stage_block* b = local_full_.front();
  local_full_.erase(local_full_.begin());
  published_local_.store(local_full_.size(), std::memory_order_release);
  return b;
}

void staging::release_local(stage_block* b) {
  g_pool->w[static_cast<std::size_t>(b->owner)]->published.fetch_sub(1, std::memory_order_release);
  release_block(b);
}

stage_block* staging::to_drain(std::uint32_t*& at) {
  if (draining_ == nullptr) {
    if (published_.load(std::memory_order_acquire) == 0) return nullptr;
    const std::lock_guard lock(mutex_);
    if (full_.empty()) return nullptr;
    draining_ = full_.front();
    full_.erase(full_.begin());
    published_.store(full_.size(), std::memory_order_relaxed);
    drain_at_ = 0;
  }
  at = &drain_at_;
  return draining_;
}

void staging::drained() {
  stage_block* b = draining_;
  draining_ = nullptr;
  pool& p = *g_pool;
  p.w[static_cast<std::size_t>(b->owner)]->published.fetch_sub(1, std::memory_order_release);
  release_block(b);
}

void staging::release_block(stage_block* b) {
  if (g_pool == nullptr) {
    delete b;
    return;
  }
  if (b->has_handler) g_pool->handler_work.fetch_sub(1, std::memory_order_release);
  b->used = 0;
  b->has_handler = false;
  const std::lock_guard lock(g_pool->blocks_m);
  g_pool->free_blocks.push_back(b);
}

}  // namespace mailroom::detail
