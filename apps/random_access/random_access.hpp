// SPDX-License-Identifier: MIT
// HPC Challenge RandomAccess by its rules: a table of 2^k 64-bit words per PE (P a power of two,
// so the whole table is a power of two), word i initialised to its global index i, and 4 x the
// table's size updates in all, table[ran & (size - 1)] ^= ran, with ran from the benchmark's
// 64-bit stream (x -> 2x, xor POLY when the top bit was set), each PE starting at its own point.
// Global index g lives on PE g >> k at offset g & (2^k - 1) (HPCC's block layout). One header
// for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>

namespace mailroom::apps::random_access {

/// The stream's polynomial and period (HPCC's POLY and PERIOD).
inline constexpr std::uint64_t k_poly = 7;
inline constexpr std::int64_t k_period = 1317624576693539401LL;

/// The stream's next value after x.
inline std::uint64_t next(std::uint64_t x) noexcept {
  return (x << 1) ^ (static_cast<std::int64_t>(x) < 0 ? k_poly : 0);
}
/// The stream's n-th value (the first, n = 0, is 1): x^n in GF(2)[x] modulo the polynomial, by
/// squaring, in O(64^2) operations.
std::uint64_t starts(std::int64_t n) noexcept;

struct problem {
  int log_local = 0;           ///< k: 2^k words per PE
  std::int64_t updates = 0;    ///< this PE's updates (HPCC: 4 x 2^k)
  std::int64_t first = 0;      ///< where this PE's part of the stream starts: updates x rank
  std::int64_t lookahead = 0;  ///< at most this many updates held before they are applied (0: any)
  int log_pes = 0;             ///< log2 P

  /// Update `ran`'s owner and offset there.
  [[nodiscard]] int owner(std::uint64_t ran) const noexcept {
    return static_cast<int>((ran >> log_local) & ((std::uint64_t{1} << log_pes) - 1));
  }
  [[nodiscard]] std::uint64_t mask() const noexcept { return (std::uint64_t{1} << log_local) - 1; }
};

// Every variant (but local) applies every PE's updates to the distributed table: afterwards
// word l on PE p holds its global index (p << k | l) xor every ran that hit it, from all PEs.
// Collective: called on every PE. With a lookahead L, the message variants apply their updates
// in rounds of L, each completed everywhere (mailroom::quiesce) before the next is sent.
void naive(const problem& pb, symmetric_array<std::uint64_t> table);     // one-sided atomic xor
void conveyor(const problem& pb, symmetric_array<std::uint64_t> table);  // mailroom::conveyor loop
void selector(const problem& pb, symmetric_array<std::uint64_t> table);  // typed actor messages
void lambda(const problem& pb, symmetric_array<std::uint64_t> table);    // lambda messages
/// Typed messages {offset, ran} to a mailbox that xors the updates of one word together on
/// their way (mailbox_spec::reduce).
void reduce(const problem& pb, symmetric_array<std::uint64_t> table);
/// The same messages to a mailbox that does not reduce (what reduce costs where it misses).
void counted(const problem& pb, symmetric_array<std::uint64_t> table);
/// The floor: the same stream applied to this PE's own table (offset ran & (2^k - 1)), no
/// communication. Afterwards the table holds this PE's own updates only.
void local(const problem& pb, symmetric_array<std::uint64_t> table);

/// Runs `apply(lo, hi)` over this PE's updates [0, updates) in rounds of the lookahead (one
/// round without one). With a lookahead, the updates of a round are applied everywhere before
/// the next round is sent: by mailroom::quiesce() after each round, unless `apply` completes
/// them itself (`completes`: a conveyor's loop ends once every PE's pushes are pulled).
template <class F>
void in_rounds(const problem& pb, F&& apply, bool completes = false) {
  const std::int64_t step = pb.lookahead > 0 ? pb.lookahead : pb.updates;
  for (std::int64_t lo = 0; lo < pb.updates; lo += step) {
    apply(lo, std::min(pb.updates, lo + step));
    if (pb.lookahead > 0 && !completes) quiesce();
  }
}

}  // namespace mailroom::apps::random_access
