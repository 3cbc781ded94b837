// SPDX-License-Identifier: MIT
// The per-PE progress engine behind the actor API: the live selectors, the operations in flight,
// the finish scopes, the idle flush and the watchdog. Worker 0's (the PE's own thread), which
// runs it and the handlers of arriving buffers (pool workers run those of local blocks and
// concurrent mailboxes: see mailbox_base::handling). What inline code reads of it is
// mailroom/detail/scheduler.hpp's `scheduler`, its base. Not installed.
#pragma once

#include "mailroom/detail/scheduler.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace mailroom::transport {
class group;
}

namespace mailroom::detail {

/// The team's group of the transport (for the termination of cycles among its members).
[[nodiscard]] transport::group& group_of(const team& t);

/// This thread is the PE's progress thread (MAILROOM_PROGRESS=thread): its idle polls are no
/// wait of the program's, so the watchdog does not count them.
inline constinit thread_local bool t_progress_thread = false;

struct engine : scheduler {
  /// Worker 0 drains pool workers' staged sends (MAILROOM_WORKERS > 1).
  static bool staging_in_use;
  static std::vector<selector_core*> live;  ///< by construction order
  static std::uint32_t next_selector_id;
  /// Per finish() open on worker 0, the selectors constructed in it (begin_finish_scope).
  static std::vector<std::vector<selector_core*>> finish_scopes;
  /// Mailboxes of live selectors with a priority other than 0: while there are any, each poll
  /// handles the arrivals of all live selectors' mailboxes in descending priority.
  static int prioritized;
  /// In flight, tested by every progress() outside handlers; in the order they started.
  static std::vector<std::shared_ptr<pending_op>> pending;
  /// Tests the pending operations and completes those that are done; true if any was.
  static bool poll_pending();
  /// The progress engine is completing operations (their continuations run): a moment that
  /// differs from PE to PE, so nothing collective may start (a collective, a selector).
  static bool completing;
  /// Stops the job when a collective call (`what`) comes from such a continuation.
  static void check_not_completing(const char* what);

  /// Tests the transport, runs pending handlers (unless called from a handler) and advances
  /// termination. Returns true if anything happened.
  static bool progress();
  /// One poll of a wait (wait(), yield(), barrier(), quiesce(), a collective): progress(), and
  /// after MAILROOM_IDLE_FLUSH polls in a row that found nothing to do, ships every partly filled
  /// buffer of the live selectors whose destination has a credit, so that a PE that waits (for a
  /// reply, say) never keeps messages back that another PE needs. (Sends blocked on credits poll
  /// with progress_blocked.) `what` names the wait for the watchdog.
  static bool progress_waiting(const char* what);
  static constexpr std::uint64_t k_blocked_flush = 16;
  /// MAILROOM_WATCHDOG: called when progress() did nothing; stops the job with a report of every
  /// live selector once nothing has happened for the configured time.
  static void watch_idle();
  /// Ships the partly filled buffers of every live selector that have a credit.
  static void flush_idle();
  /// Something other than progress() moved (a task ran, a finish's count went down): the
  /// watchdog's clock and the idle count start again.
  static void note_activity() noexcept {
    last_activity = -1;
    idle_polls = 0;
  }
  static double last_activity;
  static std::uint64_t idle_polls;  ///< progress() calls in a row that found nothing to do
  static const char* waiting_in;    ///< the wait this PE is in now (null: none)
};

}  // namespace mailroom::detail
