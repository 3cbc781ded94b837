// SPDX-License-Identifier: MIT
// The distributed-engine boundary: everything mailroom needs from MPI, behind an interface that
// does not include <mpi.h> (and that the simulated machine of mailroom/simulate.hpp provides
// too). Point-to-point byte buffers with pre-posted receives, non-blocking collectives on
// private communicators, and the job-wide basics (rank, size, node layout, abort). Not
// installed: the layers above name its classes in their headers only as declared, incomplete.
#pragma once

#include "mailroom/detail/reduction.hpp"
#include "mailroom/detail/small_pool.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mailroom::transport {

/// Initialises MPI (unless the program already did: then its thread level is checked) and
/// duplicates the communicator to run on: MPI_COMM_WORLD, or unless `world` the one whose Fortran
/// handle (MPI_Comm_c2f) is `comm_f`. mailroom's traffic and collectives use the duplicate only;
/// the program's communicators keep their error handlers and tags. `serialized`: mailroom's MPI
/// calls will come from two threads by turns (MPI_THREAD_SERIALIZED), not from one
/// (MPI_THREAD_FUNNELED).
/// Called by the runtime.
void init(int* argc, char*** argv, bool world = true, std::int64_t comm_f = 0,
          bool serialized = false);
/// Frees the duplicate; finalises MPI if init() initialised it.
void finalize();
[[nodiscard]] bool initialized() noexcept;
/// Whether MPI's thread level lets the process have threads besides the one that calls MPI
/// (MPI_THREAD_FUNNELED or more; false on the simulated machine), or with `serialized` lets two
/// threads call MPI by turns (MPI_THREAD_SERIALIZED or more).
[[nodiscard]] bool threads_allowed(bool serialized = false);
/// The thread level MPI provides ("MPI_THREAD_FUNNELED", ...).
[[nodiscard]] const char* thread_level();

/// What the transport's blocking calls ask of the layers above: whether this PE has mailroom
/// state that a peer may need it to move, and one poll of the progress engine (handlers
/// included; `waiting_in` names the wait for the watchdog). Set by the runtime once it runs.
struct progress_hooks {
  bool (*active)() = nullptr;
  void (*progress)(const char* waiting_in) = nullptr;
  /// The wait this PE is in now (null: none), for reports of the simulated machine.
  const char* (*waiting_in)() = nullptr;
};
/// Tells the transport whether the progress engine's last poll found work: the simulated
/// machine learns from it that every PE waits (a deadlock, reported). A no-op under MPI.
void note_poll(bool any) noexcept;
void set_progress_hooks(progress_hooks hooks) noexcept;

[[nodiscard]] int rank() noexcept;
[[nodiscard]] int size() noexcept;

/// Where this PE sits among the PEs that share its node (MPI_Comm_split_type, shared memory).
struct node_layout {
  int node_rank = 0;  ///< rank among the PEs of this node
  int node_size = 1;  ///< PEs on this node
  int node = 0;       ///< index of this node, 0..nodes-1 (by lowest world rank)
  int nodes = 1;      ///< nodes in the job
};
[[nodiscard]] const node_layout& layout() noexcept;

/// Every collective below keeps the progress engine running while mailroom is active on this PE
/// (transport::progress_hooks), so a peer still sending to this PE can reach it.
void barrier();
[[nodiscard]] double wtime() noexcept;
[[noreturn]] void abort(int code) noexcept;
[[nodiscard]] std::string library_version();

std::int64_t allreduce_min(std::int64_t v);
std::int64_t allreduce_max(std::int64_t v);
std::int64_t allreduce_sum(std::int64_t v);
void broadcast(void* data, std::size_t bytes, int root);
/// The round trip of an empty message between PE 0 and the last PE, in seconds: the median of
/// `batches` batches of 200 (collective; every PE gets it; 0 with one PE). What tells the state
/// of a shared machine: two virtual CPUs far apart on the host take several times as long as two
/// close ones, and programs that communicate slow down unevenly then (docs/design.md).
double round_trip_seconds(int batches = 5);

/// out[p] = PE p's v, on every PE (out has size() entries).
void allgather(int v, int* out);
/// All-to-all exchange of one int per PE pair (send[p] goes to PE p; recv[p] came from PE p).
void alltoall(const int* send, int* recv);
/// MPI_Alltoallv over elements of `elem_bytes` bytes; counts and displacements in elements.
void alltoallv(const void* send, const int* send_counts, const int* send_displs, void* recv,
               const int* recv_counts, const int* recv_displs, std::size_t elem_bytes);

/// One non-blocking operation in flight (a collective of a group, a one-sided transfer). Poll
/// test() until it returns true; the buffers given when it started must stay valid until then.
/// Destroying it earlier waits for it.
class request {
 public:
  virtual ~request() = default;
  // From small_pool: a PE may have hundreds in flight (sized delete: the virtual destructor
  // passes the whole object's size).
  static void* operator new(std::size_t bytes) {
    return mailroom::detail::small_pool::allocate(bytes);
  }
  static void operator delete(void* p, std::size_t bytes) noexcept {
    mailroom::detail::small_pool::deallocate(p, bytes);
  }
  // (An over-aligned request, should one appear, bypasses the pool.)
  static void* operator new(std::size_t bytes, std::align_val_t a) {
    return ::operator new(bytes, a);
  }
  static void operator delete(void* p, std::size_t /*bytes*/, std::align_val_t a) noexcept {
    ::operator delete(p, a);
  }
  virtual bool test() = 0;
  /// Waits for it where the engine can do better than the caller's progress loop: on the
  /// simulated machine the PE sleeps while mailroom needs nothing of it (as in the transport's
  /// own collectives), so waiting PEs cost no turns. Returns false (having done nothing) where
  /// it cannot: the caller then polls test() with its progress engine running.
  virtual bool wait_idle(const char* /*what*/) { return false; }
  /// An MPI request: test_all tests these together, in one MPI call.
  [[nodiscard]] virtual bool mpi() const noexcept { return false; }
};
/// Tests every request of `reqs` at once (one pass of MPI's progress engine, not one per
/// request: hundreds may be in flight) and sets done[i] for each that has completed.
void test_all(std::span<request* const> reqs, std::vector<char>& done);

/// Read-modify-write operations of heap_window::atomic.
using atomic_op = mailroom::detail::atomic_op;

/// One-sided access to every PE's part of a region at the same address on every PE (the
/// symmetric heap): passive target, the window open for its whole life (MPI_Win_create over the
/// region, lock_all). Construction and destruction are collective. Offsets are in bytes from
/// the region's start. Blocking operations have completed at the target when they return;
/// start_get's request completes when the data has arrived, start_put's when `in` may be reused
/// (the put has completed at the target after flush_all()).
class heap_window {
 public:
  heap_window(std::byte* base, std::size_t bytes);
  ~heap_window();
  heap_window(const heap_window&) = delete;
  heap_window& operator=(const heap_window&) = delete;

  void get(int target, std::size_t offset, void* out, std::size_t bytes);
  void put(int target, std::size_t offset, const void* in, std::size_t bytes);
  std::unique_ptr<request> start_get(int target, std::size_t offset, void* out, std::size_t bytes);
  std::unique_ptr<request> start_put(int target, std::size_t offset, const void* in,
                                     std::size_t bytes);
  /// Applies `op` to the integer of type `type` at offset on target, atomically with respect to
  /// every other atomic of this window, and returns its old value (zero-extended). `operand` is
  /// the value to add, combine or store; `compare` what compare_swap expects.
  std::uint64_t atomic(int target, std::size_t offset, mailroom::detail::elem_type type,
                       atomic_op op, std::uint64_t operand, std::uint64_t compare = 0);
  /// atomic() without waiting: the old value lands in *result when the request completes.
  std::unique_ptr<request> start_atomic(int target, std::size_t offset,
                                        mailroom::detail::elem_type type, atomic_op op,
                                        std::uint64_t operand, std::uint64_t compare,
                                        std::uint64_t* result);
  /// Completes every put this PE started, at its target.
  void flush_all();

  struct impl;  ///< the engine behind it: MPI or the simulated machine

 private:
  std::unique_ptr<impl> impl_;
};

/// On the simulated machine (mailroom::simulated()), where the PEs share one process: the calling
/// PE's symmetric heap, `bytes` at an address that is the same for every PE (each PE's own memory
/// is mapped there whenever it runs). Collective.
std::byte* simulated_heap_start(std::size_t bytes);
/// On the simulated machine: maps the calling PE's heap at the common address (after each switch
/// to it).
void simulated_heap_map() noexcept;

/// Memory shared by the PEs of a node: every PE allocates `bytes` (MPI_Win_allocate_shared on its
/// node's communicator; contents undefined, pages touched only when used), and every PE of the
/// node addresses every PE's part directly. Construction and destruction are collective over
/// the PEs of a node; `bytes` must agree on a node. With one PE on a node (or no bytes) nothing is
/// allocated there. Each PE sets up its part, then all call node_barrier() before using others'.
class node_memory {
 public:
  explicit node_memory(std::size_t bytes);
  ~node_memory();
  node_memory(const node_memory&) = delete;
  node_memory& operator=(const node_memory&) = delete;

  /// The part of world rank `pe` (aligned to 64 bytes); nullptr when `pe` is on another node or
  /// nothing was allocated.
  [[nodiscard]] std::byte* part(int pe) const noexcept;
  /// The world ranks that have a part, ascending (empty when nothing was allocated).
  [[nodiscard]] std::vector<int> members() const;
  /// Waits until every PE of this node arrives (after each has set up its own part).
  void node_barrier();

  struct impl;  ///< the engine behind it: MPI or the simulated machine

 private:
  std::unique_ptr<impl> impl_;
};

/// Receives what the channel completes. Called from channel::poll only; per buffer, not per item.
class channel_sink {
 public:
  virtual void sent(void* cookie) noexcept = 0;
  /// A data buffer arrived; ownership of `data` passes to the sink.
  virtual void received(int source, std::byte* data, std::size_t bytes) noexcept = 0;
  /// A fresh buffer of the channel's capacity, to post the next data receive with.
  virtual std::byte* fresh_buffer() noexcept = 0;
  /// `source` acknowledges `n` buffers, one per entry of `ids` (the conveyor they were for).
  virtual void acknowledged(int source, const std::uint32_t* ids, std::size_t n) noexcept = 0;

 protected:
  ~channel_sink() = default;
};

/// Non-blocking point-to-point messages on a private communicator: data buffers (receives kept
/// posted, any source) and small acknowledgement messages on a tag of their own. How many sends
/// are in flight is bounded by the layer above (credits), not here.
class channel {
 public:
  channel(std::size_t capacity, int receives_posted, channel_sink& sink);
  ~channel();
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  [[nodiscard]] int sends_in_flight() const noexcept;
  /// Starts sending `bytes` of `data` to `dest`. `cookie` comes back through sink.sent() once
  /// the buffer may be reused.
  void send(int dest, const std::byte* data, std::size_t bytes, void* cookie);
  /// Sends the acknowledgements `ids` to `dest` (copied; any number).
  void send_acks(int dest, const std::uint32_t* ids, std::size_t n);
  /// Tests what is in flight and reports completions to the sink. Returns their number.
  int poll();

  struct impl;  ///< the engine behind it: MPI or the simulated machine

 private:
  std::unique_ptr<impl> impl_;
};

class group;

/// A private communicator for one termination protocol, so that concurrent protocols of
/// different mailboxes can never match each other's collectives. Construction is collective but
/// does not block (MPI_Comm_idup, completed by test()): a PE constructing a mailbox while a peer
/// still sends to it on another keeps taking in buffers. An operation started before the
/// duplicate is ready starts when it is.
class collective_context {
 public:
  /// Among every PE of the job.
  collective_context();
  /// Among the members of g (collective over them, in the same order as other contexts of g).
  explicit collective_context(group& g);
  ~collective_context();
  collective_context(const collective_context&) = delete;
  collective_context& operator=(const collective_context&) = delete;

  /// out[0] = sum over PEs of in[rank()] (in has size() entries). Non-blocking.
  void start_reduce_scatter_sum(const std::int64_t* in, std::int64_t* out);
  /// out[i] = sum over PEs of in[i], i < n. Non-blocking.
  void start_allreduce_sum(const std::int64_t* in, std::int64_t* out, int n);
  /// A non-blocking barrier.
  void start_barrier();
  /// True once the started operation has completed (true when nothing was started).
  bool test();
  /// As request::wait_idle: false where the caller must poll test() itself.
  bool wait_idle(const char* what);
  [[nodiscard]] bool busy() const noexcept;

  struct impl;  ///< the engine behind it: MPI or the simulated machine

 private:
  std::unique_ptr<impl> impl_;
};

/// A communicator for the program's own collectives (the public API's, not mailroom's internal
/// ones): the whole job, or a subset split from another group. Every start_* is collective over
/// the group's members, started in the same order by each (as MPI requires); several may be in
/// flight at once. Counts are in elements of `bytes`/`elem_bytes`; gathered and all-to-all data
/// is laid out by rank in the group.
class group {
 public:
  /// Every PE of the job (a duplicate of its own, made by init()).
  static group& world();
  virtual ~group() = default;

  /// Collective over this group, blocking (after a barrier that keeps mailroom moving): the
  /// members that give the same colour form a new group, ranked by key, then by rank here.
  /// Returns null for a negative colour (the PE joins no group).
  virtual std::unique_ptr<group> split(int colour, int key) = 0;
  /// Collective over the group, blocking: from now on its all_reduce calls of at most a quarter
  /// of `bytes` run through `bytes` of memory per member shared within the node, when every
  /// member is on this one (MAILROOM_NODE_REDUCE_BYTES; 0: never). Split groups inherit it.
  virtual void reduce_within_node(std::size_t /*bytes*/) {}
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// The world rank of member r (identity for the world group).
  [[nodiscard]] int world_rank(int r) const noexcept {
    return members_.empty() ? r : members_[static_cast<std::size_t>(r)];
  }

  /// A private context among the members for a termination protocol (collective_context(g)).
  virtual std::unique_ptr<collective_context::impl> make_context() = 0;

  virtual std::unique_ptr<request> start_barrier() = 0;
  /// out[i] = in[i] combined over the members in rank order, on every member.
  virtual std::unique_ptr<request> start_allreduce(const void* in, void* out, std::size_t count,
                                                   const mailroom::detail::reduction& r) = 0;
  /// out[i] = in[i] combined over the members below this one (left alone on rank 0).
  virtual std::unique_ptr<request> start_exscan(const void* in, void* out, std::size_t count,
                                                const mailroom::detail::reduction& r) = 0;
  virtual std::unique_ptr<request> start_broadcast(void* data, std::size_t bytes, int root) = 0;
  /// out (size() * bytes, read on root only) gets each member's `bytes` of in, by rank.
  virtual std::unique_ptr<request> start_gather(const void* in, void* out, std::size_t bytes,
                                                int root) = 0;
  virtual std::unique_ptr<request> start_allgather(const void* in, void* out,
                                                   std::size_t bytes) = 0;
  /// Member r gets bytes [r * bytes, (r+1) * bytes) of every member's in, at out + source * bytes.
  virtual std::unique_ptr<request> start_alltoall(const void* in, void* out, std::size_t bytes) = 0;
  /// MPI_Alltoallv over elements of elem_bytes (counts and displacements in elements).
  virtual std::unique_ptr<request> start_alltoallv(const void* send, const int* send_counts,
                                                   const int* send_displs, void* recv,
                                                   const int* recv_counts, const int* recv_displs,
                                                   std::size_t elem_bytes) = 0;

 protected:
  int rank_ = 0, size_ = 1;
  std::vector<int> members_;  // world ranks by group rank; empty: the world
};

}  // namespace mailroom::transport

// ---- collectives for the memory layer ----------------------------------------------------------
// Gathers and scatters for the distributed sparse matrices (whole matrices on one PE for I/O and
// checks) and an exclusive prefix sum. Counts and displacements are in elements of `elem_bytes`
// bytes, as for alltoallv; like MPI they are ints, so callers check their totals fit.
namespace mailroom::transport {

/// Collective: recv[p] = PE p's `send` on PE `root` (recv has size() entries there; ignored
/// elsewhere).
void gather(int send, int* recv, int root);
/// Collective: PE p gets send[p] from PE `root` (send is read on `root` only).
int scatter(const int* send, int root);
/// Collective MPI_Gatherv: PE p's `count` elements land at recv + displs[p] on `root`; recv,
/// counts and displs are read on `root` only.
void gatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
             std::size_t elem_bytes, int root);
/// Collective MPI_Scatterv, the inverse of gatherv: PE p receives counts[p] elements from
/// send + displs[p] on `root` into recv (room for `count` elements, which must equal counts[p]).
void scatterv(const void* send, const int* counts, const int* displs, void* recv, int count,
              std::size_t elem_bytes, int root);
/// Collective: the sum of v over the PEs below this one (0 on PE 0).
std::int64_t exscan_sum(std::int64_t v);

}  // namespace mailroom::transport
