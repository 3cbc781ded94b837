// SPDX-License-Identifier: MIT
// What the runtime calls of the workers (src/runtime/workers.cpp); the rest is in
// mailroom/detail/tasks.hpp.
#pragma once

#include "mailroom/detail/tasks.hpp"

namespace mailroom::detail {

/// How the workers of a PE run (docs/design.md, "Progress while computing").
struct worker_plan {
  int workers = 1;  ///< this thread is worker 0, workers - 1 threads more
  /// Worker 0 runs no task while pool workers exist (MAILROOM_PROGRESS=dedicated).
  bool dedicated = true;
  /// The node's threads outnumber the cores they may run on: waits yield at once, not spin.
  bool oversubscribed = false;
  /// A progress thread runs worker 0's part between the main flow's runtime calls
  /// (MAILROOM_PROGRESS=thread); the main flow sends as a pool worker does outside them.
  bool progress_thread = false;
};
/// Starts the workers.
void start_workers(const worker_plan& plan);
/// Runs the tasks spawned outside any finish, then stops the threads: this thread is worker 0
/// alone from then on.
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
