// SPDX-License-Identifier: MIT
// Stencil: K Jacobi iterations of the 5-point stencil on an N x N grid (the 7-point one on N^3),
// its outermost points fixed, rows (planes) in blocks over the PEs, so that every iteration each
// PE needs one row from the PE above and one from the PE below. One header for the variants (each
// in its own file) and the sweep they all run, so that they compute every point alike.
#pragma once

#include <mailroom/mailroom.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace mailroom::apps::stencil {

/// The grid as `rows` rows of `width` points (2-D: N rows of N; 3-D: N planes of N x N), point g
/// in row g / width, rows in blocks over the PEs exactly as mailroom::block(rows) deals indices:
/// PE p holds rows [p * b, min(rows, (p + 1) * b)), b = ceil(rows / P), in row order. (block over
/// every point would split rows between PEs.)
class row_block {
 public:
  row_block(std::int64_t rows, std::int64_t width, source_location loc = source_location::current())
      : rows_(rows, loc), width_(width) {}

  [[nodiscard]] pe owner(std::int64_t g) const noexcept { return rows_.owner(g / width_); }
  [[nodiscard]] std::size_t local(std::int64_t g) const noexcept { return locate(g).local; }
  [[nodiscard]] place locate(std::int64_t g) const noexcept {
    const std::int64_t r = g / width_;
    const place p = rows_.locate(r);
    return {p.owner,
            p.local * static_cast<std::size_t>(width_) + static_cast<std::size_t>(g - r * width_)};
  }
  [[nodiscard]] std::int64_t global(pe p, std::size_t l) const noexcept {
    const auto w = static_cast<std::size_t>(width_);
    return rows_.global(p, l / w) * width_ + static_cast<std::int64_t>(l % w);
  }
  [[nodiscard]] std::int64_t size() const noexcept { return rows_.size() * width_; }
  [[nodiscard]] std::size_t local_size(pe p) const noexcept {
    return rows_.local_size(p) * static_cast<std::size_t>(width_);
  }
  /// Points from g on that g's owner holds consecutively: the rest of its rows.
  [[nodiscard]] std::int64_t contiguous(std::int64_t g) const noexcept {
    return rows_.contiguous(g / width_) * width_ - g % width_;
  }
  /// The rows' distribution.
  [[nodiscard]] const block& rows() const noexcept { return rows_; }

 private:
  block rows_;
  std::int64_t width_;
};

/// A grid of the global view (the global variant reads the halos through it; the others use the
/// same memory, this PE's part, as a plain array).
using grid = global_array<double, row_block>;

struct problem {
  int dims = 2;                       ///< 2: 5-point on N x N; 3: 7-point on N^3
  std::int64_t n = 0;                 ///< N, the grid's side
  std::int64_t iterations = 0;        ///< K
  std::int64_t rows = 0, width = 0;   ///< N rows (planes) of N (N x N) points
  std::int64_t first = 0, count = 0;  ///< this PE's rows [first, first + count) (count may be 0)
  /// The rows next to this PE's block at their initial values (the local variant's fixed halos).
  std::vector<double> fixed_above, fixed_below;

  /// Whether this PE exchanges rows with PE me - 1 (which holds row first - 1).
  [[nodiscard]] bool has_above() const noexcept { return count > 0 && first > 0; }
  /// Whether this PE exchanges rows with PE me + 1 (which holds row first + count).
  [[nodiscard]] bool has_below() const noexcept { return count > 0 && first + count < rows; }
};

/// New values of the interior points of a row (not the grid's first or last) from its old values
/// `mid` and those of the rows before and after it; the row's own boundary points are left as
/// they are in `out`. Every variant and the checker's serial reference compute each point with
/// this code, so that all agree bit for bit.
inline void update_row(const problem& pb, const double* up, const double* mid, const double* down,
                       double* out) noexcept {
  const std::int64_t n = pb.n;
  if (pb.dims == 2) {
    for (std::int64_t j = 1; j < n - 1; ++j)
      out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
    return;
  }
  for (std::int64_t y = 1; y < n - 1; ++y) {
    const std::int64_t at = y * n;
    for (std::int64_t x = at + 1; x < at + n - 1; ++x)
      out[x] = (up[x] + down[x] + mid[x - n] + mid[x + n] + mid[x - 1] + mid[x + 1]) / 6.0;
  }
}

/// Updates this PE's rows [lo, hi) (numbered from its first) of `to` from `from`, whose row
/// before the first is `above` and after the last `below`; the grid's first and last rows stay.
inline void sweep(const problem& pb, const double* from, double* to, std::int64_t lo,
                  std::int64_t hi, const double* above, const double* below) noexcept {
  const std::int64_t w = pb.width;
  for (std::int64_t l = lo; l < hi; ++l) {
    const std::int64_t r = pb.first + l;
    if (r == 0 || r == pb.rows - 1) continue;
    const double* up = l == 0 ? above : from + (l - 1) * w;
    const double* down = l == pb.count - 1 ? below : from + (l + 1) * w;
    update_row(pb, up, from + l * w, down, to + l * w);
  }
}
/// The rows that need no other PE's: all but this PE's first and last.
inline void sweep_inner(const problem& pb, const double* from, double* to) noexcept {
  sweep(pb, from, to, 1, pb.count - 1, nullptr, nullptr);
}
/// This PE's first and last rows, with the rows next to them.
inline void sweep_edges(const problem& pb, const double* from, double* to, const double* above,
                        const double* below) noexcept {
  sweep(pb, from, to, 0, std::min<std::int64_t>(pb.count, 1), above, below);
  if (pb.count > 1) sweep(pb, from, to, pb.count - 1, pb.count, above, below);
}

// Every variant runs pb.iterations sweeps of the grid from `a` (this PE's part holding the
// initial values, boundary included, in both grids) into `b` and back: the result is in `a` after
// an even number of iterations, else in `b`. Collective: called on every PE.
void global(const problem& pb, grid& a, grid& b);    // halos read through the global view
void selector(const problem& pb, grid& a, grid& b);  // halos as variable-size actor messages
void mpi(const problem& pb, grid& a, grid& b);       // halos by MPI_Isend / MPI_Irecv
/// The floor: the same sweeps of this PE's block alone, the rows next to it kept at their initial
/// values (pb.fixed_above, pb.fixed_below). Its result differs from the others'.
void local(const problem& pb, grid& a, grid& b);

}  // namespace mailroom::apps::stencil
