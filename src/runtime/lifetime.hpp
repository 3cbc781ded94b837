// SPDX-License-Identifier: MIT
// The runtime's lifetime as the layers above it see it: whether it exists, what to complete at
// each barrier and what to stop when it ends. A layer above (the symmetric heap) starts on first
// use and registers here, so the runtime never calls up into it. Not installed.
#pragma once

namespace mailroom::detail {

/// Whether mailroom::runtime exists on this PE.
[[nodiscard]] bool runtime_exists() noexcept;
/// Calls `stop` when the runtime ends, after the exchange has stopped (the latest registered
/// first). Registrations end with the runtime.
void at_runtime_stop(void (*stop)() noexcept);
/// Calls `complete` at the start of every barrier() (the symmetric heap's puts, to be visible
/// after it), until the runtime ends.
void at_barrier(void (*complete)());
/// Calls what at_barrier registered (every barrier does: the job's and a team's, blocking or not).
void run_at_barrier();

}  // namespace mailroom::detail
