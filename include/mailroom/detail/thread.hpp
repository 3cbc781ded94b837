// SPDX-License-Identifier: MIT
// Which thread of its PE the caller is: worker 0 (the PE's own thread, the only one that runs
// the runtime) or a pool worker. Every layer asks (a trace names the worker, a conveyor is
// constructed on worker 0 only); the runtime's workers set it. Not API.
#pragma once

namespace mailroom::detail {

/// This thread's worker number: 0 for the PE's own thread, 1..N-1 for the pool's, -1 for a
/// thread that is neither (or before the runtime exists).
inline constinit thread_local int t_worker = -1;

/// Stops the job when `what` is called on a pool worker: only worker 0 runs the runtime.
void check_runtime_thread(const char* what);

}  // namespace mailroom::detail
