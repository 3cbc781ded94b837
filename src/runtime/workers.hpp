// SPDX-License-Identifier: MIT
// What the runtime calls of the workers (src/runtime/workers.cpp); the rest is in
// mailroom/detail/tasks.hpp.
#pragma once

#include "mailroom/detail/tasks.hpp"

namespace mailroom::detail {

/// Starts n workers: this thread is worker 0, n - 1 threads more.
void start_workers(int n);
/// Runs the tasks spawned outside any finish, then stops the threads.
void stop_workers();
/// Worker 0's progress engine: runs the handlers' tasks queued now; true if it ran any.
bool run_handler_tasks();
/// Whether handlers' tasks wait to run (cheap).
bool handler_tasks_queued() noexcept;
/// Worker 0: runs the completions of task futures that pool workers handed over.
bool run_completions();
/// Every pool worker publishes the blocks it has open (and this thread waits until they have).
void publish_round(const char* what);

}  // namespace mailroom::detail
