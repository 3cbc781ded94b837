// SPDX-License-Identifier: MIT
// The calling thread's handler context, set for a scope: where its sends come from, whether it
// runs a handler's task, whether its pushes may spill. Each flag is restored when the scope ends,
// however it ends, so no path can leave a thread believing it is still inside a handler. Not
// installed.
#pragma once

#include "mailroom/detail/scheduler.hpp"

#include "common/guard.hpp"

namespace mailroom::detail {

/// While it lives, worker 0 runs handlers: its sends come from a handler and its pushes may
/// spill. At the end the outer context is back and no message is being handled.
class handler_scope {
 public:
  handler_scope() noexcept = default;
  ~handler_scope() { scheduler::current_source = -1; }
  handler_scope(const handler_scope&) = delete;
  handler_scope& operator=(const handler_scope&) = delete;

 private:
  scoped_assign<std::uint8_t> from_{scheduler::sending_from, scheduler::k_from_handler};
  scoped_assign<bool> spill_{g_may_spill, true};
};

/// While it lives, a pool worker runs a task: one a handler spawned (`from_handler`: its sends
/// come from a handler, and it may not wait) or one of the program's.
class worker_task_scope {
 public:
  explicit worker_task_scope(bool from_handler) noexcept
      : task_(t_handler_task, from_handler),
        from_(scheduler::sending_from,
              from_handler ? scheduler::k_from_worker_handler : scheduler::k_from_worker_user) {}

 private:
  scoped_assign<bool> task_;
  scoped_assign<std::uint8_t> from_;
};

}  // namespace mailroom::detail
