// SPDX-License-Identifier: MIT
// A transport request as a pending operation of the scheduler: its future is ready once the
// request has completed (tested with every other request in flight, in one pass). Not installed.
#pragma once

#include "mailroom/detail/scheduler.hpp"
#include "mailroom/future.hpp"
#include "transport/transport.hpp"

#include <memory>
#include <string>

namespace mailroom::detail {

/// What the watchdog's report says of an operation in flight: `what`, then `detail` formatted
/// with a and b (say "of {} bytes from PE {}"); both literals, formatted only for a report (a
/// collective or a transfer may start a million times a second).
struct op_label {
  const char* what;
  const char* detail;
  std::uint64_t a = 0, b = 0;
  /// MAILROOM_TRACE: when it started (trace::now()), or negative if it is not traced.
  double traced_from = -1;
};

/// MAILROOM_TRACE: records the operation `label` names as having run from label.traced_from
/// until now.
void trace_operation(const op_label& label);

/// Hands `req` to the progress engine; the future is ready once it has completed.
future<void> track(std::unique_ptr<transport::request> req, const op_label& label);

}  // namespace mailroom::detail
