// SPDX-License-Identifier: MIT
// The workers of a PE and their tasks, as the public task API (mailroom/task.hpp) and the sends
// of selectors see them: the thread-local context of a worker, the tasks, the scopes that finish
// waits for, and the blocks in which pool workers stage their sends. Not API.
//
// Worker 0 is the PE's own thread (the one that constructed the runtime). It alone runs the
// runtime: MPI, the progress engine, the handlers of arriving buffers, continuations,
// collectives. Workers 1..N-1 (MAILROOM_WORKERS=N) run tasks, and the handlers of what tasks
// send to their own PE and of concurrent mailboxes; their sends go into staging blocks, which
// worker 0 moves into the aggregation buffers whenever it polls (docs/design.md, workers).
#pragma once

#include "mailroom/detail/callback.hpp"
#include "mailroom/detail/small_pool.hpp"
#include "mailroom/detail/thread.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace mailroom::detail {

class mailbox_base;

/// What a finish waits for: the tasks spawned in it (transitively) and not yet completed.
struct finish_state {
  std::atomic<std::int64_t> pending{0};
};

/// A task: the closure and the scope that waits for it (for a task spawned by a handler, the
/// PE's handler scope, which termination waits for).
struct task {
  callback fn;
  finish_state* scope = nullptr;
  bool from_handler = false;
  /// A piece of a parallel loop that the main flow called (run_chunks from worker 0's main flow
  /// or from such a piece): worker 0 runs these too, where it runs no other task
  /// (MAILROOM_PROGRESS=dedicated), as it would run the whole loop with one worker.
  bool piece = false;
  static void* operator new(std::size_t n) { return small_pool::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { small_pool::deallocate(p, n); }
};

/// The scope that tasks spawned now belong to: the innermost finish on this thread, or the scope
/// of the task it runs (null: the PE's root scope).
inline constinit thread_local finish_state* t_finish = nullptr;
/// This thread runs a task that a handler spawned (it must not block, as a handler).
inline constinit thread_local bool t_handler_task = false;
/// Tasks this thread is running now (nested when a wait runs one).
inline constinit thread_local int t_in_task = 0;
/// This thread runs a piece of a parallel loop of the main flow now (task::piece).
inline constinit thread_local bool t_main_piece = false;
/// This thread is the main flow beside a progress thread (MAILROOM_PROGRESS=thread): worker 0
/// to the program (this_worker()), whichever slot it sends from.
inline constinit thread_local bool t_main_flow = false;
/// Whether a parallel loop started here belongs to the main flow (its pieces are task::piece).
[[nodiscard]] inline bool in_main_flow() noexcept {
  return (t_worker == 0 && t_in_task == 0) || t_main_piece;
}

/// MAILROOM_WORKERS of the running runtime (1 before it exists).
[[nodiscard]] int workers() noexcept;
/// Whether other threads than this PE's own touch its state: pool workers, or a progress thread
/// (MAILROOM_PROGRESS=thread). Then sends from user code may be staged and handlers run beside
/// the main flow.
[[nodiscard]] bool threads_share_pe() noexcept;

/// MAILROOM_PROGRESS=thread: the main flow takes a turn as worker 0 (the progress thread
/// stands by meanwhile) if this thread is the main flow outside one, in user code (no task, no
/// handler); true if it took one. Not from pool workers: the checks that follow the call speak.
[[nodiscard]] bool take_turn();
/// Ends the turn take_turn took: the main flow is a sender again, the progress thread resumes.
void end_turn() noexcept;
/// The tag of a runtime_turn taken later (take()).
struct deferred_turn_t {};
inline constexpr deferred_turn_t deferred_turn{};

/// A runtime call of the main flow (a selector's construction, done(), a wait, a collective, a
/// one-sided operation): under MAILROOM_PROGRESS=thread, a turn as worker 0 while it lives.
/// Nothing on worker 0 (one comparison). On a pool worker `what`, if given, names the call in the
/// error that stops the job (only worker 0 makes runtime calls).
class runtime_turn {
 public:
  explicit runtime_turn(const char* what = nullptr) {
    if (t_worker > 0) [[unlikely]]
      enter(what);
  }
  /// Not yet: take() takes it (a member declared first, so that the other members of its object
  /// go in the turn of its destructor).
  explicit runtime_turn(deferred_turn_t) noexcept {}
  void take() {
    if (t_worker > 0 && !taken_) [[unlikely]]
      enter(nullptr);
  }
  ~runtime_turn() {
    if (taken_) end_turn();
  }
  runtime_turn(const runtime_turn&) = delete;
  runtime_turn& operator=(const runtime_turn&) = delete;

 private:
  void enter(const char* what) {
    taken_ = take_turn();
    if (!taken_ && what != nullptr) check_runtime_thread(what);
  }
  bool taken_ = false;
};
/// Queues a task: on this worker's deque, or (from a handler) the PE's handler queue, which
/// worker 0's progress engine also runs. The task's scope counts it from now.
void spawn(task* t);
/// Counts (delta 1) or uncounts (-1) handler work that is in no task: termination waits for it.
void hold_handler_work(int delta) noexcept;
/// Whether a pool worker is spinning for work (idle, or waiting for its sends to be taken in).
[[nodiscard]] bool pool_looking() noexcept;
/// Runs tasks (and on worker 0 the progress engine) until fs has no task left; each task has
/// published what it staged when it ended (docs/design.md, workers). `what` names the wait.
void join(finish_state& fs, const char* what);
/// Runs tasks (and on worker 0 the progress engine) until ready(arg): how a pool worker waits
/// for a future.
void help_until(bool (*ready)(const void*), const void* arg, const char* what);
/// Runs one task if one is queued (worker 0: from user code, never from a handler); true if it
/// ran one.
bool run_one_task();
/// Worker 0: hands the completion of a task's future (run by a pool worker) to the progress
/// engine, which runs it (and the future's continuations) on worker 0.
void complete_on_runtime_thread(callback fn);
/// On a pool worker: hands the blocks it has staged to worker 0 now (a task does when it ends).
void publish_staged();
/// A handler runs here (or a task a handler spawned): nothing may wait.
[[nodiscard]] bool in_handler_context() noexcept;

/// The bytes between two fields that different threads write keep them off a shared cache line.
inline constexpr std::size_t k_cache_line = 64;

/// A block of sends staged by a pool worker for one mailbox: entries [dest][message] of a typed
/// mailbox, [header][closure] of a lambda mailbox (see the mailboxes' drain()).
struct stage_block {
  static constexpr std::size_t k_bytes = 16384 - 64;
  std::uint32_t used = 0;
  int owner = 0;             ///< the worker that filled it
  bool has_handler = false;  ///< holds sends of a handler's task (counted by handler_work)
  alignas(16) std::byte data[k_bytes];
};

/// One worker's open blocks for one mailbox: of sends to other PEs, and of sends to its own PE
/// (handled straight from the block). Only its worker touches them; others reach them through a
/// publish round (publish_all).
struct alignas(64) stage_slot {
  stage_block* current = nullptr;
  stage_block* local = nullptr;
  /// The open run of same-type closures in the local block of a lambda mailbox: its block, the
  /// offset of its header and its type's function (see Sel::stage_lambda).
  stage_block* run_block = nullptr;
  std::uint32_t run_at = 0;
  const void* run_fn = nullptr;
  bool listed = false;  ///< in its worker's list of open slots (until it next publishes them)
};

/// What a mailbox keeps of staged sends: a slot per worker, the blocks published, and the block
/// worker 0 is moving into the aggregation buffers.
class staging {
 public:
  staging();
  ~staging();
  staging(const staging&) = delete;
  /// The mailbox whose sends it stages (local blocks are handled by it).
  void set_owner(mailbox_base* box) noexcept { owner_ = box; }
  staging& operator=(const staging&) = delete;

  /// Room for `bytes` of one entry in this worker's block (a full block is published first);
  /// may wait for worker 0 to drain this worker's earlier blocks.
  [[nodiscard]] std::byte* room(std::uint32_t bytes) { return room_in(bytes, false); }
  /// This worker's slot (a pool worker's).
  [[nodiscard]] stage_slot& mine() noexcept { return slots_[static_cast<std::size_t>(t_worker)]; }
  /// Room for `bytes` of one entry for this PE itself in this worker's local block, as room().
  [[nodiscard]] std::byte* room_local(std::uint32_t bytes) { return room_in(bytes, true); }
  /// Whether blocks wait to be drained or handled (worker 0, cheap).
  [[nodiscard]] bool waiting() const noexcept {
    return published_.load(std::memory_order_relaxed) > 0 || draining_ != nullptr ||
           local_waiting();
  }
  /// Whether local blocks wait to be handled.
  [[nodiscard]] bool local_waiting() const noexcept {
    return published_local_.load(std::memory_order_acquire) > 0;
  }
  /// Worker 0: the oldest local block not yet handled (null: none). Give it back with
  /// release_local once handled.
  stage_block* take_local();
  /// A local block is handled (any worker): gives it back.
  static void release_local(stage_block* b);
  /// Worker 0: the next block to drain and where its undrained entries begin (null: none).
  stage_block* to_drain(std::uint32_t*& at);
  /// Worker 0: the block to_drain gave is drained: gives it back.
  void drained();
  /// Publishes this worker's open block (an empty one goes back to the pool).
  void publish_mine();

 private:
  [[nodiscard]] std::byte* room_in(std::uint32_t bytes, bool local) {
    stage_slot& s = slots_[static_cast<std::size_t>(t_worker)];
    stage_block* b = local ? s.local : s.current;
    if (b == nullptr || b->used + bytes > stage_block::k_bytes ||
        (t_handler_task && !b->has_handler))
      b = next_block(s, bytes, local);
    std::byte* p = b->data + b->used;
    b->used += bytes;
    return p;
  }
  stage_block* next_block(stage_slot& s, std::uint32_t bytes, bool local);
  void publish(stage_block* b, bool local);
  static void release_block(stage_block* b);
  std::vector<stage_slot> slots_;  // (read per send by the pool workers: see mailbox_base)
  std::byte apart_from_slots_[k_cache_line] = {};  // what follows is written per block
  std::mutex mutex_;
  std::vector<stage_block*> full_;  // published, in order
  std::atomic<std::size_t> published_{0};
  std::vector<stage_block*> local_full_;  // local blocks published, in order
  std::atomic<std::size_t> published_local_{0};
  stage_block* draining_ = nullptr;  // worker 0's
  std::uint32_t drain_at_ = 0;
  std::atomic<bool> touched_{false};  // a worker has had a block of it
  mailbox_base* owner_ = nullptr;
};

/// Sends of handlers' tasks not yet in the aggregation buffers, plus handler tasks not yet done:
/// no component terminates on this PE while it is above zero.
[[nodiscard]] std::int64_t handler_work() noexcept;

}  // namespace mailroom::detail
