// SPDX-License-Identifier: MIT
// What the matrix apps' message variants carry per nonzero: two words and, only in a matrix with
// values, the value. A pattern matrix's nonzeros travel in 16 bytes, not 24, as Bale's edge_t and
// w_edge_t do: each variant is a template on whether values travel, chosen once per call.
#pragma once

#include <mailroom/collectives.hpp>
#include <mailroom/sparse_matrix.hpp>

#include <cstdint>
#include <vector>

namespace mailroom::apps {

/// A nonzero on its way; what row and col hold is each variant's.
template <bool Valued>
struct nonzero {
  std::int64_t row, col;
  double value;
};
template <>
struct nonzero<false> {
  std::int64_t row, col;
};

/// Nonzero k of `a` as the words row and col (and its value, if Valued).
template <bool Valued>
nonzero<Valued> nonzero_of(const sparse_matrix& a, std::int64_t k, std::int64_t row,
                           std::int64_t col) {
  if constexpr (Valued)
    return {row, col, a.values()[k]};
  else
    return {row, col};
}

/// e with the words row and col in place of its own (its value kept): a nonzero sent on.
template <bool Valued>
nonzero<Valued> rewritten(nonzero<Valued> e, std::int64_t row, std::int64_t col) {
  e.row = row;
  e.col = col;
  return e;
}

/// Puts e's col (and value) at position `at` of a result's columns (and values).
template <bool Valued>
void place(const nonzero<Valued>& e, std::int64_t at, std::vector<std::int64_t>& cols,
           std::vector<double>& vals) {
  cols[at] = e.col;
  if constexpr (Valued) vals[at] = e.value;
}

/// Whether any PE's part of `a` has values (an empty part has none). Collective.
inline bool any_values(const sparse_matrix& a) { return all_reduce(a.has_values(), max<>{}) != 0; }

}  // namespace mailroom::apps
