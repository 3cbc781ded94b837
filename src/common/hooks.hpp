// SPDX-License-Identifier: MIT
// Internal glue between the common layer and the transport: who to call to abort the job, and
// which rank to print. Not installed.
#pragma once

namespace mailroom::detail {
using abort_hook = void (*)(int code);
void set_error_rank(int rank) noexcept;
void set_abort_hook(abort_hook hook) noexcept;
}  // namespace mailroom::detail
