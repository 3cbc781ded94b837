// The runtime object that every mailroom program creates first, and the free functions of the
// scheduler a program may call: this_pe, num_pes, yield, finish, barrier.
#pragma once

#include "mailroom/config.hpp"
#include "mailroom/detail/scheduler.hpp"
#include "mailroom/pe.hpp"

#include <utility>

namespace mailroom {

/// Starts mailroom on this PE: MPI (unless the program started it), the configuration from the
/// MAILROOM_* environment, the aggregation exchange, the symmetric heap and the lambda registry.
/// Collective: every PE constructs exactly one, before any other mailroom object, and destroys
/// it after all of them.
class runtime {
 public:
  runtime(int& argc, char**& argv);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  [[nodiscard]] const mailroom::config& config() const noexcept;
};

/// This PE.
[[nodiscard]] pe this_pe() noexcept;
/// The number of PEs in the job.
[[nodiscard]] int num_pes() noexcept;
/// The PE that sent the message whose handler is running (-1 outside handlers).
[[nodiscard]] inline pe sender() noexcept { return pe(detail::scheduler::current_source); }

/// Lets pending handlers run from user code (a no-op for handlers, when called from one).
void yield();
/// Waits until every PE arrives, running handlers meanwhile (not callable from a handler).
void barrier();
/// Seconds on a per-PE wall clock.
[[nodiscard]] double wtime() noexcept;

/// Runs `body`, then waits for every selector and actor constructed inside it to terminate.
template <class F>
void finish(F&& body) {
  detail::scheduler::check_running("mailroom::finish");
  detail::scheduler::finish_scopes.emplace_back();
  std::forward<F>(body)();
  // wait() may not remove scope entries (only destructors do), so iterate over a copy.
  auto started = detail::scheduler::finish_scopes.back();
  for (detail::selector_core* s : started) s->wait();
  detail::scheduler::finish_scopes.pop_back();
}

}  // namespace mailroom
