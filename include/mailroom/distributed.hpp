// SPDX-License-Identifier: MIT
// A distributed array: a global array of T laid out over the PEs by a distribution, each PE's
// part in symmetric memory, read and written by global index through one-sided operations.
#pragma once

#include "mailroom/distribution.hpp"
#include "mailroom/gather.hpp"
#include "mailroom/symmetric.hpp"

#include <algorithm>
#include <cstdint>
#include <span>

namespace mailroom {

/// d.size() elements of T, element g on PE d.owner(g) at d.local(g). A handle: trivially
/// copyable when D is (cyclic, block and block_cyclic are), so lambda messages may capture it.
/// Construction is collective (a symmetric allocation of the largest part on every PE, zeroed);
/// D must place indices over exactly num_pes() PEs. The element operations are
/// symmetric_array's, addressed by global index (atomics on integer T only).
template <class T, distribution D = cyclic>
class distributed {
 public:
  distributed() = default;
  /// Collective: the array of d.size() elements under d.
  explicit distributed(const D& d, source_location loc = source_location::current())
      : d_(d), part_(largest_part(d), loc) {}

  /// The distribution.
  [[nodiscard]] const D& dist() const noexcept { return d_; }
  /// The global index count, d.size().
  [[nodiscard]] std::int64_t size() const noexcept { return d_.size(); }
  /// Where element g lives.
  [[nodiscard]] place place_of(std::int64_t g) const noexcept { return mailroom::place_of(d_, g); }
  /// Every PE's part (its room is the largest part's size; this PE uses local_size() of it).
  [[nodiscard]] symmetric_array<T> parts() const noexcept { return part_; }
  /// This PE's part: its elements by local index.
  [[nodiscard]] std::span<T> local() const {
    return {part_.data(), mailroom::local_size(d_, this_pe())};
  }

  /// Collective: releases every PE's part, as for a symmetric_array; `a` becomes empty.
  friend void symmetric_free(distributed& a) { symmetric_free(a.part_); }

  /// Element g (wherever it lives; one-sided).
  [[nodiscard]] T get(std::int64_t g) const {
    return at(g, [&](pe o, auto l) { return part_.get(o, l); });
  }
  /// Sets element g to v.
  void put(std::int64_t g, const T& v) const {
    at(g, [&](pe o, auto l) { part_.put(o, l, v); });
  }
  /// Element g, non-blocking.
  [[nodiscard]] future<T> get_async(std::int64_t g) const {
    return at(g, [&](pe o, auto l) { return part_.get_async(o, l); });
  }
  /// Sets element g to v, non-blocking (v is copied at once).
  [[nodiscard]] future<void> put_async(std::int64_t g, const T& v) const {
    return at(g, [&](pe o, auto l) { return part_.put_async(o, l, v); });
  }
  /// Adds v to element g atomically; returns the old value.
  T fetch_add(std::int64_t g, T v) const {
    return at(g, [&](pe o, auto l) { return part_.fetch_add(o, l, v); });
  }
  /// Adds v to element g atomically.
  void add(std::int64_t g, T v) const {
    at(g, [&](pe o, auto l) { part_.add(o, l, v); });
  }
  /// Sets element g to v atomically; returns the old value.
  T swap(std::int64_t g, T v) const {
    return at(g, [&](pe o, auto l) { return part_.swap(o, l, v); });
  }
  /// If element g equals expected, sets it to desired; returns the old value either way.
  T compare_exchange(std::int64_t g, T expected, T desired) const {
    return at(g, [&](pe o, auto l) { return part_.compare_exchange(o, l, expected, desired); });
  }
  /// Element g, read atomically.
  [[nodiscard]] T load(std::int64_t g) const {
    return at(g, [&](pe o, auto l) { return part_.load(o, l); });
  }
  /// Sets element g to v atomically.
  void store(std::int64_t g, T v) const {
    at(g, [&](pe o, auto l) { part_.store(o, l, v); });
  }

 private:
  static std::size_t largest_part(const D& d) {
    std::size_t most = 0;
    for (int p = 0; p < num_pes(); ++p) most = std::max(most, mailroom::local_size(d, pe(p)));
    return most;
  }
  // Applies op to g's place, after checking g against the size (at the caller's line, through
  // symmetric_array's own check of the local index).
  template <class Op>
  decltype(auto) at(std::int64_t g, Op&& op) const {
    MAILROOM_CHECK(g >= 0 && g < d_.size(), "distributed: global index {} outside [0, {})", g,
                   d_.size());
    const place p = mailroom::place_of(d_, g);
    return op(p.owner, p.local);
  }

  D d_;
  symmetric_array<T> part_;
};

/// gather() from a distributed array: out[k] = element indices[k] of `table`.
template <class T, class D, class I>
void gather(const distributed<T, D>& table, std::span<const I> indices, std::span<T> out) {
  gather(table.parts(), indices, out, table.dist());
}
/// gather_async() from a distributed array.
template <class T, class D, class I>
[[nodiscard]] future<void> gather_async(const distributed<T, D>& table, std::span<const I> indices,
                                        std::span<T> out) {
  return gather_async(table.parts(), indices, out, table.dist());
}

}  // namespace mailroom
