// SPDX-License-Identifier: MIT
// What the matrix apps' message variants carry per nonzero: two words and, only in a matrix with
// values, the value. A pattern matrix's nonzeros travel in 16 bytes, not 24, as Bale's edge_t and
// w_edge_t do: each variant is a template on whether values travel, chosen once per call.
#pragma once

#include <mailroom/collectives.hpp>
#include <mailroom/sparse_matrix.hpp>

#include <cstdint>
#include <numeric>
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

/// Puts e's col (and value) at position `at` of a result's columns (and values). Pointers, so
/// that a handler can capture them by value (kept in registers across its buffer's messages).
template <bool Valued>
void place(const nonzero<Valued>& e, std::int64_t at, std::int64_t* cols, double* vals) {
  cols[at] = e.col;
  if constexpr (Valued) vals[at] = e.value;
}

/// This PE's rows of a `rows` x `cols` result (`local_rows` of them) from the nonzeros that
/// arrived here as {local row, column}: counted per row, then placed, as the floors do (a row's
/// columns in arrival order; the matrix sorts the rows that need it).
template <bool Valued>
sparse_matrix rows_of(std::int64_t rows, std::int64_t cols, std::int64_t local_rows,
                      const std::vector<nonzero<Valued>>& got) {
  std::vector<std::int64_t> ptr(static_cast<std::size_t>(local_rows) + 1);
  for (const nonzero<Valued>& e : got) ++ptr[e.row + 1];
  std::inclusive_scan(ptr.begin(), ptr.end(), ptr.begin());
  std::vector<std::int64_t> fill(ptr.begin(), ptr.end() - 1), col(ptr.back());
  std::vector<double> val(Valued ? ptr.back() : 0);
  for (const nonzero<Valued>& e : got) place(e, fill[e.row]++, col.data(), val.data());
  return {rows, cols, std::move(ptr), std::move(col), std::move(val)};
}

/// Whether any PE's part of `a` has values (an empty part has none). Collective.
inline bool any_values(const sparse_matrix& a) { return all_reduce(a.has_values(), max<>{}) != 0; }

}  // namespace mailroom::apps
