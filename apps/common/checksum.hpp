// SPDX-License-Identifier: MIT
// The results the apps print as Bale does: checksums of their outputs that depend on every element
// and on its place, not on the order in which they are added up.
#pragma once

#include "common/driver.hpp"

#include <mailroom/mailroom.hpp>
#include <mailroom/sparse_matrix.hpp>

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <string>

namespace mailroom::apps {

/// One element's part of a checksum: value v at place `at` (a sum of these is order-free).
inline std::uint64_t element_hash(std::int64_t at, std::int64_t v) {
  return static_cast<std::uint64_t>(
      mix(static_cast<std::uint64_t>(at), static_cast<std::uint64_t>(v)));
}

/// Collective: every PE's part of a checksum, summed (modulo 2^64), as 16 hex digits.
inline std::string checksum_text(std::uint64_t mine) {
  return fmt::format("{:016x}", all_reduce(mine));
}

/// This PE's part of a matrix checksum: every nonzero (row, column, value) of rows given by
/// `row_of` (local row to the row the checksum names), of CSR arrays.
template <class RowOf>
std::uint64_t matrix_part_hash(const std::vector<std::int64_t>& row_ptr,
                               const std::vector<std::int64_t>& col_idx,
                               const std::vector<double>& values, RowOf row_of) {
  std::uint64_t h = 0;
  for (std::size_t l = 0; l + 1 < row_ptr.size(); ++l)
    for (auto k = static_cast<std::size_t>(row_ptr[l]);
         k < static_cast<std::size_t>(row_ptr[l + 1]); ++k)
      h += element_hash(
          static_cast<std::int64_t>(element_hash(row_of(static_cast<std::int64_t>(l)), col_idx[k])),
          values.empty() ? 0 : std::bit_cast<std::int64_t>(values[k]));
  return h;
}

/// Collective: "nnz N, checksum X" of a distributed matrix (global rows and columns).
inline std::string matrix_result(const sparse_matrix& m) {
  const std::uint64_t mine = matrix_part_hash(m.row_ptr(), m.col_idx(), m.values(),
                                              [&](std::int64_t l) { return m.global_row(l); });
  const std::int64_t nnz = m.global_nnz();
  return fmt::format("nnz {}, checksum {}", nnz, checksum_text(mine));
}

/// Collective: the same over every PE's matrix of its own (the local variants' outputs).
inline std::string matrix_result(const sparse_matrix::serial& mine) {
  const std::uint64_t h =
      matrix_part_hash(mine.row_ptr, mine.col_idx, mine.values, [](std::int64_t l) { return l; });
  const std::int64_t nnz = all_reduce(static_cast<std::int64_t>(mine.col_idx.size()));
  return fmt::format("nnz {}, checksum {}", nnz, checksum_text(h));
}

}  // namespace mailroom::apps
