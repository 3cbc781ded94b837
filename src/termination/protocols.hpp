// SPDX-License-Identifier: MIT
// The termination protocols, in one place: the end of stream that closes a mailbox with no cycle
// through it, and Mattern's four-counter quiescence waves that close a cycle of mailboxes (inside
// a selector, or a ring of selectors that feed each other) and mailroom::quiesce. The selectors
// say when a component is closed on this PE (every entry done, every feeder terminated); these
// say when it has terminated everywhere. Not installed.
#pragma once

#include "mailroom/detail/conveyor_core.hpp"

#include "transport/transport.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace mailroom::detail {

/// Mattern's four-counter quiescence detection over non-blocking allreduce waves.
class quiescence {
 public:
  quiescence() = default;
  /// What the members must agree on: `signature` (describe_signature's, registered) names the
  /// cycle or ring whose waves these are, and each wave checks that every member's waves are
  /// of the same one (collective contexts are paired by creation order: PEs that created them in
  /// different orders would pair one cycle's waves with another's). `first`: this PE is the
  /// first member, whose signature a PE that differs asks about to name both sides.
  void agree_on(std::uint32_t signature, bool first) noexcept {
    signature_ = signature;
    first_ = first;
  }
  /// Call repeatedly once the component is closed on this PE (no more sends from outside).
  /// `ready` says that every item pushed so far has been handed to the transport, so the
  /// counters may be sampled now. Returns true once the component has terminated everywhere.
  bool step(transport::collective_context& ctx, bool ready, std::int64_t sent,
            std::int64_t processed);
  /// The allreduce waves completed so far (at least two before it reports termination).
  [[nodiscard]] int waves() const noexcept { return waves_; }
  /// What agree_on was given (0: nothing).
  [[nodiscard]] std::uint32_t signature() const noexcept { return signature_; }

 private:
  // A wave sums, over the members: sent, processed, 1, h, h * h (h: 20 bits of the signature,
  // so no sum overflows), and the first member's signature and world rank (0 elsewhere).
  static constexpr int k_wave = 7;
  /// The members' signatures differ: stops the job (on a PE that differs from the first).
  void disagree();
  std::int64_t in_[k_wave] = {};
  std::int64_t out_[k_wave] = {};
  std::int64_t prev_[2] = {-1, -1};
  std::uint32_t signature_ = 0;
  bool first_ = false;
  bool disagreed_ = false;
  bool in_flight_ = false;
  bool done_ = false;
  int waves_ = 0;
  double wave_started_ = 0;  // (MAILROOM_TRACE)
};

/// A component with no cycle (one mailbox, fed from outside it): closes its conveyor to sends
/// on the first call, then steps its end of stream; true once every PE's stream into it ended.
bool step_stream(conveyor_core& conveyor);

/// The quiescence waves of a cycle of mailboxes: a cyclic component of a selector, or a ring of
/// selectors. Made collectively by the cycle's members, on a collective context of its own.
class cycle_waves {
 public:
  /// Over `members` (null: the job's PEs). `signature`, `first`: see quiescence::agree_on.
  cycle_waves(transport::group* members, std::uint32_t signature, bool first);
  /// One step, once the cycle is closed on this PE and nothing else of it waits here (`ready`):
  /// samples the counts of `conveyors` (every mailbox of the cycle) once none of them has
  /// arrivals or records to forward and every partly filled buffer has shipped. (Shipping waits
  /// for credits: a buffer forced out without one would wait in the backlog all the same, and
  /// the messages sent meanwhile would start another, so a cycle of short dependent messages
  /// would fill the backlogs with nearly empty buffers. Left open, the buffer keeps filling
  /// until a credit returns; until then this PE is not ready.) True once the cycle terminated.
  bool step(std::span<conveyor_core* const> conveyors, bool ready);
  [[nodiscard]] std::uint32_t signature() const noexcept { return waves_.signature(); }

 private:
  quiescence waves_;
  std::unique_ptr<transport::collective_context> ctx_;
};

}  // namespace mailroom::detail
