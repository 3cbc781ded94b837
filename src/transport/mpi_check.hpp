// SPDX-License-Identifier: MIT
// The one checker every MPI return code goes through. Private to the transport layer.
#pragma once

#include <mpi.h>

#include "mailroom/detail/thread.hpp"
#include "mailroom/error.hpp"
#include "transport/transport.hpp"

#include <memory>

namespace mailroom::transport::detail {
[[noreturn]] void mpi_failed(int rc, const char* call, const char* file, int line) noexcept;
/// Stops the job: an MPI call from a thread that is not worker 0 (MPI's thread level allows
/// calls from worker 0 only, or from the progress thread and the main flow by turns).
[[noreturn]] void mpi_off_thread(const char* call, const char* file, int line) noexcept;
/// mailroom's own duplicate of the communicator the runtime runs on (world by default), from
/// init to finalize: every collective and window of the transport is on it (or a duplicate), so
/// that nothing of mailroom's can match the program's own MPI calls.
MPI_Comm comm() noexcept;
/// The PEs of this node (MPI_COMM_TYPE_SHARED, ranked by rank in comm()), from init to finalize.
MPI_Comm node_comm() noexcept;
/// True while mailroom on this PE has state that another PE may need it to move (set by the
/// runtime: live mailboxes, buffers waiting); a collective then keeps the progress engine running.
bool progress_active() noexcept;
/// Advances the duplicates of comm() that collective_contexts asked for (one at a time, in
/// order); true once none is left. Called from every channel poll.
bool advance_duplicates();
/// A collective_context among the members of `comm`, in point-to-point messages of tag `tag`
/// (which no other context on comm uses while it lives): a team's termination protocols.
std::unique_ptr<collective_context::impl> make_tree_context(MPI_Comm comm, int tag);
/// Completes every duplicate asked for before a collective starts on comm(), keeping mailroom
/// moving meanwhile (see collective.cpp for why nothing may overlap a duplicate).
void finish_duplicates();
/// Waits for `req`, running the runtime's progress engine between tests (`what` names the wait
/// for the watchdog's report).
void wait_progressing(MPI_Request& req, const char* what);
}  // namespace mailroom::transport::detail

#define MAILROOM_MPI(call)                                                                \
  do {                                                                                    \
    if (MAILROOM_UNLIKELY(::mailroom::detail::t_worker > 0))                              \
      ::mailroom::transport::detail::mpi_off_thread(#call, __FILE__, __LINE__);           \
    const int mailroom_rc_ = (call);                                                      \
    if (MAILROOM_UNLIKELY(mailroom_rc_ != MPI_SUCCESS))                                   \
      ::mailroom::transport::detail::mpi_failed(mailroom_rc_, #call, __FILE__, __LINE__); \
  } while (0)

/// A blocking collective that keeps mailroom moving: started(args..., &req), then a wait that
/// runs the progress engine while mailroom is active on this PE (a PE blocked in MPI would stop
/// taking in buffers and acknowledging them, and a peer still sending to it could never reach
/// the collective), a plain MPI_Wait otherwise. Always the non-blocking form: MPI never matches a
/// blocking collective with a non-blocking one, and PEs may differ in being active.
#define MAILROOM_COLLECTIVE(started, ...)                                     \
  do {                                                                        \
    MPI_Request mailroom_req_ = MPI_REQUEST_NULL;                             \
    ::mailroom::transport::detail::finish_duplicates();                       \
    MAILROOM_MPI(started(__VA_ARGS__, &mailroom_req_));                       \
    ::mailroom::transport::detail::wait_progressing(mailroom_req_, #started); \
  } while (0)
