// SPDX-License-Identifier: MIT
// All-reductions among the members of a group that all share one node, through memory they
// share: each member copies its contribution into its part of the group's segment and combines
// the others' where they are, with no message and no MPI call. For the small reductions that
// come many at a time (one per partition, one per iteration), where MPI's non-blocking
// collectives cost microseconds each in scheduling alone. Private to the transport (group.cpp).
#pragma once

#include "mailroom/detail/reduction.hpp"
#include "transport/transport.hpp"

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

namespace mailroom::transport::detail {

/// Node reductions started on this PE and not finished yet, over every group: while there are
/// any, mailroom's blocking waits keep its progress engine running (a post held back for room
/// in the ring moves only there).
std::uint64_t node_reductions_in_flight() noexcept;

class node_reducer {
 public:
  /// Collective over `comm`, blocking: a reducer when every member shares this node and
  /// `ring_bytes` > 0 and the node's shared memory can hold it (the same answer on every
  /// member); null otherwise (the group's reductions then all go through MPI).
  static std::unique_ptr<node_reducer> make(MPI_Comm comm, std::size_t ring_bytes);
  ~node_reducer();
  node_reducer(const node_reducer&) = delete;
  node_reducer& operator=(const node_reducer&) = delete;

  /// Whether an all-reduce of `bytes` goes through the reducer: the same answer on every member
  /// for the same call (what MPI's matching of the others needs).
  [[nodiscard]] bool takes(std::size_t bytes) const noexcept { return bytes <= max_entry_; }
  /// Starts the next all-reduce of the group (every member starts them in the same order).
  /// `in` and `out` stay valid until the request completes.
  std::unique_ptr<request> start(const void* in, void* out, std::size_t count,
                                 const mailroom::detail::reduction& r);

 private:
  class entry;
  // A member's part of the segment: its two counters on lines of their own, then its ring.
  struct alignas(64) counter {
    std::atomic<std::uint64_t> value{0};
  };
  struct part_header {
    counter posted;  // reductions whose contribution this member has written to its ring
    counter done;    // reductions this member has finished reading everyone's contribution of
  };
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                "node reductions need lock-free 64-bit atomics (shared between processes)");

  node_reducer(std::byte* segment, std::size_t segment_bytes, int rank, int size,
               std::size_t ring_bytes);
  [[nodiscard]] part_header& header(int r) const noexcept {
    return *reinterpret_cast<part_header*>(segment_ + static_cast<std::size_t>(r) * part_bytes_);
  }
  [[nodiscard]] std::byte* ring(int r) const noexcept {
    return segment_ + static_cast<std::size_t>(r) * part_bytes_ + sizeof(part_header);
  }
  // Posts and completes what it can, in order (called by the oldest request's test()).
  void advance();
  // Makes the posts so far visible to the others.
  void publish() noexcept;
  bool try_post(entry& e);
  void finish(entry& e);

  std::byte* segment_;
  std::size_t segment_bytes_;
  int rank_, size_;
  std::size_t ring_bytes_, part_bytes_, max_entry_;
  std::uint64_t started_ = 0;    // reductions started here (the next one's sequence number)
  std::uint64_t posted_ = 0;     // of them, posted (in order)
  std::uint64_t published_ = 0;  // of those, shown to the others
  std::uint64_t alloc_ = 0;      // absolute ring position after the last entry placed
  // Lower bounds of the others' counters, read again only when they do not suffice.
  std::uint64_t min_posted_ = 0, min_done_ = 0;
  std::deque<entry*> queue_;  // started, not finished, in order
  // Entries placed in the ring that some member may still read: (sequence, absolute start).
  std::deque<std::pair<std::uint64_t, std::uint64_t>> placed_;
};

}  // namespace mailroom::transport::detail
