// SPDX-License-Identifier: MIT
// Distributions (Active Pebbles' scalable addressing): which PE owns global index g, and where in
// its part. cyclic, block and block_cyclic, or any type that models `distribution`; selectors,
// actors, gather and distributed arrays take one wherever they take a (PE, local index) pair.
#pragma once

#include "mailroom/detail/index_division.hpp"
#include "mailroom/error.hpp"
#include "mailroom/pe.hpp"
#include "mailroom/runtime.hpp"

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace mailroom {

namespace detail {
// A size or PE count that no distribution can have stops the job at the caller's line.
inline void check_distribution(const char* what, std::int64_t n, std::int64_t pes,
                               const source_location& loc) {
  if (MAILROOM_UNLIKELY(n < 0 || pes < 1))
    fail(loc.file_name(), static_cast<int>(loc.line()),
         fmt::format("{}: {} indices over {} PEs (a size of at least 0, at least 1 PE)", what, n,
                     pes));
}
}  // namespace detail

/// Global index g's owner and its local index there.
struct place {
  pe owner;               ///< the PE that holds element g
  std::size_t local = 0;  ///< g's index in the owner's part
};

/// A distribution of global indices [0, size()) over P PEs: owner(g) holds g at local(g), and
/// global(owner(g), local(g)) == g. A user-defined one needs these four members (const, cheap,
/// the same on every PE); it may add locate(g) (owner and local index at once, faster when they
/// share a division), local_size(p) (how many indices PE p holds; otherwise counted) and
/// contiguous(g) (how many indices from g on its owner holds at consecutive local indices:
/// global_array's ranges copy such runs at once; otherwise found index by index).
template <class D>
concept distribution = requires(const D& d, std::int64_t g, pe p, std::size_t l) {
  { d.owner(g) } -> std::convertible_to<pe>;
  { d.local(g) } -> std::convertible_to<std::size_t>;
  { d.global(p, l) } -> std::convertible_to<std::int64_t>;
  { d.size() } -> std::convertible_to<std::int64_t>;
};

/// Where d puts global index g: d.locate(g) if d has it, else {d.owner(g), d.local(g)}.
template <distribution D>
[[nodiscard]] inline place place_of(const D& d, std::int64_t g) noexcept {
  if constexpr (requires {
                  { d.locate(g) } -> std::convertible_to<place>;
                })
    return d.locate(g);
  else
    return {pe(d.owner(g)), static_cast<std::size_t>(d.local(g))};
}

/// How many of d's indices PE p holds: d.local_size(p) if d has it, else counted (a pass over
/// all d.size() indices).
template <distribution D>
[[nodiscard]] std::size_t local_size(const D& d, pe p) {
  if constexpr (requires {
                  { d.local_size(p) } -> std::convertible_to<std::size_t>;
                }) {
    return d.local_size(p);
  } else {
    std::size_t n = 0;
    for (std::int64_t g = 0; g < d.size(); ++g) n += pe(d.owner(g)) == p ? 1 : 0;
    return n;
  }
}

/// Round robin: g on PE g % P at local index g / P. Without a size, unbounded (for addressing
/// only: local_size is then meaningless). P is num_pes() unless given (a team's size, say).
class cyclic {
 public:
  /// Unbounded, over num_pes() PEs.
  cyclic() noexcept : cyclic(std::numeric_limits<std::int64_t>::max(), detail::job_division()) {}
  /// n indices over num_pes() PEs (n < 0 stops the job at the caller's line).
  explicit cyclic(std::int64_t n, source_location loc = source_location::current())
      : cyclic(n, detail::job_division()) {
    detail::check_distribution("cyclic", n, pes_, loc);
  }
  /// n indices over `pes` PEs.
  cyclic(std::int64_t n, int pes, source_location loc = source_location::current())
      : n_(n), pes_(pes) {
    detail::check_distribution("cyclic", n, pes, loc);
    const detail::index_magic by = detail::index_magic_for(pes);
    m_ = by.m;
    s_ = by.s;
  }

  /// The PE that holds g (0 <= g < 2^63, as for every member here; a negative g has PE -1).
  [[nodiscard]] pe owner(std::int64_t g) const noexcept { return locate(g).owner; }
  /// g's index on its owner.
  [[nodiscard]] std::size_t local(std::int64_t g) const noexcept {
    return static_cast<std::size_t>(detail::index_quotient(g, m_, s_));
  }
  /// Owner and local index at once.
  [[nodiscard]] place locate(std::int64_t g) const noexcept {
    if (MAILROOM_UNLIKELY(g < 0)) return {pe(-1), 0};  // (a send there stops at the caller's line)
    const std::int64_t q = detail::index_quotient(g, m_, s_);
    return {pe(g - q * pes_), static_cast<std::size_t>(q)};
  }
  /// The global index at local index l of PE p.
  [[nodiscard]] std::int64_t global(pe p, std::size_t l) const noexcept {
    return static_cast<std::int64_t>(l) * pes_ + p.rank();
  }
  /// The number of global indices.
  [[nodiscard]] std::int64_t size() const noexcept { return n_; }
  /// How many indices PE p holds.
  [[nodiscard]] std::size_t local_size(pe p) const noexcept {
    // (ceil((n - r) / P), written so that an unbounded n cannot overflow)
    return n_ > p.rank() ? static_cast<std::size_t>(local(n_ - p.rank() - 1) + 1) : 0;
  }
  /// Indices from g on that g's owner holds consecutively: g alone (P > 1).
  [[nodiscard]] std::int64_t contiguous(std::int64_t g) const noexcept {
    return pes_ == 1 ? n_ - g : 1;
  }
  /// {owner, local index} as a pair (gather's `where`, before distributions).
  std::pair<pe, std::size_t> operator()(std::int64_t g) const noexcept {
    const place w = locate(g);
    return {w.owner, w.local};
  }

 private:
  // Over num_pes(), whose division the runtime computed (one call: a closure may build a cyclic{}
  // per message).
  cyclic(std::int64_t n, const detail::job_pes& job) noexcept
      : n_(n), m_(job.m), pes_(job.pes), s_(job.s) {}

  std::int64_t n_;
  std::uint64_t m_ = 0;  // division by P (detail::index_magic)
  std::int32_t pes_ = 1;
  std::uint32_t s_ = 0;
};

/// Contiguous blocks: PE p holds [p * b, (p + 1) * b) with b = ceil(size / P) (the last PEs may
/// hold fewer, or none).
class block {
 public:
  /// n indices over num_pes() PEs (n < 0 stops the job at the caller's line).
  explicit block(std::int64_t n, source_location loc = source_location::current())
      : block(n, num_pes(), loc) {}
  /// n indices over `pes` PEs.
  block(std::int64_t n, int pes, source_location loc = source_location::current())
      : n_(n), b_(std::max<std::int64_t>(1, (n + std::max(pes, 1) - 1) / std::max(pes, 1))) {
    detail::check_distribution("block", n, pes, loc);
    const detail::index_magic by = detail::index_magic_for(b_);
    m_ = by.m;
    s_ = by.s;
  }

  /// The PE that holds g (0 <= g < 2^63, as for every member here; a negative g has PE -1).
  [[nodiscard]] pe owner(std::int64_t g) const noexcept { return locate(g).owner; }
  /// g's index on its owner.
  [[nodiscard]] std::size_t local(std::int64_t g) const noexcept { return locate(g).local; }
  /// Owner and local index at once.
  [[nodiscard]] place locate(std::int64_t g) const noexcept {
    if (MAILROOM_UNLIKELY(g < 0)) return {pe(-1), 0};
    const std::int64_t k = detail::index_quotient(g, m_, s_);
    return {pe(k), static_cast<std::size_t>(g - k * b_)};
  }
  /// The global index at local index l of PE p.
  [[nodiscard]] std::int64_t global(pe p, std::size_t l) const noexcept {
    return p.rank() * b_ + static_cast<std::int64_t>(l);
  }
  /// The number of global indices.
  [[nodiscard]] std::int64_t size() const noexcept { return n_; }
  /// How many indices PE p holds.
  [[nodiscard]] std::size_t local_size(pe p) const noexcept {
    return static_cast<std::size_t>(std::clamp<std::int64_t>(n_ - p.rank() * b_, 0, b_));
  }
  /// The block length b.
  [[nodiscard]] std::int64_t block_size() const noexcept { return b_; }
  /// Indices from g on that g's owner holds consecutively: the rest of g's block.
  [[nodiscard]] std::int64_t contiguous(std::int64_t g) const noexcept {
    return std::min(n_, (detail::index_quotient(g, m_, s_) + 1) * b_) - g;
  }

 private:
  std::int64_t n_, b_;
  std::uint64_t m_ = 0;  // division by b (detail::index_magic)
  std::uint32_t s_ = 0;
};

/// Blocks of b dealt round robin (ScaLAPACK's): block k = g / b on PE k % P, at local index
/// (k / P) * b + g % b.
class block_cyclic {
 public:
  /// n indices in blocks of b over num_pes() PEs (b < 1 stops the job).
  block_cyclic(std::int64_t n, std::int64_t b, source_location loc = source_location::current())
      : block_cyclic(n, b, num_pes(), loc) {}
  /// n indices in blocks of b over `pes` PEs.
  block_cyclic(std::int64_t n, std::int64_t b, int pes,
               source_location loc = source_location::current())
      : n_(n), b_(b), pes_(pes) {
    detail::check_distribution("block_cyclic", n, pes, loc);
    if (MAILROOM_UNLIKELY(b < 1))
      detail::fail(loc.file_name(), static_cast<int>(loc.line()),
                   fmt::format("block_cyclic: block size {} (at least 1)", b));
    const detail::index_magic by_b = detail::index_magic_for(b),
                              by_p = detail::index_magic_for(pes);
    m_b_ = by_b.m;
    m_p_ = by_p.m;
    s_b_ = static_cast<std::uint16_t>(by_b.s);
    s_p_ = static_cast<std::uint16_t>(by_p.s);
  }

  /// The PE that holds g (0 <= g < 2^63, as for every member here; a negative g has PE -1).
  [[nodiscard]] pe owner(std::int64_t g) const noexcept { return locate(g).owner; }
  /// g's index on its owner.
  [[nodiscard]] std::size_t local(std::int64_t g) const noexcept { return locate(g).local; }
  /// Owner and local index at once.
  [[nodiscard]] place locate(std::int64_t g) const noexcept {
    if (MAILROOM_UNLIKELY(g < 0)) return {pe(-1), 0};
    const std::int64_t k = detail::index_quotient(g, m_b_, s_b_);  // g's block
    const std::int64_t round = detail::index_quotient(k, m_p_, s_p_);
    return {pe(k - round * pes_), static_cast<std::size_t>(round * b_ + (g - k * b_))};
  }
  /// The global index at local index l of PE p.
  [[nodiscard]] std::int64_t global(pe p, std::size_t l) const noexcept {
    const auto li = static_cast<std::int64_t>(l);
    return ((li / b_) * pes_ + p.rank()) * b_ + li % b_;
  }
  /// The number of global indices.
  [[nodiscard]] std::int64_t size() const noexcept { return n_; }
  /// How many indices PE p holds.
  /// Indices from g on that g's owner holds consecutively: the rest of g's block (the whole
  /// remainder on one PE).
  [[nodiscard]] std::int64_t contiguous(std::int64_t g) const noexcept {
    return pes_ == 1 ? n_ - g : std::min(n_, (detail::index_quotient(g, m_b_, s_b_) + 1) * b_) - g;
  }
  /// How many indices PE p holds.
  [[nodiscard]] std::size_t local_size(pe p) const noexcept {
    // Whole rounds of P blocks, then what the last, partial round gives p.
    const std::int64_t round = b_ * pes_, whole = n_ / round;
    const std::int64_t rest = std::clamp<std::int64_t>(n_ % round - p.rank() * b_, 0, b_);
    return static_cast<std::size_t>(whole * b_ + rest);
  }

 private:
  std::int64_t n_, b_;
  std::uint64_t m_b_ = 0, m_p_ = 0;  // division by b and by P (detail::index_magic)
  std::int32_t pes_ = 1;
  std::uint16_t s_b_ = 0, s_p_ = 0;
};

/// A message to the element at a local index: what send(dist, g, value) delivers to the owner of
/// g, for a mailbox of at<T>. `mailbox<at<double>>([x](const at<double>& m) { x[m.index] +=
/// m.value; })`.
template <class T>
struct at {
  /// The value's type.
  using value_type = T;
  /// The value.
  T value;
  std::uint64_t index;  ///< the local index, as dist.local(g)
};

namespace detail {
template <class T>
inline constexpr bool is_at = false;
template <class T>
inline constexpr bool is_at<at<T>> = true;

/// A lambda message sent by global index (selector::send<I>(d, g, closure)): the closure and the
/// local index, called on the owner as closure(local, from, self), closure(local, from) or
/// closure(local), the first it takes.
template <class L>
struct at_local {
  L closure;
  std::size_t local = 0;
  template <class Sel>
  void operator()(pe from, Sel& self) const {
    if constexpr (std::is_invocable_v<const L&, std::size_t, pe, Sel&>)
      closure(local, from, self);
    else if constexpr (std::is_invocable_v<const L&, std::size_t, pe>)
      closure(local, from);
    else
      closure(local);
  }
};
}  // namespace detail

}  // namespace mailroom
