// SPDX-License-Identifier: MIT
// The runtime object that every mailroom program creates first, and the free functions of the
// scheduler a program may call: this_pe, num_pes, yield, finish, barrier.
#pragma once

#include "mailroom/config.hpp"
#include "mailroom/detail/index_division.hpp"
#include "mailroom/detail/send_context.hpp"
#include "mailroom/pe.hpp"
#include "mailroom/statistics.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace mailroom {

/// The MPI communicator mailroom runs on, named without <mpi.h>: world() (the default), or a
/// communicator of the program's through `mailroom::mpi_communicator(MPI_Comm)` from
/// <mailroom/mpi.hpp>. mailroom duplicates it: its traffic and collectives never match the
/// program's, and the program's communicators keep their error handlers.
class communicator {
 public:
  /// MPI_COMM_WORLD.
  static constexpr communicator world() noexcept { return communicator(true, 0); }
  /// From a Fortran handle (MPI_Comm_c2f), which any MPI can convert without <mpi.h> here.
  static constexpr communicator from_fortran(std::int64_t handle) noexcept {
    return communicator(false, handle);
  }
  /// True for world(), false for one from from_fortran().
  [[nodiscard]] constexpr bool is_world() const noexcept { return world_; }
  /// The Fortran handle (meaningless for world()).
  [[nodiscard]] constexpr std::int64_t fortran_handle() const noexcept { return handle_; }

 private:
  constexpr communicator(bool world, std::int64_t handle) noexcept
      : world_(world), handle_(handle) {}
  bool world_;
  std::int64_t handle_;  // any value: MPICH's handles are negative as a Fortran int
};

/// Starts mailroom on this PE: MPI (unless the program started it), the configuration from the
/// MAILROOM_* environment, the aggregation exchange, the symmetric heap and the lambda registry.
/// Collective over `comm`: every PE of it constructs exactly one, before any other mailroom
/// object, and destroys it after all of them. PE numbers are ranks in `comm`.
///
/// Living beside the program's own MPI: mailroom initialises MPI with MPI_THREAD_FUNNELED unless
/// the program did. An MPI the program initialised may provide any level, provided the runtime
/// is constructed on the thread that initialised it (or MPI provides MPI_THREAD_SERIALIZED or
/// more), except with MAILROOM_WORKERS > 1, which needs MPI_THREAD_FUNNELED or more: with
/// MPI_THREAD_SINGLE the job stops with the reason. mailroom calls MPI only from the thread that
/// constructed the runtime. Between mailroom calls the program may call MPI on its own
/// communicators; before a blocking collective of its own (MPI_Allreduce, MPI_Barrier, ...) that
/// a PE may reach while another still sends it mailroom messages, call mailroom::quiesce() on
/// every PE: a PE blocked in MPI takes in no buffers and acknowledges none, so a peer waiting for
/// its acknowledgements would never reach the collective.
class runtime {
 public:
  /// With the command line, which MPI_Init_thread receives (and may remove its own arguments
  /// from) unless the program initialised MPI.
  runtime(int& argc, char**& argv, communicator comm = communicator::world());
  /// Without the command line (for a program that initialised MPI itself, say).
  explicit runtime(communicator comm = communicator::world());
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// The configuration in force, read from the MAILROOM_* environment at construction.
  [[nodiscard]] const mailroom::config& config() const noexcept;
};

/// This PE.
[[nodiscard]] pe this_pe() noexcept;
/// The number of PEs in the job.
[[nodiscard]] int num_pes() noexcept;
namespace detail {
/// num_pes() and the division by it (index_magic_for), computed when the runtime starts: what
/// cyclic{} takes in one call (a closure may build one per message).
struct job_pes {
  std::uint64_t m;
  std::int32_t pes;
  std::uint32_t s;
};
[[nodiscard]] job_pes job_division() noexcept;
}  // namespace detail
/// The PE that sent the message whose handler is running (-1 outside handlers): a PE of the job,
/// also in a handler of a selector over a team, whose `from` is a rank in the team.
[[nodiscard]] inline pe sender() noexcept { return pe(detail::send_context::current_source); }

/// Lets pending handlers run from user code (a no-op for handlers, when called from one).
void yield(source_location loc = source_location::current());
/// For a long computation of the program's own between mailroom calls (a loop on worker 0, say
/// with one worker): lets the PE take in buffers, acknowledge them and run the handlers of what
/// arrived, so that the PEs sending to it are not held up. Call it often, every iteration: a call
/// costs a decrement and a branch; about every 2 us one looks at the clock, and every 10 us one
/// polls the transport (handlers run inside that call, on this thread). On a pool worker it hands
/// the worker's staged sends to worker 0; in a handler it does nothing. Unlike yield(), it runs
/// no task. docs/design.md, "Progress while computing".
inline void progress(source_location loc = source_location::current()) {
  if (MAILROOM_UNLIKELY(--detail::send_context::progress_countdown <= 0))
    detail::progress_poll(loc);
}
/// Waits until every PE arrives, running handlers meanwhile (not callable from a handler).
/// Every put a PE started before it (symmetric_array::put) is visible to every PE after it.
void barrier(source_location loc = source_location::current());
/// Collective: returns on every PE once no mailroom message is in flight anywhere: every message
/// sent before any PE called it, and every message their handlers sent in turn, has been handled,
/// and no PE waits for an acknowledgement of another. Runs handlers and ships partly filled
/// buffers meanwhile; selectors stay usable (sends may resume after it). Call it on every PE
/// before a blocking MPI collective of the program's own. Not callable from a handler.
void quiesce(source_location loc = source_location::current());
/// This PE's traffic counters so far (see statistics). Cheap: no communication.
[[nodiscard]] statistics stats();
/// The bytes of messages an aggregation buffer holds (MAILROOM_BUFFER_BYTES less its header).
[[nodiscard]] std::size_t buffer_payload_bytes() noexcept;
/// The routing in force: "direct", "node" or "mesh" (MAILROOM_ROUTING, with auto resolved);
/// "direct" while no runtime runs.
[[nodiscard]] const char* routing_in_use() noexcept;
/// Seconds on a per-PE wall clock.
[[nodiscard]] double wtime() noexcept;

/// The MPI library's version line (or the simulated machine's description), for reports.
[[nodiscard]] std::string mpi_library();
/// The nodes of the job: groups of PEs that share memory, as MPI reports them.
[[nodiscard]] int num_nodes() noexcept;
/// The node PE p belongs to as routing sees it (MAILROOM_NODE_SIZE may regroup the PEs): traffic
/// between PEs of different routing nodes is what crosses the network.
[[nodiscard]] int routing_node(pe p);
/// Collective: the round trip of an empty message between PE 0 and the last PE, in seconds (the
/// median of `batches` batches of 200; 0 with one PE), on every PE. What tells the state of a
/// shared machine: compare runs whose round trips agree.
[[nodiscard]] double round_trip_seconds(int batches = 5);

/// What the aggregation layer chose at start-up, and its peak use on this PE (for reports).
struct aggregation_report {
  std::uint64_t link_credits = 0;       ///< link pool credits per lane to another node in force
  std::uint64_t shared_slots = 0;       ///< slots in this PE's pool of node-shared memory
  std::uint64_t node_buffer_bytes = 0;  ///< bytes per shared slot
  std::uint64_t peak_pool_bytes = 0;    ///< the most aggregation memory this PE has held
};
/// What the aggregation layer chose at start-up, and this PE's peak so far. Needs the runtime.
[[nodiscard]] aggregation_report aggregation();

}  // namespace mailroom

#include "mailroom/task.hpp"  // finish, async, parallel_for
