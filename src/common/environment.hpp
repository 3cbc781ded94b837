// SPDX-License-Identifier: MIT
// Reading the MAILROOM_* variables without stopping at the first bad one: the runtime agrees
// across PEs on whether any PE found one, so that one PE reports it and every PE ends quietly
// (config::from_environment stops the job at once instead). Not installed.
#pragma once

#include "mailroom/config.hpp"

#include <string>

namespace mailroom::detail {
/// The configuration from the environment; `error` gets the first problem found (a malformed or
/// out-of-range value, an unknown MAILROOM_* name), empty if none.
config read_environment(std::string& error);
}  // namespace mailroom::detail
