// SPDX-License-Identifier: MIT
// Large messages: every PE sends the same payload of --bytes bytes, n times, to the next PE
// (me + 1 mod P), as one message each time: as variable-size bytes (span_of<std::byte>, the floor
// of a message of that size) and as serialised values (mailroom::serialized of a std::string, of
// a std::vector of 64-bit words and of a struct holding that vector, written with cereal). The
// receiving handler folds every byte into a checksum, checked against the sender's payload. One
// header for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mailroom::apps::large_messages {

struct problem {
  std::int64_t messages = 0;         ///< messages per PE
  std::vector<std::uint64_t> words;  ///< this PE's payload as 64-bit words
  std::string text;                  ///< the same bytes as a string
  /// The structs the record variants send, holding the same words (prepare_records): built
  /// before the timed runs, as the other variants send the words above.
  std::shared_ptr<void> records;
};

/// What a PE received: messages, bytes and a checksum of them (the words' sum and their sum
/// weighted by position, so that a piece out of place shows).
struct received {
  std::int64_t messages = 0, bytes = 0;
  std::uint64_t sum = 0, weighted = 0;

  /// Counts one message of `bytes` (a multiple of 8).
  void add(std::span<const std::byte> bytes_in) {
    std::uint64_t s = 0, w = 0;
    const std::size_t n = bytes_in.size() / 8;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t x;
      std::memcpy(&x, bytes_in.data() + i * 8, 8);
      s += x;
      w += x * (i + 1);
    }
    messages += 1;
    bytes += static_cast<std::int64_t>(bytes_in.size());
    sum += s;
    weighted += w;
  }
  bool operator==(const received&) const = default;
};

// Each variant sends pb's payload pb.messages times to the next PE and adds what arrives to r
// (zeroed before each run). Collective: called on every PE.
void span(const problem& pb, received& r);    // span_of<std::byte>
void string(const problem& pb, received& r);  // serialized<std::string>
void vector(const problem& pb, received& r);  // serialized<std::vector<std::uint64_t>>
// serialized<a struct of a number and the words> (the general path: a fresh value each)
void record_of(const problem& pb, received& r);
// the same struct marked reuse_decoded: decoded into the value the mailbox keeps
void kept_record_of(const problem& pb, received& r);
// The structs of record_of and kept_record_of, each holding a copy of words.
std::shared_ptr<void> prepare_records(const std::vector<std::uint64_t>& words);

}  // namespace mailroom::apps::large_messages
