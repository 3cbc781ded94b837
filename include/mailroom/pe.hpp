// SPDX-License-Identifier: MIT
// Strong type for a processing element (an MPI rank), so that a PE id cannot be mixed up with a
// local or global index.
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>

#include <fmt/format.h>

namespace mailroom {

/// A processing element: one MPI rank of the job. Cheap to copy; compares like an int.
class pe {
 public:
  constexpr pe() noexcept = default;
  /// PE `rank`, of any integer type (converted to int). Not checked here: a call that takes the
  /// pe stops the job if it is out of range.
  template <std::integral I>
  constexpr explicit pe(I rank) noexcept : rank_(static_cast<int>(rank)) {}

  /// The rank as an int, e.g. to index a per-PE array.
  [[nodiscard]] constexpr int rank() const noexcept { return rank_; }
  /// PEs compare as their ranks.
  friend constexpr auto operator<=>(pe, pe) noexcept = default;

 private:
  int rank_ = 0;
};

}  // namespace mailroom

/// \cond
// (Out of the reference: doxygen cannot place it in fmt, a namespace it does not read.)
template <>
struct fmt::formatter<mailroom::pe> : fmt::formatter<int> {
  auto format(mailroom::pe p, format_context& ctx) const {
    return fmt::formatter<int>::format(p.rank(), ctx);
  }
};
/// \endcond
