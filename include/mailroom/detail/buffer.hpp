// SPDX-License-Identifier: MIT
// What inline conveyor code needs of the aggregation layer (the exchange, src/aggregation, is
// not installed): the wire header of a buffer. Not API.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mailroom::detail {

/// Wire header at the start of every aggregation buffer.
struct buffer_header {
  std::uint32_t conveyor;   ///< id of the conveyor (collective creation order)
  std::uint32_t bytes;      ///< bytes used, header included
  std::uint32_t items;      ///< items in the buffer
  std::uint32_t slot;       ///< 0: the sender's own memory; k + 1: its shared slot k (see exchange)
  std::uint32_t signature;  ///< the mailbox's signature on the sender (detail/signature.hpp)
  std::uint32_t flags;      ///< k_end_of_stream | link_flags(class) (keeps items 8-byte aligned)
};
inline constexpr std::size_t k_header_bytes = sizeof(buffer_header);
/// A header-only buffer that ends the sender's stream on its link to the receiver: no items, and
/// after the header the number of items the sender shipped on that link in all (8 bytes).
inline constexpr std::uint32_t k_end_of_stream = 1;
inline constexpr std::size_t k_end_bytes = k_header_bytes + 8;
/// The header flags of a buffer over a link of class `cls` (src/aggregation/routes.hpp), and back.
constexpr std::uint32_t link_flags(std::uint32_t cls) noexcept { return cls << 1; }
constexpr std::uint32_t link_class_of(std::uint32_t flags) noexcept { return (flags >> 1) & 31u; }

}  // namespace mailroom::detail
