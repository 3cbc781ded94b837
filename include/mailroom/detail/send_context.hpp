// SPDX-License-Identifier: MIT
// The calling thread's place in the runtime, as inline code reads it: where its sends come from
// (user code or a handler, worker 0 or a pool worker), the PE whose message it handles, and the
// check that a runtime runs. Not API.
#pragma once

#include "mailroom/error.hpp"

#include <cstdint>
#include <string_view>

namespace mailroom::detail {

struct send_context {
  /// Where a send comes from now, one bit: on worker 0 k_from_user, or k_from_handler while a
  /// handler runs; on a pool worker k_from_worker_user, or k_from_worker_handler in a task that
  /// a handler spawned (the same bits shifted by 2). A send is pushed at once if its mailbox
  /// accepts that bit: one test, whatever the context; pool workers' sends, which no mailbox
  /// accepts this way, take the slow path, which stages them.
  static constexpr std::uint8_t k_from_user = 1, k_from_handler = 2;
  static constexpr std::uint8_t k_from_worker_user = 4, k_from_worker_handler = 8;
  static constinit inline thread_local std::uint8_t sending_from = k_from_user;
  /// A handler (or a handler's task) is running: no nested progress of handlers, no blocking.
  static bool in_handler() noexcept {
    return (sending_from & (k_from_handler | k_from_worker_handler)) != 0;
  }
  /// The PE whose message is being handled (per thread: handlers run on pool workers too).
  static constinit inline thread_local int current_source = -1;
  /// mailroom::progress(): calls left before the next one looks at the clock.
  static constinit inline thread_local std::int32_t progress_countdown = 1;
  /// Stops the job, naming `call`, unless a runtime runs and this is its thread (or a worker).
  static void check_running(std::string_view call);
  /// The same, naming the caller's line (`where`) if it fails.
  static void check_running(std::string_view call, source_location where);
};

/// mailroom::progress()'s slow path: looks at the clock, polls when the time has come.
void progress_poll(source_location where);

/// finish(): opens a scope on the runtime's thread, whose selectors and actors the matching
/// end_finish_scope waits for (`wait`: false when the body threw) before it closes.
void begin_finish_scope();
void end_finish_scope(bool wait);

}  // namespace mailroom::detail
