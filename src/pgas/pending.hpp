// A transport request as a pending operation of the scheduler: its future is ready once the
// request has completed (tested with every other request in flight, in one pass). Not installed.
#pragma once

#include "mailroom/detail/scheduler.hpp"
#include "mailroom/future.hpp"
#include "transport/transport.hpp"

#include <memory>
#include <string>

namespace mailroom::detail {

/// Hands `req` to the progress engine; the future is ready once it has completed. `what` (a
/// literal) and `detail` describe it in the watchdog's report.
future<void> track(std::unique_ptr<transport::request> req, const char* what, std::string detail);

}  // namespace mailroom::detail
