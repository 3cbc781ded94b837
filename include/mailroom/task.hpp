// SPDX-License-Identifier: MIT
// Tasks inside a PE: async, finish and parallel loops over the PE's workers (MAILROOM_WORKERS).
//
// Worker 0 is the PE's own thread: it runs the program's main flow, the communication (the
// progress engine, MPI) and the handlers of arriving buffers; with pool workers it runs no task
// but the pieces of the main flow's parallel loops (MAILROOM_PROGRESS=dedicated, the default), so
// that a long task never stops the PE's communication.
// Workers 1..N-1 run tasks, and handlers too: any worker handles what tasks send to their own PE
// (one handler at a time per mailbox), and a mailbox built with `concurrent` has its arriving
// buffers handled as tasks, on several workers at once. From a task, on any worker, a program
// may send messages to any selector's mailboxes, spawn tasks, open a nested finish and wait for
// futures; the rest of the runtime (constructing selectors, done(), collectives, barriers,
// continuations) is worker 0's, from the main flow. With one worker (the default) tasks run on
// the PE's thread when it waits, and a program that spawns none runs exactly as without them.
#pragma once

#include "mailroom/detail/send_context.hpp"
#include "mailroom/detail/tasks.hpp"
#include "mailroom/future.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

namespace mailroom {

/// The workers of this PE (MAILROOM_WORKERS).
[[nodiscard]] inline int num_workers() noexcept { return detail::workers(); }
/// The worker that runs this code: 0 for the PE's own thread, 1..num_workers()-1 for the others.
/// (The progress thread, MAILROOM_PROGRESS=thread, is worker 0 too: it runs worker 0's handlers.)
[[nodiscard]] inline int this_worker() noexcept {
  return detail::t_main_flow ? 0 : detail::t_worker;
}

namespace detail {
template <class F>
void spawn_callable(F&& f, bool piece = false) {
  auto* t = new task;
  t->fn = callback(std::forward<F>(f));
  t->piece = piece;
  spawn(t);
}
// Sets a task future's value: at once on worker 0 (its continuations run here), else handed to
// worker 0, where futures' continuations run.
template <class R>
void set_task_value(const std::shared_ptr<future_state<R>>& state) {
  if (t_worker <= 0) {
    state->set();
  } else {
    publish_staged();  // what the task sent is in worker 0's hands before its value is
    complete_on_runtime_thread([state] { state->set(); });
  }
}
template <class R, class V>
void set_task_value(const std::shared_ptr<future_state<R>>& state, V&& v) {
  if (t_worker <= 0) {
    state->set(std::forward<V>(v));
  } else {
    publish_staged();  // what the task sent is in worker 0's hands before its value is
    complete_on_runtime_thread(
        [state, value = std::forward<V>(v)]() mutable { state->set(std::move(value)); });
  }
}
// Runs (*f)(lo, hi) on pieces of [lo, hi): halves the range until it is at most `grain`,
// spawning the upper halves (so that idle workers steal large pieces first).
// f: a pointer to the callable (raw, or shared by the tasks).
template <class I, class P>
void run_chunks(I lo, I hi, I grain, P f) {
  while (hi - lo > grain) {
    const I mid = lo + (hi - lo) / 2;
    spawn_callable([mid, hi, grain, f] { run_chunks(mid, hi, grain, f); }, in_main_flow());
    hi = mid;
  }
  (*f)(lo, hi);
}
// A piece of a parallel_for: f(i) for every i of it (f: a pointer to the loop's body).
template <class I, class P>
struct each_index {
  P f;
  void operator()(I lo, I hi) const {
    for (I i = lo; i < hi; ++i) (*f)(i);
  }
};
// Calls f(lo, hi) on a local copy when f is small and trivially copyable: what it captures can
// then stay in registers across the piece's loop, where through f's address it is reloaded
// after every byte a send stores. Not inlined: it is then the one call of f's operator() in
// the program (both of parallel_for_chunks' paths come here), which the compiler inlines here
// as a function called once, so that the copy's address is not taken. (One call per piece.)
template <class F, class I>
[[gnu::noinline]] void call_on_copy(F& f, I lo, I hi) {
  if constexpr (std::is_trivially_copyable_v<F> && std::is_copy_constructible_v<F> &&
                sizeof(F) <= 256) {
    F body = f;
    body(lo, hi);
  } else {
    f(lo, hi);
  }
}
// parallel_for_chunks' pieces on the pool (f: a pointer to the loop's body).
template <class I, class P>
struct each_piece {
  P f;
  void operator()(I lo, I hi) const { call_on_copy(*f, lo, hi); }
};
template <class I>
I default_grain(I n) {
  // Eight pieces per worker: enough for stealing to even out uneven iterations.
  const I pieces = static_cast<I>(8 * workers());
  return std::max<I>(I{1}, n / pieces);
}
}  // namespace detail

/// Runs f() as a task, on any worker, and returns a future of its result (its value is set on
/// worker 0, where the future's continuations run). The task belongs to the innermost finish
/// around the spawning code (or around the task that spawns it); from a handler, to the handler
/// (its selector does not terminate before the task has run, and what the task sends is as if
/// the handler sent it: the task must not block). f must not throw.
template <class F>
auto async(F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  auto state = detail::new_state<R>();
  detail::spawn_callable([state, g = std::forward<F>(f)]() mutable {
    if constexpr (std::is_void_v<R>) {
      g();
      detail::set_task_value(state);
    } else {
      detail::set_task_value(state, g());
    }
  });
  return detail::future_of(std::move(state));
}

/// Runs f() as a task, as async does, without a future (cheaper: no allocation beyond the task).
template <class F>
void spawn(F&& f) {
  detail::spawn_callable(std::forward<F>(f));
}

/// Runs `body`, then waits for every task spawned inside it (and by those tasks, transitively)
/// and, on worker 0, for every selector and actor constructed inside it to terminate. While it
/// waits, the thread runs tasks (worker 0: the progress engine, and tasks only with one worker,
/// MAILROOM_PROGRESS=shared, or the pieces of its own parallel loops). Everything the tasks sent
/// is then in the runtime's hands: done() on the mailboxes they sent to may follow.
template <class F>
void finish(F&& body, source_location loc = source_location::current()) {
  const detail::call_site here(loc);
  detail::send_context::check_running("mailroom::finish");
  MAILROOM_CHECK(!detail::in_handler_context(),
                 "mailroom::finish called from a handler (or a task a handler spawned): handlers "
                 "never wait; spawn the tasks with mailroom::spawn, and the selector does not "
                 "terminate before they have run");
  detail::finish_state scope;
  detail::finish_state* const outer = detail::t_finish;
  detail::begin_finish_scope();
  detail::t_finish = &scope;
  try {
    std::forward<F>(body)();
  } catch (...) {
    // The tasks refer to this scope: wait for them before it goes.
    detail::t_finish = outer;
    detail::join(scope, "mailroom::finish (unwinding): its tasks");
    detail::end_finish_scope(false);
    throw;
  }
  detail::t_finish = outer;
  detail::join(scope, "mailroom::finish: its tasks");
  detail::end_finish_scope(true);
}

/// Calls f(i) for every i in [begin, end), spread over the workers in pieces of `grain`
/// iterations (0: about eight pieces per worker), and returns once all have run (and the tasks
/// they spawned). f is called concurrently from several threads: it must be safe to. With one
/// worker, a plain loop.
template <class I, class F>
  requires std::is_integral_v<I>
void parallel_for(I begin, I end, F&& f, I grain = 0) {
  if (end <= begin) return;
  if (detail::workers() == 1 || detail::in_handler_context()) {  // (a handler never waits)
    // On a local copy, as the handlers' batch loops do: what it captures can stay in registers
    // across the loop, where the original (whose address the pool's path takes) is reloaded
    // after every byte a send stores. (The hottest loops take parallel_for_chunks.)
    if constexpr (std::is_trivially_copyable_v<std::decay_t<F>> && sizeof(F) <= 256) {
      std::decay_t<F> body = f;
      for (I i = begin; i < end; ++i) body(i);
    } else {
      for (I i = begin; i < end; ++i) f(i);
    }
    return;
  }
  if (grain <= 0) grain = detail::default_grain<I>(end - begin);
  const detail::each_index<I, std::remove_reference_t<F>*> each{&f};
  const auto* pieces = &each;
  finish([&] { detail::run_chunks(begin, end, grain, pieces); });
}

/// Calls f(lo, hi) on pieces [lo, hi) that cover [begin, end), spread over the workers as
/// parallel_for spreads its iterations (pieces of at most `grain`; 0: about eight per worker),
/// and returns once all have run. With one worker, f(begin, end) once: the loop over a piece is
/// the caller's own, compiled as if there were no workers (the form for the hottest loops). A
/// small trivially copyable f is called on a copy (per piece), so that what it captures stays in
/// registers: what it changes in its own captures is not kept.
template <class I, class F>
  requires std::is_integral_v<I> && std::is_invocable_v<F&, I, I>
void parallel_for_chunks(I begin, I end, F&& f, I grain = 0) {
  if (end <= begin) return;
  if (detail::workers() == 1 || detail::in_handler_context()) {  // (a handler never waits)
    detail::call_on_copy(f, begin, end);
    return;
  }
  if (grain <= 0) grain = detail::default_grain<I>(end - begin);
  const detail::each_piece<I, std::remove_reference_t<F>*> piece{&f};
  const auto* pieces = &piece;
  finish([&] { detail::run_chunks(begin, end, grain, pieces); });
}

/// Spawns f(i) for every i in [begin, end) as tasks of `grain` iterations (0: about eight per
/// worker) and returns at once: the enclosing finish waits for them. f is copied once and shared
/// by the tasks.
template <class I, class F>
  requires std::is_integral_v<I>
void forasync(I begin, I end, F&& f, I grain = 0) {
  if (end <= begin) return;
  if (grain <= 0) grain = detail::default_grain<I>(end - begin);
  using body = std::decay_t<F>;
  auto each = std::make_shared<detail::each_index<I, std::shared_ptr<body>>>(
      detail::each_index<I, std::shared_ptr<body>>{std::make_shared<body>(std::forward<F>(f))});
  spawn([each, begin, end, grain] { detail::run_chunks(begin, end, grain, each); });
}

}  // namespace mailroom
