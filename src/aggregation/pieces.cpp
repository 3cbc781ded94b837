// SPDX-License-Identifier: MIT
// Large messages in pieces (detail/pieces.hpp): cutting them as they are written, and putting
// them together where they arrive.
#include "mailroom/detail/pieces.hpp"

#include "mailroom/detail/records.hpp"
#include "mailroom/error.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace mailroom::detail {

piece_writer::piece_writer(std::uint64_t seq, std::uint64_t total, std::size_t room, emit_fn emit,
                           const void* ctx)
    : piece_(room), seq_(seq), total_(total), emit_(emit), ctx_(ctx) {
  MAILROOM_ASSERT(room > k_piece_head && room <= record_codec::k_var_len);
}

void piece_writer::write(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::byte*>(data);
  const std::size_t room = piece_.size() - k_piece_head;
  while (n > 0) {
    if (used_ == room) ship();
    const std::size_t take = std::min(n, room - used_);
    std::memcpy(piece_.data() + k_piece_head + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
  }
}

void piece_writer::finish() {
  MAILROOM_CHECK(offset_ + used_ == total_,
                 "a large message wrote {} bytes where its size was {}: its serialize function "
                 "writes different bytes each time it runs",
                 offset_ + used_, total_);
  if (used_ > 0) ship();
}

void piece_writer::ship() {
  MAILROOM_CHECK(offset_ + used_ <= total_,
                 "a large message wrote more than its size, {} bytes: its serialize function "
                 "writes different bytes each time it runs",
                 total_);
  const std::uint64_t head[3] = {seq_, total_, offset_};
  std::memcpy(piece_.data(), head, k_piece_head);
  emit_(ctx_, piece_.data(),
        static_cast<std::uint32_t>(k_piece_head + used_) | record_codec::k_var_piece);
  offset_ += used_;
  used_ = 0;
}

bool reassembly::add(const std::byte* piece, std::uint32_t len, int from, message& whole,
                     place_fn place, void* ctx) {
  std::uint64_t head[3];
  MAILROOM_ASSERT(len >= k_piece_head);
  std::memcpy(head, piece, k_piece_head);
  std::size_t bytes = len - k_piece_head;
  MAILROOM_ASSERT(head[2] + bytes <= head[1]);
  const auto key = std::make_pair(from, head[0]);
  auto it = partial_.find(key);
  if (it == partial_.end()) {
    it = partial_.emplace(key, pending{}).first;
    message& m = it->second.m;
    m.bytes = head[1];
    if (place != nullptr) m.rest = place(ctx, head[1], m.split);
    MAILROOM_ASSERT(m.split <= sizeof m.head && m.split <= head[1]);
    const std::size_t words = (head[1] + 7) / 8;
    if (m.rest != nullptr) {
      // (placed: only the head, below)
    } else if (spare_.capacity >= words) {
      m.words = std::move(spare_.words);
      m.capacity = std::exchange(spare_.capacity, 0);
    } else {
      m.words = std::make_unique_for_overwrite<std::uint64_t[]>(std::max<std::size_t>(words, 1));
      m.capacity = words;
    }
  }
  pending& p = it->second;
  p.arrived += bytes;
  const std::byte* from_bytes = piece + k_piece_head;
  std::uint64_t at = head[2];
  if (p.m.rest == nullptr) {
    std::memcpy(reinterpret_cast<std::byte*>(p.m.words.get()) + at, from_bytes, bytes);
  } else {
    if (at < p.m.split) {
      const std::size_t n = std::min<std::size_t>(bytes, p.m.split - at);
      std::memcpy(reinterpret_cast<std::byte*>(&p.m.head) + at, from_bytes, n);
      at += n;
      from_bytes += n;
      bytes -= n;
    }
    if (bytes > 0) std::memcpy(p.m.rest + (at - p.m.split), from_bytes, bytes);
  }
  if (p.arrived < head[1]) return false;
  whole = std::move(p.m);
  partial_.erase(it);
  return true;
}

void reassembly::recycle(message&& m) noexcept {
  if (m.capacity > spare_.capacity) {
    spare_.words = std::move(m.words);
    spare_.capacity = m.capacity;
  }
}

}  // namespace mailroom::detail
