// SPDX-License-Identifier: MIT
// Messages larger than one variable-size item carries travel in pieces: each piece is an item
// whose length word has record_codec::k_var_piece, its payload [seq][total][offset] (8 bytes
// each) and then its part of the message. seq numbers the sender's large messages to the
// mailbox. piece_writer cuts a message into pieces as it is written (the whole is never copied
// at once: a serialised value is written straight into them); reassembly puts them together at
// the receiver, in any order (forwarding may reorder them). Not API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace mailroom::detail {

/// Bytes of a piece's head: [seq][total][offset].
inline constexpr std::size_t k_piece_head = 24;

/// Cuts a message of `total` bytes into pieces of at most `room` bytes each (head included) and
/// hands each to emit(ctx, piece, length word) as soon as it is full; the last at finish().
class piece_writer {
 public:
  using emit_fn = void (*)(const void* ctx, const std::byte* piece, std::uint32_t word);
  piece_writer(std::uint64_t seq, std::uint64_t total, std::size_t room, emit_fn emit,
               const void* ctx);
  /// Appends the next n bytes of the message.
  void write(const void* data, std::size_t n);
  /// After the last write: emits the last piece. The job stops if the bytes written are not
  /// `total` (the writer of the message and its sizing pass disagree).
  void finish();

 private:
  void ship();
  std::vector<std::byte> piece_;  ///< the piece being filled: head, then bytes
  std::uint64_t seq_, total_;
  std::uint64_t offset_ = 0;  ///< the message offset of the piece being filled
  std::size_t used_ = 0;      ///< bytes in that piece after its head
  emit_fn emit_;
  const void* ctx_;
};

/// The large messages partly arrived at one mailbox. Each is reassembled into a buffer of its
/// size, not zeroed (its pieces write every byte); the buffer of the last one handled is kept
/// for the next, so a stream of large messages takes no fresh pages (and page faults) each. A
/// receiver may instead place a message's bytes from some offset on in memory of its own (a
/// decoding handler, in the value it decodes into: no copy after the pieces').
class reassembly {
 public:
  struct message {
    std::unique_ptr<std::uint64_t[]> words;
    std::size_t capacity = 0;  ///< words allocated
    std::size_t bytes = 0;     ///< the message's
    /// Placed: where bytes from offset `split` (at most 8) on went; the first ones are in head.
    std::byte* rest = nullptr;
    std::size_t split = 0;
    std::uint64_t head = 0;
  };
  /// Where the bytes of a new message of `total` bytes from offset `split` on go (split set by
  /// it, at most 8), or null for the message's own buffer.
  using place_fn = std::byte* (*)(void* ctx, std::uint64_t total, std::size_t& split);
  /// Adds a piece (an item's payload: head and bytes, len in all) from PE `from`: true when it
  /// completes its message, which is then moved into `whole`. place, when given, is asked at a
  /// message's first piece.
  bool add(const std::byte* piece, std::uint32_t len, int from, message& whole,
           place_fn place = nullptr, void* ctx = nullptr);
  /// Takes back a handled message's buffer, for the next (the larger of it and the kept one).
  void recycle(message&& m) noexcept;
  /// Messages partly arrived.
  [[nodiscard]] std::size_t partial() const noexcept { return partial_.size(); }

 private:
  struct pending {
    message m;
    std::uint64_t arrived = 0;
  };
  std::map<std::pair<int, std::uint64_t>, pending> partial_;
  message spare_;
};

/// Sends a message of len bytes in pieces of at most `room` bytes: write(piece_writer&) writes
/// its bytes, and each piece goes to send(piece, length word) as soon as it is full.
template <class Send, class Write>
void send_in_pieces(std::uint64_t seq, std::size_t len, std::size_t room, const Send& send,
                    const Write& write) {
  constexpr piece_writer::emit_fn emit = [](const void* ctx, const std::byte* piece,
                                            std::uint32_t word) {
    (*static_cast<const Send*>(ctx))(piece, word);
  };
  piece_writer w(seq, len, room, emit, &send);
  write(w);
  w.finish();
}

}  // namespace mailroom::detail
