// SPDX-License-Identifier: MIT
// Counters of mailroom's traffic, kept per buffer (never per message, so always on): what a
// program's mailboxes sent, to whom, how full their buffers went out, and how long senders
// waited for credits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mailroom {

/// Traffic of this PE's mailboxes (and conveyors), summed over every one it has had since the
/// runtime started. Subtract two snapshots to measure a phase.
/// Counted per link: with node routing (MAILROOM_ROUTING) a message to another node crosses up to
/// three, and is counted on each; messages_forwarded are those this PE passed on for others.
struct statistics {
  std::int64_t messages_sent = 0;  ///< to every PE, this one included (forwarded ones too)
  std::int64_t bytes_sent = 0;     ///< message bytes (buffer headers not counted)
  std::int64_t buffers_sent = 0;   ///< aggregation buffers, full or not (forwarded ones too)
  /// Room for messages in the buffers sent, full or not (buffers to PEs of the node may be smaller
  /// than those to other nodes: MAILROOM_NODE_BUFFER_BYTES): what mean_fill() divides by.
  std::int64_t room_sent = 0;
  std::int64_t messages_forwarded = 0;  ///< passed on for other PEs (node routing)
  /// Folded into an earlier message before they left (message reductions, mailbox_spec::reduce):
  /// not in messages_sent.
  std::int64_t messages_combined = 0;
  /// Folded at a hop on this PE into a message it was forwarding (message reductions with node
  /// or grid routing): not passed on, and not in messages_handled.
  std::int64_t messages_combined_at_hops = 0;
  ///@{
  /// Per hop of a route, in its order (0: to the owner of a link within the sender's node, 1:
  /// over the network, 2 and 3: the next dimension's, ...): messages that came to this PE to be
  /// passed on there, and those of them folded here (message reductions); the rest went on.
  std::vector<std::int64_t> hop_in, hop_combined;
  ///@}
  std::int64_t messages_handled = 0;  ///< whose handler ran on this PE
  double credit_wait_seconds = 0;     ///< sends blocked on back-pressure
  std::int64_t idle_flushed =
      0;  ///< messages shipped early by the idle flush (MAILROOM_IDLE_FLUSH)
  ///@{
  /// messages_sent, bytes_sent and buffers_sent by the PE they went to directly, indexed by its
  /// rank (empty until this PE has had a mailbox).
  std::vector<std::int64_t> messages_to, bytes_to, buffers_to;  ///< per PE sent to directly
  ///@}

  /// Mean fill of the buffers sent: bytes_sent / room_sent; 0 when none was sent.
  [[nodiscard]] double mean_fill() const noexcept {
    return room_sent > 0 ? static_cast<double>(bytes_sent) / static_cast<double>(room_sent) : 0.0;
  }
  /// Mean fill as if every buffer had room for `buffer_payload_bytes` (see mailroom::mean_fill).
  [[nodiscard]] double mean_fill(std::size_t buffer_payload_bytes) const noexcept;
  /// Field by field, the per-PE vectors grown to the longer: a phase is after -= before.
  statistics& operator-=(const statistics& o);
  /// Field by field, the per-PE vectors grown to the longer (to sum several PEs' counters).
  statistics& operator+=(const statistics& o);
};

/// Mean fill of `buffers` buffers that carried `bytes` bytes of messages: bytes over their
/// capacity for messages (mailroom::buffer_payload_bytes()); 0 when none was sent.
[[nodiscard]] inline double mean_fill(std::int64_t bytes, std::int64_t buffers,
                                      std::size_t buffer_payload_bytes) noexcept {
  return buffers > 0 ? static_cast<double>(bytes) / (static_cast<double>(buffers) *
                                                     static_cast<double>(buffer_payload_bytes))
                     : 0.0;
}

inline double statistics::mean_fill(std::size_t buffer_payload_bytes) const noexcept {
  return mailroom::mean_fill(bytes_sent, buffers_sent, buffer_payload_bytes);
}

}  // namespace mailroom
